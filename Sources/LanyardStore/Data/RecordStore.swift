import Foundation

public struct RecordRow: Sendable, Equatable {
    public var userID: String
    public var collection: String
    public var recordID: String
    public var version: Int64
    public var updatedAt: Date
    public var changeSequence: Int64
    /// The record's place in its account's change feed (across collections).
    public var feedSequence: Int64
    public var deleted: Bool
    /// The record's JSON object, as text; `nil` for a tombstone.
    public var data: String?

    init(userID: String, collection: String, recordID: String, version: Int64, updatedAt: Date, changeSequence: Int64,
         feedSequence: Int64, deleted: Bool, data: String?) {
        (self.userID, self.collection, self.recordID, self.version) = (userID, collection, recordID, version)
        (self.updatedAt, self.changeSequence, self.feedSequence) = (updatedAt, changeSequence, feedSequence)
        (self.deleted, self.data) = (deleted, data)
    }

    init(row: SQLRow) throws {
        userID = try row.string("user_id")
        collection = try row.string("collection")
        recordID = try row.string("record_id")
        version = try row.integer("version")
        updatedAt = try row.date("updated_at")
        changeSequence = try row.integer("change_seq")
        feedSequence = try row.integer("feed_seq")
        deleted = try row.bool("deleted")
        data = try row.optionalString("data")
    }
}

/// The `records` table: app data owned by one account. Writers lock the account row first, so neither the
/// per-collection change sequence (a collection's sync cursor) nor the account's feed sequence (the change feed's
/// cursor) ever repeats.
public struct RecordStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func find(userID: String, collection: String, recordID: String) async throws -> RecordRow? {
        try await connection.first("""
            SELECT * FROM records WHERE user_id = $1 AND collection = $2 AND record_id = $3
            """, [.text(userID), .text(collection), .text(recordID)]).map(RecordRow.init(row:))
    }

    /// Writes a record (or a tombstone, when `data` is nil) with the next change sequence of its collection and the
    /// next place in its account's feed.
    @discardableResult
    public func upsert(userID: String, collection: String, recordID: String, version: Int64, updatedAt: Date,
                       data: String?) async throws -> RecordRow {
        let row = try await connection.first("""
            INSERT INTO records (user_id, collection, record_id, version, updated_at, change_seq, feed_seq, deleted, data)
            VALUES ($1, $2, $3, $4, $5,
                    (SELECT COALESCE(MAX(change_seq), 0) + 1 FROM records WHERE user_id = $1 AND collection = $2),
                    (SELECT COALESCE(MAX(feed_seq), 0) + 1 FROM records WHERE user_id = $1),
                    $6, $7)
            ON CONFLICT (user_id, collection, record_id) DO UPDATE SET
                version = excluded.version, updated_at = excluded.updated_at, change_seq = excluded.change_seq,
                feed_seq = excluded.feed_seq, deleted = excluded.deleted, data = excluded.data
            RETURNING *
            """, [.text(userID), .text(collection), .text(recordID), .integer(version), .date(updatedAt),
                  .bool(data == nil), .optionalText(data)])
        guard let row else { throw StoreError.unexpectedValue(column: "records") }
        return try RecordRow(row: row)
    }

    /// Changes after `cursor` in one collection, oldest first, tombstones included.
    public func changes(userID: String, collection: String, after cursor: Int64, limit: Int) async throws -> [RecordRow] {
        try await connection.query("""
            SELECT * FROM records WHERE user_id = $1 AND collection = $2 AND change_seq > $3
            ORDER BY change_seq LIMIT $4
            """, [.text(userID), .text(collection), .integer(cursor), .integer(Int64(limit))]).map(RecordRow.init(row:))
    }

    /// The account's feed after `cursor`, in feed order, tombstones included.
    public func feed(userID: String, after cursor: Int64, limit: Int) async throws -> [RecordRow] {
        try await connection.query("""
            SELECT * FROM records WHERE user_id = $1 AND feed_seq > $2 ORDER BY feed_seq LIMIT $3
            """, [.text(userID), .integer(cursor), .integer(Int64(limit))]).map(RecordRow.init(row:))
    }

    /// The account's last place in its feed; 0 before its first write.
    public func lastFeedSequence(userID: String) async throws -> Int64 {
        try await connection.first("SELECT COALESCE(MAX(feed_seq), 0) AS last FROM records WHERE user_id = $1",
                                    [.text(userID)])?.integer("last") ?? 0
    }

    /// Every record (tombstones too) of an account, for a merge.
    public func all(userID: String) async throws -> [RecordRow] {
        try await connection.query("SELECT * FROM records WHERE user_id = $1 ORDER BY collection, change_seq",
                                   [.text(userID)]).map(RecordRow.init(row:))
    }

    public func deleteAll(userID: String) async throws {
        try await connection.query("DELETE FROM records WHERE user_id = $1", [.text(userID)])
    }
}
