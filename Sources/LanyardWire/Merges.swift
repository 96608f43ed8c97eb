import Foundation

/// Which account survives a merge: the signed-in one (`current`) or the one the person just proved (`other`).
///
/// ```swift
/// try await client.merge(proving: signInToOther, keep: .other)
/// ```
public enum MergeKeep: String, Sendable, Codable, CaseIterable {
    case current, other
}

/// Whose record wins where both accounts have one with the same collection and id.
///
/// ```swift
/// try await client.merge(proving: signInToOther, onConflict: .current)
/// ```
public enum MergeConflictRule: String, Sendable, Codable, CaseIterable {
    /// The one written last (the surviving account's on a tie).
    case newer
    /// The signed-in account's.
    case current
    /// The proved account's.
    case other
}

/// Whose version of a record won a clash, in the request's words.
public enum MergeWinner: String, Sendable, Codable {
    /// The signed-in account's.
    case current
    /// The proved account's.
    case other
}

/// What a merge did (or, with `dryRun`, would do): the answer of `POST /v1/users/me/merge` and of an operator's
/// merge (reference section 15).
///
/// ```swift
/// let result = try await client.merge(proving: signInToOther, dryRun: true)
/// confirmText = "\(result.recordsMoved) items will move; \(result.conflicts.count) were edited on both"
/// ```
public struct MergeResult: Sendable, Codable, Equatable {
    /// A record both accounts had, and whose version won.
    public struct Conflict: Sendable, Codable, Equatable {
        public var collection: String
        public var id: String
        /// The group whose record it was; `nil` for the accounts' own records.
        public var groupID: String?
        public var winner: MergeWinner

        /// A clash.
        ///
        /// ```swift
        /// let clash = MergeResult.Conflict(collection: "notes", id: "n1", winner: .other)
        /// ```
        public init(collection: String, id: String, groupID: String? = nil, winner: MergeWinner) {
            (self.collection, self.id, self.groupID, self.winner) = (collection, id, groupID, winner)
        }

        enum CodingKeys: String, CodingKey { case collection, id, winner, groupID = "group_id" }

        /// `group_id` always, `null` for the accounts' own records.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(collection, forKey: .collection)
            try container.encode(id, forKey: .id)
            try container.encode(groupID, forKey: .groupID)
            try container.encode(winner, forKey: .winner)
        }
    }

    /// The merge's id (`nil` for a dry run).
    public var mergeID: String?
    /// The account that remains.
    public var into: User.ID
    /// The account merged into it.
    public var from: User.ID
    /// Providers whose sign-in moved to the account that remains.
    public var identitiesMoved: [String] = []
    /// Providers let go (`release`).
    public var identitiesReleased: [String] = []
    /// How many records moved.
    public var recordsMoved = 0
    /// Records both had.
    public var conflicts: [Conflict] = []
    /// Groups whose memberships moved.
    public var groups: [String] = []
    /// Whether nothing was changed.
    public var dryRun = false
    /// The surviving account's session for this device, when the request kept the other account.
    public var session: SessionResponse?

    /// An empty report of a merge of `from` into `into`.
    ///
    /// ```swift
    /// var result = MergeResult(mergeID: "m1", into: survivor, from: absorbed)
    /// ```
    public init(mergeID: String?, into: User.ID, from: User.ID) {
        (self.mergeID, self.into, self.from) = (mergeID, into, from)
    }

    enum CodingKeys: String, CodingKey {
        case into, from, conflicts, groups, session
        case mergeID = "merge_id", identitiesMoved = "identities_moved", identitiesReleased = "identities_released"
        case recordsMoved = "records_moved", dryRun = "dry_run"
    }

    /// Every member, `merge_id: null` for a dry run; `session` only when there is one.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mergeID, forKey: .mergeID)
        try container.encode(into, forKey: .into)
        try container.encode(from, forKey: .from)
        try container.encode(identitiesMoved, forKey: .identitiesMoved)
        try container.encode(identitiesReleased, forKey: .identitiesReleased)
        try container.encode(recordsMoved, forKey: .recordsMoved)
        try container.encode(conflicts, forKey: .conflicts)
        try container.encode(groups, forKey: .groups)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encodeIfPresent(session, forKey: .session)
    }
}

