import Foundation

/// Whose records a `RecordStore` reads and writes: an account's own (`records`) or a group's (`group_records`).
/// Both tables have the same columns, keyed by their owner; a group's records also name who created and last
/// wrote each.
public enum RecordTable: Sendable {
    case personal
    case group

    var name: String {
        switch self {
        case .personal: "records"
        case .group: "group_records"
        }
    }

    var ownerColumn: String {
        switch self {
        case .personal: "user_id"
        case .group: "group_id"
        }
    }
}

public struct RecordRow: Sendable, Equatable {
    /// The account or the group the record belongs to.
    public var ownerID: String
    public var collection: String
    public var recordID: String
    public var version: Int64
    public var updatedAt: Date
    public var changeSequence: Int64
    /// The record's place in its owner's change feed (across collections).
    public var feedSequence: Int64
    public var deleted: Bool
    /// The record's JSON object, as text; `nil` for a tombstone.
    public var data: String?
    /// A group record's author and last writer; `nil` for an account's own records.
    public var createdBy: String?
    public var updatedBy: String?

    init(ownerID: String, collection: String, recordID: String, version: Int64, updatedAt: Date, changeSequence: Int64,
         feedSequence: Int64, deleted: Bool, data: String?, createdBy: String? = nil, updatedBy: String? = nil) {
        (self.ownerID, self.collection, self.recordID, self.version) = (ownerID, collection, recordID, version)
        (self.updatedAt, self.changeSequence, self.feedSequence) = (updatedAt, changeSequence, feedSequence)
        (self.deleted, self.data, self.createdBy, self.updatedBy) = (deleted, data, createdBy, updatedBy)
    }

    init(row: SQLRow, table: RecordTable) throws {
        ownerID = try row.string(table.ownerColumn)
        collection = try row.string("collection")
        recordID = try row.string("record_id")
        version = try row.integer("version")
        updatedAt = try row.date("updated_at")
        changeSequence = try row.integer("change_seq")
        feedSequence = try row.integer("feed_seq")
        deleted = try row.bool("deleted")
        data = try row.optionalString("data")
        if table == .group {
            createdBy = try row.string("created_by")
            updatedBy = try row.string("updated_by")
        }
    }
}

/// The `records` and `group_records` tables: app data owned by one account or one group. Writers lock the owner's
/// row first (the account's or the group's), so neither the per-collection change sequence (a collection's sync
/// cursor) nor the owner's feed sequence (the change feed's cursor) ever repeats.
public struct RecordStore: Sendable {
    let connection: any DatabaseConnection
    let table: RecordTable

    public init(_ connection: any DatabaseConnection, _ table: RecordTable = .personal) {
        self.connection = connection
        self.table = table
    }

    private var name: String { table.name }
    private var owner: String { table.ownerColumn }

    public func find(ownerID: String, collection: String, recordID: String) async throws -> RecordRow? {
        try await connection.first("""
            SELECT * FROM \(name) WHERE \(owner) = $1 AND collection = $2 AND record_id = $3
            """, [.text(ownerID), .text(collection), .text(recordID)]).map { try RecordRow(row: $0, table: table) }
    }

    /// Writes a record (or a tombstone, when `data` is nil) with the next change sequence of its collection and the
    /// next place in its owner's feed. `author` is the account writing a group's record: it becomes the record's
    /// `updated_by`, and its `created_by` when the record is new.
    @discardableResult
    public func upsert(ownerID: String, collection: String, recordID: String, version: Int64, updatedAt: Date,
                       data: String?, author: String? = nil) async throws -> RecordRow {
        let authorColumns = table == .group ? ", created_by, updated_by" : ""
        let authorValues = table == .group ? ", $8, $8" : ""
        let authorUpdate = table == .group ? ", updated_by = excluded.updated_by" : ""
        var binds: [SQLValue] = [.text(ownerID), .text(collection), .text(recordID), .integer(version), .date(updatedAt),
                                 .bool(data == nil), .optionalText(data)]
        if table == .group { binds.append(.optionalText(author)) }
        let row = try await connection.first("""
            INSERT INTO \(name) (\(owner), collection, record_id, version, updated_at, change_seq, feed_seq, deleted,
                                 data\(authorColumns))
            VALUES ($1, $2, $3, $4, $5,
                    (SELECT COALESCE(MAX(change_seq), 0) + 1 FROM \(name) WHERE \(owner) = $1 AND collection = $2),
                    (SELECT COALESCE(MAX(feed_seq), 0) + 1 FROM \(name) WHERE \(owner) = $1),
                    $6, $7\(authorValues))
            ON CONFLICT (\(owner), collection, record_id) DO UPDATE SET
                version = excluded.version, updated_at = excluded.updated_at, change_seq = excluded.change_seq,
                feed_seq = excluded.feed_seq, deleted = excluded.deleted, data = excluded.data\(authorUpdate)
            RETURNING *
            """, binds)
        guard let row else { throw StoreError.unexpectedValue(column: name) }
        return try RecordRow(row: row, table: table)
    }

