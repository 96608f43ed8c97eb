import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

/// What a full merge did (or, for a dry run, would do): `{"merge_id", "into", "from", "identities_moved",
/// "records_moved", "conflicts", "groups", "dry_run"}`, and `session` when the survivor is the other account.
public struct MergeReport: JSONWritable, Sendable {
    public struct Conflict: Sendable, Equatable {
        public var collection: String
        public var id: String
        /// `current` or `other`: whose version won, in the request's words.
        public var winner: String
    }

    public var mergeID: String
    public var into: String
    public var from: String
    public var identitiesMoved: [String] = []
    public var identitiesReleased: [String] = []
    public var recordsMoved = 0
    public var conflicts: [Conflict] = []
    public var groups: [String] = []
    public var dryRun = false
    /// The survivor's session, when the request kept the other account (the device adopts it).
    public var session: IssuedSession?
    /// An earlier merge's stored report, answered again as it was (a retry after a lost answer).
    var replayed: [String: JSONValue]?

    public func write(to writer: inout JSONWriter) {
        if let replayed {
            writer.object { json in
                for key in replayed.keys.sorted() {
                    json.key(key); json.json(replayed[key]!)
                }
                if let session { json.key("session"); json.value(session) }
            }
            return
        }
        writer.object { json in
            json.key("merge_id"); json.string(dryRun ? nil : mergeID)
            json.key("into"); json.string(into)
            json.key("from"); json.string(from)
            json.key("identities_moved"); json.strings(identitiesMoved)
            json.key("identities_released"); json.strings(identitiesReleased)
            json.key("records_moved"); json.integer(Int64(recordsMoved))
            json.key("conflicts"); json.array(conflicts) { json, conflict in
                json.object { entry in
                    entry.key("collection"); entry.string(conflict.collection)
                    entry.key("id"); entry.string(conflict.id)
                    entry.key("group_id"); entry.string(nil)
                    entry.key("winner"); entry.string(conflict.winner)
                }
            }
            json.key("groups"); json.strings(groups)
            json.key("dry_run"); json.bool(dryRun)
            if let session { json.key("session"); json.value(session) }
        }
    }

    /// The report as stored with the merge, without the session.
    var stored: String {
        var copy = self
        copy.session = nil
        return String(decoding: JSONWriter.write(copy), as: UTF8.self)
    }
}

/// `GET /v1/users/me/merges/{merge_id}`: the report as it was answered, and the versions that lost a clash (kept
/// 30 days).
public struct MergeDetails: JSONWritable, Sendable {
    public var report: String
    public var createdAt: Date
    public var revertedAt: Date?
    public var losers: [MergeLoserRow]

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("report"); json.raw(json: report)
            json.key("created_at"); json.date(createdAt)
            json.key("reverted_at"); json.date(revertedAt)
            json.key("losing_versions"); json.array(losers) { json, loser in
                json.object { entry in
                    entry.key("collection"); entry.string(loser.collection)
                    entry.key("id"); entry.string(loser.recordID)
                    entry.key("account_id"); entry.string(loser.accountID)
                    entry.key("version"); entry.integer(loser.version)
                    entry.key("updated_at"); entry.date(loser.updatedAt)
                    entry.key("deleted"); entry.bool(loser.deleted)
                    entry.key("data"); entry.raw(json: loser.data)
                }
            }
        }
    }
}