/// `POST /v1/users/me/merge/challenge`: a single-use nonce for the other account's sign-in sheet.
///
/// ```swift
/// let challenge = try WireCoding.decoder().decode(MergeChallenge.self, from: data)
/// ```
public struct MergeChallenge: Sendable, Codable, Equatable {
    public var nonce: String
    /// Seconds it stays usable.
    public var expiresIn: Int

    /// A challenge.
    ///
    /// ```swift
    /// let challenge = MergeChallenge(nonce: "…", expiresIn: 300)
    /// ```
    public init(nonce: String, expiresIn: Int) { (self.nonce, self.expiresIn) = (nonce, expiresIn) }

    enum CodingKeys: String, CodingKey { case nonce, expiresIn = "expires_in" }
}

/// The body of `POST /v1/users/me/merge`.
///
/// ```swift
/// let body = MergeBody(proof: .init(provider: "google", idToken: token), keep: .other)
/// ```
public struct MergeBody: Sendable, Codable, Equatable {
    /// The other account's sign-in: an ID token carrying this session's challenge nonce, the code of an email flow
    /// this device started (single-use and bound to its `flow_secret`, it needs no challenge), or a passkey's
    /// assertion.
    public typealias Proof = IdentityProof

    public var proof: Proof
    public var keep: MergeKeep
    public var onConflict: MergeConflictRule
    /// Providers whose identity of the absorbed account may be let go where both accounts have one.
    public var release: [String]
    public var dryRun: Bool

    /// A body.
    public init(proof: Proof, keep: MergeKeep = .current, onConflict: MergeConflictRule = .newer, release: [String] = [],
                dryRun: Bool = false) {
        (self.proof, self.keep, self.onConflict, self.release, self.dryRun) = (proof, keep, onConflict, release, dryRun)
    }

    enum CodingKeys: String, CodingKey {
        case proof, keep, release, onConflict = "on_conflict", dryRun = "dry_run"
    }
}

/// The body of `POST /v1/admin/merges`: an operator's merge of `from` into `into`.
///
/// ```swift
/// let body = AdminMergeBody(into: kept, from: absorbed)
/// ```
public struct AdminMergeBody: Sendable, Codable, Equatable {
    public var into: String
    public var from: String

    /// A body.
    public init(into: String, from: String) { (self.into, self.from) = (into, from) }
}

/// One merge as an operator lists it (`GET /v1/admin/merges?user_id=`).
public struct MergeSummary: Sendable, Codable, Equatable {
    public var mergeID: String
    public var into: String
    public var from: String
    /// `guest` or `full`.
    public var kind: String
    /// The requesting account, or `admin`.
    public var actor: String
    public var createdAt: Date
    public var revertedAt: Date?
    /// The report it answered.
    public var report: MergeResult

    /// A summary.
    public init(mergeID: String, into: String, from: String, kind: String, actor: String, createdAt: Date,
                revertedAt: Date?, report: MergeResult) {
        (self.mergeID, self.into, self.from, self.kind, self.actor) = (mergeID, into, from, kind, actor)
        (self.createdAt, self.revertedAt, self.report) = (createdAt, revertedAt, report)
    }

    enum CodingKeys: String, CodingKey {
        case into, from, kind, actor, report
        case mergeID = "merge_id", createdAt = "created_at", revertedAt = "reverted_at"
    }

    /// `reverted_at` always, `null` for a merge that stands.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mergeID, forKey: .mergeID)
        try container.encode(into, forKey: .into)
        try container.encode(from, forKey: .from)
        try container.encode(kind, forKey: .kind)
        try container.encode(actor, forKey: .actor)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(revertedAt, forKey: .revertedAt)
        try container.encode(report, forKey: .report)
    }
}

