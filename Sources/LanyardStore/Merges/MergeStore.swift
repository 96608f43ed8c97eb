import Foundation

public struct MergeChallengeRow: Sendable, Equatable {
    public var id: String
    public var sessionID: String
    /// The nonce the app hands the provider's sign-in sheet: single use, short-lived, bound to its session.
    public var nonce: String
    public var expiresAt: Date
    public var usedAt: Date?

    init(row: SQLRow) throws {
        id = try row.string("id")
        sessionID = try row.string("session_id")
        nonce = try row.string("nonce")
        expiresAt = try row.date("expires_at")
        usedAt = try row.optionalDate("used_at")
    }
}

public struct MergeRow: Sendable, Equatable {
    public var id: String
    public var intoID: String
    public var fromID: String
    public var kind: String
    public var actor: String
    public var createdAt: Date
    /// The merge's report as JSON text, as it was answered.
    public var report: String
    /// What a revert needs (JSON text): the identities and records the merge moved.
    public var undo: String
    public var revertedAt: Date?
    /// The account and session that asked for it (a person's merge), and the hash of its request's body.
    public var requestedBy: String?
    public var requestedSession: String?
    public var idempotencyKey: String?
    public var requestHash: String?
    /// The survivor's session the merge opened for the requesting device (`keep: other`).
    public var openedSession: String?

    init(row: SQLRow) throws {
        id = try row.string("id")
        intoID = try row.string("into_id")
        fromID = try row.string("from_id")
        kind = try row.string("kind")
        actor = try row.string("actor")
        createdAt = try row.date("created_at")
        report = try row.string("report")
        undo = try row.string("undo")
        revertedAt = try row.optionalDate("reverted_at")
        requestedBy = try row.optionalString("requested_by")
        requestedSession = try row.optionalString("requested_session")
        idempotencyKey = try row.optionalString("idempotency_key")
        requestHash = try row.optionalString("request_hash")
        openedSession = try row.optionalString("opened_session")
    }
}

/// A merge as it is first written.
public struct MergeRowDraft: Sendable {
    public var id: String
    public var into: String
    public var from: String
    public var kind: String
    public var actor: String
    public var requestedBy: String?
    public var requestedSession: String?
    public var idempotencyKey: String?
    public var proofKey: String?
    public var requestHash: String?
    public var at: Date
    public var report: String
    public var undo: String

    public init(id: String, into: String, from: String, kind: String, actor: String, requestedBy: String?,
                requestedSession: String?, idempotencyKey: String?, proofKey: String?, requestHash: String?, at: Date,
                report: String, undo: String) {
        (self.id, self.into, self.from, self.kind, self.actor) = (id, into, from, kind, actor)
        (self.requestedBy, self.requestedSession, self.idempotencyKey) = (requestedBy, requestedSession, idempotencyKey)
        (self.proofKey, self.requestHash, self.at, self.report, self.undo) = (proofKey, requestHash, at, report, undo)
    }
}

/// A version that lost a clash in a merge, kept with the merge for 30 days.
public struct MergeLoserRow: Sendable, Equatable {
    public var collection: String
    public var recordID: String
    /// The account whose version it was.
    public var accountID: String
    public var version: Int64
    public var updatedAt: Date
    public var deleted: Bool
    public var data: String?

    public init(collection: String, recordID: String, accountID: String, version: Int64, updatedAt: Date, deleted: Bool,
                data: String?) {
        (self.collection, self.recordID, self.accountID, self.version) = (collection, recordID, accountID, version)
        (self.updatedAt, self.deleted, self.data) = (updatedAt, deleted, data)
    }

    init(row: SQLRow) throws {
        collection = try row.string("collection")
        recordID = try row.string("record_id")
        accountID = try row.string("account_id")
        version = try row.integer("version")
        updatedAt = try row.date("updated_at")
        deleted = try row.bool("deleted")
        data = try row.optionalString("data")
    }
}