    /// Changes after `cursor` in one collection, oldest first, tombstones included.
    public func changes(ownerID: String, collection: String, after cursor: Int64, limit: Int) async throws -> [RecordRow] {
        try await connection.query("""
            SELECT * FROM \(name) WHERE \(owner) = $1 AND collection = $2 AND change_seq > $3
            ORDER BY change_seq LIMIT $4
            """, [.text(ownerID), .text(collection), .integer(cursor), .integer(Int64(limit))])
            .map { try RecordRow(row: $0, table: table) }
    }

    /// The owner's feed after `cursor`, in feed order, tombstones included; only `collection`'s when given.
    /// Changes after `cursor` in feed order: of one collection, or of all but `excluding` (collections the reader
    /// may not read).
    public func feed(ownerID: String, collection: String? = nil, excluding: Set<String> = [], after cursor: Int64,
                     limit: Int) async throws -> [RecordRow] {
        if !excluding.isEmpty {
            let hidden = excluding.sorted()
            let placeholders = (0..<hidden.count).map { "$\($0 + 4)" }.joined(separator: ", ")
            return try await connection.query("""
                SELECT * FROM \(name) WHERE \(owner) = $1 AND feed_seq > $2 AND collection NOT IN (\(placeholders))
                ORDER BY feed_seq LIMIT $3
                """, [.text(ownerID), .integer(cursor), .integer(Int64(limit))] + hidden.map(SQLValue.text))
                .map { try RecordRow(row: $0, table: table) }
        }
        if let collection {
            return try await connection.query("""
                SELECT * FROM \(name) WHERE \(owner) = $1 AND collection = $2 AND feed_seq > $3 ORDER BY feed_seq LIMIT $4
                """, [.text(ownerID), .text(collection), .integer(cursor), .integer(Int64(limit))])
                .map { try RecordRow(row: $0, table: table) }
        }
        return try await connection.query("""
            SELECT * FROM \(name) WHERE \(owner) = $1 AND feed_seq > $2 ORDER BY feed_seq LIMIT $3
            """, [.text(ownerID), .integer(cursor), .integer(Int64(limit))]).map { try RecordRow(row: $0, table: table) }
    }

    /// The owner's last place in its feed; 0 before its first write.
    public func lastFeedSequence(ownerID: String) async throws -> Int64 {
        try await connection.first("SELECT COALESCE(MAX(feed_seq), 0) AS last FROM \(name) WHERE \(owner) = $1",
                                    [.text(ownerID)])?.integer("last") ?? 0
    }

    /// Every record (tombstones too) of an owner, for a merge.
    public func all(ownerID: String) async throws -> [RecordRow] {
        try await connection.query("SELECT * FROM \(name) WHERE \(owner) = $1 ORDER BY collection, change_seq",
                                   [.text(ownerID)]).map { try RecordRow(row: $0, table: table) }
    }

    /// The records of `from` that `into` also has (a merge's clashes), with their collection cursors' order.
    public func shared(from: String, into: String) async throws -> [RecordRow] {
        try await connection.query("""
            SELECT * FROM \(name) f WHERE f.\(owner) = $1 AND EXISTS (
                SELECT 1 FROM \(name) i WHERE i.\(owner) = $2 AND i.collection = f.collection AND i.record_id = f.record_id)
            ORDER BY f.collection, f.change_seq
            """, [.text(from), .text(into)]).map { try RecordRow(row: $0, table: table) }
    }

    /// Copies, in one statement, every record of `from` that `into` does not have to `into` (same versions, data and
    /// times), each with the next places of `into`'s collection and feed in `from`'s order; what it copied.
    public func copyAbsent(from: String, into: String) async throws -> [(collection: String, recordID: String, version: Int64)] {
        try await connection.query("""
            INSERT INTO \(name) (\(owner), collection, record_id, version, updated_at, change_seq, feed_seq, deleted, data)
            SELECT $2, f.collection, f.record_id, f.version, f.updated_at,
                   COALESCE((SELECT MAX(c.change_seq) FROM \(name) c WHERE c.\(owner) = $2 AND c.collection = f.collection), 0)
                       + ROW_NUMBER() OVER (PARTITION BY f.collection ORDER BY f.change_seq),
                   COALESCE((SELECT MAX(c.feed_seq) FROM \(name) c WHERE c.\(owner) = $2), 0)
                       + ROW_NUMBER() OVER (ORDER BY f.feed_seq),
                   f.deleted, f.data
            FROM \(name) f
            WHERE f.\(owner) = $1 AND NOT EXISTS (
                SELECT 1 FROM \(name) i WHERE i.\(owner) = $2 AND i.collection = f.collection AND i.record_id = f.record_id)
            RETURNING collection, record_id, version
            """, [.text(from), .text(into)]).map {
                (try $0.string("collection"), try $0.string("record_id"), try $0.integer("version"))
            }
    }

    public func deleteAll(ownerID: String) async throws {
        try await connection.query("DELETE FROM \(name) WHERE \(owner) = $1", [.text(ownerID)])
    }
}