/// `GET /v1/admin/merges?user_id=`: the merges an account took part in, newest first.
public struct MergeList: Sendable, Codable, Equatable {
    public var merges: [MergeSummary]

    /// A list.
    public init(merges: [MergeSummary]) { self.merges = merges }
}

/// `POST /v1/admin/merges/{merge_id}/revert`: what came back.
public struct RevertResult: Sendable, Codable, Equatable {
    public var mergeID: String
    public var into: String
    public var from: String
    public var identitiesReturned = 0
    public var recordsReturned = 0
    /// Records the survivor changed since the merge: they stay with it.
    public var recordsKept = 0

    /// An empty result.
    public init(mergeID: String, into: String, from: String) { (self.mergeID, self.into, self.from) = (mergeID, into, from) }

    enum CodingKeys: String, CodingKey {
        case into, from
        case mergeID = "merge_id", identitiesReturned = "identities_returned", recordsReturned = "records_returned"
        case recordsKept = "records_kept"
    }
}

/// A version that lost a clash in a merge, kept 30 days with it.
public struct LosingVersion: Sendable, Codable, Equatable {
    public var collection: String
    public var id: String
    /// The account whose version it was.
    public var accountID: String
    public var version: Int
    public var updatedAt: Date
    public var deleted: Bool
    /// The record's data as JSON text; `nil` for a tombstone.
    public var data: String?

    /// A losing version.
    public init(collection: String, id: String, accountID: String, version: Int, updatedAt: Date, deleted: Bool,
                data: String?) {
        (self.collection, self.id, self.accountID, self.version) = (collection, id, accountID, version)
        (self.updatedAt, self.deleted, self.data) = (updatedAt, deleted, data)
    }

    enum CodingKeys: String, CodingKey {
        case collection, id, version, deleted
        case accountID = "account_id", updatedAt = "updated_at", data
    }

    /// `data` as the record's JSON itself (not a string), `null` for a tombstone.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(collection, forKey: .collection)
        try container.encode(id, forKey: .id)
        try container.encode(accountID, forKey: .accountID)
        try container.encode(version, forKey: .version)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(deleted, forKey: .deleted)
        try container.encode(data.flatMap { try? JSONDecoder().decode(JSONText.self, from: Data($0.utf8)) }, forKey: .data)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        collection = try container.decode(String.self, forKey: .collection)
        id = try container.decode(String.self, forKey: .id)
        accountID = try container.decode(String.self, forKey: .accountID)
        version = try container.decode(Int.self, forKey: .version)
        updatedAt = try container.decode(Date.self, forKey: .updatedAt)
        deleted = try container.decode(Bool.self, forKey: .deleted)
        data = try container.decodeIfPresent(JSONText.self, forKey: .data)?.text
    }
}

/// `GET /v1/users/me/merges/{merge_id}`: the report as it was answered, and the versions that lost a clash (kept
/// 30 days; after a revert, only the caller's own).
public struct MergeDetails: Sendable, Codable, Equatable {
    public var report: MergeResult
    public var createdAt: Date
    public var revertedAt: Date?
    public var losingVersions: [LosingVersion]

    /// Details.
    public init(report: MergeResult, createdAt: Date, revertedAt: Date?, losingVersions: [LosingVersion]) {
        (self.report, self.createdAt, self.revertedAt, self.losingVersions) = (report, createdAt, revertedAt, losingVersions)
    }

    enum CodingKeys: String, CodingKey {
        case report, createdAt = "created_at", revertedAt = "reverted_at", losingVersions = "losing_versions"
    }

    /// `reverted_at` always, `null` for a merge that stands.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(report, forKey: .report)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(revertedAt, forKey: .revertedAt)
        try container.encode(losingVersions, forKey: .losingVersions)
    }
}