/// The `merge_challenges`, `merges` and `merge_losers` tables (reference section 15).
public struct MergeStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func insertChallenge(id: String, sessionID: String, nonce: String, at date: Date, expiresAt: Date) async throws {
        try await connection.query("""
            INSERT INTO merge_challenges (id, session_id, nonce, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
            """, [.text(id), .text(sessionID), .text(nonce), .date(date), .date(expiresAt)])
    }

    /// The session's challenges that are unused and unexpired at `now`, newest first.
    public func openChallenges(sessionID: String, at now: Date) async throws -> [MergeChallengeRow] {
        try await connection.query("""
            SELECT * FROM merge_challenges WHERE session_id = $1 AND used_at IS NULL AND expires_at > $2
            ORDER BY created_at DESC, id DESC LIMIT 20
            """, [.text(sessionID), .date(now)]).map(MergeChallengeRow.init(row:))
    }

    /// One challenge, if it is still unused and unexpired at `now`, locked for its single use.
    public func openChallenge(id: String, at now: Date) async throws -> MergeChallengeRow? {
        try await connection.first("""
            SELECT * FROM merge_challenges WHERE id = $1 AND used_at IS NULL AND expires_at > $2\(connection.dialect.forUpdate)
            """, [.text(id), .date(now)]).map(MergeChallengeRow.init(row:))
    }

    public func useChallenge(id: String, at date: Date) async throws {
        try await connection.query("UPDATE merge_challenges SET used_at = $2 WHERE id = $1", [.text(id), .date(date)])
    }

    public func insertMerge(_ merge: MergeRowDraft) async throws {
        try await connection.query("""
            INSERT INTO merges (id, into_id, from_id, kind, actor, requested_by, requested_session, idempotency_key,
                                proof_key, request_hash, created_at, report, undo)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            """, [.text(merge.id), .text(merge.into), .text(merge.from), .text(merge.kind), .text(merge.actor),
                  .optionalText(merge.requestedBy), .optionalText(merge.requestedSession),
                  .optionalText(merge.idempotencyKey), .optionalText(merge.proofKey), .optionalText(merge.requestHash),
                  .date(merge.at), .text(merge.report), .text(merge.undo)])
    }

    public func setOpenedSession(mergeID: String, sessionID: String) async throws {
        try await connection.query("UPDATE merges SET opened_session = $2 WHERE id = $1", [.text(mergeID), .text(sessionID)])
    }

    public func findForUpdate(id: String) async throws -> MergeRow? {
        try await connection.first("SELECT * FROM merges WHERE id = $1\(connection.dialect.forUpdate)", [.text(id)])
            .map(MergeRow.init(row:))
    }

    public func markReverted(id: String, at date: Date) async throws {
        try await connection.query("UPDATE merges SET reverted_at = $2 WHERE id = $1", [.text(id), .date(date)])
    }

    /// The merge an earlier request of this account made with this key, or else with this proof, if any (a proof
    /// another account sent finds nothing).
    public func find(requestedBy: String, idempotencyKey: String?, proofKey: String) async throws -> MergeRow? {
        if let idempotencyKey, let row = try await connection.first("""
            SELECT * FROM merges WHERE requested_by = $1 AND idempotency_key = $2
            """, [.text(requestedBy), .text(idempotencyKey)]) {
            return try MergeRow(row: row)
        }
        return try await connection.first("SELECT * FROM merges WHERE proof_key = $1 AND requested_by = $2",
                                          [.text(proofKey), .text(requestedBy)]).map(MergeRow.init(row:))
    }

    public func find(id: String) async throws -> MergeRow? {
        try await connection.first("SELECT * FROM merges WHERE id = $1", [.text(id)]).map(MergeRow.init(row:))
    }

    /// Merges an account took part in, newest first.
    public func list(userID: String, limit: Int) async throws -> [MergeRow] {
        try await connection.query("""
            SELECT * FROM merges WHERE into_id = $1 OR from_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2
            """, [.text(userID), .integer(Int64(limit))]).map(MergeRow.init(row:))
    }

    public func insertLoser(mergeID: String, _ loser: MergeLoserRow) async throws {
        try await connection.query("""
            INSERT INTO merge_losers (merge_id, collection, record_id, account_id, version, updated_at, deleted, data)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """, [.text(mergeID), .text(loser.collection), .text(loser.recordID), .text(loser.accountID),
                  .integer(loser.version), .date(loser.updatedAt), .bool(loser.deleted), .optionalText(loser.data)])
    }

    public func losers(mergeID: String) async throws -> [MergeLoserRow] {
        try await connection.query("SELECT * FROM merge_losers WHERE merge_id = $1 ORDER BY collection, record_id",
                                   [.text(mergeID)]).map(MergeLoserRow.init(row:))
    }

    /// Forgets challenges that expired before `date`.
    public func purgeChallenges(expiredBefore date: Date) async throws {
        try await connection.query("DELETE FROM merge_challenges WHERE expires_at < $1", [.date(date)])
    }

    /// Forgets the losing versions of merges older than `date` (30 days after them).
    public func purgeLosers(before date: Date) async throws {
        try await connection.query("""
            DELETE FROM merge_losers WHERE merge_id IN (SELECT id FROM merges WHERE created_at < $1)
            """, [.date(date)])
    }
}
