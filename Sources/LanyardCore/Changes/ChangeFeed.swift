import Foundation
import LanyardStore
import LanyardSupport

/// A place in an account's change feed, as apps hold it: the decimal text of the feed's sequence number (0 before
/// the first change). Opaque to apps; a cursor that does not parse, or that is past the feed's end (a feed this
/// server never issued, such as one of a database restored from an older backup), is refused as
/// `resync_required`: the app starts again from the beginning.
public struct FeedCursor: Sendable, Equatable, Comparable {
    public static let start = FeedCursor(sequence: 0)

    public let sequence: Int64

    public init(sequence: Int64) {
        self.sequence = sequence
    }

    /// `nil` for text no feed issued.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let sequence = Int64(text) else { return nil }
        self.sequence = sequence
    }

    public var text: String { String(sequence) }

    public static func < (lhs: FeedCursor, rhs: FeedCursor) -> Bool { lhs.sequence < rhs.sequence }
}

/// One change of the feed (reference section 13): the record as the data store shows it, with the scope it came from.
/// `group_id` and `shared_by` are null for the account's own records.
public struct FeedChange: JSONWritable, Sendable {
    public let record: RecordView
    public let cursor: FeedCursor

    init(_ row: RecordRow) {
        record = RecordView(row)
        cursor = FeedCursor(sequence: row.feedSequence)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("collection"); json.string(record.collection)
            json.key("id"); json.string(record.id)
            json.key("version"); json.integer(record.version)
            json.key("updated_at"); json.date(record.updatedAt)
            json.key("deleted"); json.bool(record.deleted)
            json.key("data"); json.raw(json: record.data)
            json.key("group_id"); json.string(nil)
            json.key("shared_by"); json.string(nil)
        }
    }
}

/// `GET /v1/changes`: `{"changes", "next_cursor", "has_more"}`.
public struct FeedPage: JSONWritable, Sendable {
    public let changes: [FeedChange]
    public let nextCursor: FeedCursor
    public let hasMore: Bool

    public init(changes: [FeedChange], nextCursor: FeedCursor, hasMore: Bool) {
        (self.changes, self.nextCursor, self.hasMore) = (changes, nextCursor, hasMore)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("changes"); json.array(changes) { $0.value($1) }
            json.key("next_cursor"); json.string(nextCursor.text)
            json.key("has_more"); json.bool(hasMore)
        }
    }
}

/// Reads an account's change feed: every committed change to records it can read, in commit order, none twice.
/// The feed is the truth; streams and long-polls are only faster ways to read it.
public struct ChangeFeed: Sendable {
    public static let defaultPageSize = 100
    public static let maximumPageSize = 500

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// `since` as an app sent it: absent or empty is the beginning; anything else must be a cursor this feed issued.
    public static func cursor(_ text: String?) throws -> FeedCursor {
        guard let text, !text.isEmpty else { return .start }
        guard let cursor = FeedCursor(text) else { throw LanyardError.resyncRequired }
        return cursor
    }

    public static func pageSize(_ limit: Int?) throws -> Int {
        let size = limit ?? defaultPageSize
        guard (1...maximumPageSize).contains(size) else {
            throw LanyardError.invalidRequest(field: "limit", "limit must be from 1 to \(maximumPageSize)")
        }
        return size
    }

    /// The changes after `cursor`, oldest first, at most `limit`. A cursor past the feed's end was not issued by
    /// this feed: `resync_required`.
    public func page(userID: String, after cursor: FeedCursor, limit: Int) async throws -> FeedPage {
        let rows = try await dependencies.database.read { connection in
            let records = RecordStore(connection)
            let rows = try await records.feed(ownerID: userID, after: cursor.sequence, limit: limit + 1)
            if rows.isEmpty, cursor.sequence > 0, try await records.lastFeedSequence(ownerID: userID) < cursor.sequence {
                return nil as [RecordRow]?
            }
            return rows
        }
        guard let rows else { throw LanyardError.resyncRequired }
        let page = rows.prefix(limit).map(FeedChange.init)
        return FeedPage(changes: page, nextCursor: page.last?.cursor ?? cursor, hasMore: rows.count > limit)
    }
}
