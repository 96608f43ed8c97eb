import Foundation
import LanyardStore
import LanyardSupport

/// A record as the API shows it (reference section 7). Its data is the JSON text stored when it was written,
/// copied into the answer as it is: reading a record costs the same at any nesting.
public struct RecordView: JSONWritable, Sendable {
    public var id: String
    public var collection: String
    public var version: Int64
    public var updatedAt: Date
    public var deleted: Bool
    /// The record's JSON object as stored; `nil` for a tombstone.
    public var data: String?

    init(_ row: RecordRow) {
        id = row.recordID
        collection = row.collection
        version = row.version
        updatedAt = row.updatedAt
        deleted = row.deleted
        data = row.data
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("id"); json.string(id)
            json.key("collection"); json.string(collection)
            json.key("version"); json.integer(version)
            json.key("updated_at"); json.date(updatedAt)
            if deleted { json.key("deleted"); json.bool(true) }
            json.key("data"); json.raw(json: data)
        }
    }
}

public struct ChangesPage: JSONWritable, Sendable {
    public var records: [RecordView]
    public var nextCursor: String?
    public var hasMore: Bool

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("records"); json.array(records) { $0.value($1) }
            json.key("next_cursor"); json.string(nextCursor)
            json.key("has_more"); json.bool(hasMore)
        }
    }
}

/// Per-user data for cross-device sync: JSON records in named collections, with versions for optimistic
/// concurrency and tombstones so other devices learn of deletions.
public struct DataRecords: Sendable {
    public static let maximumRecordBytes = 256 * 1024
    /// How deep objects and arrays may nest in a record's data, `data` itself being level 1. Deeper data is refused
    /// (`INVALID_REQUEST`) before anything is stored.
    public static let maximumNestingDepth = 64
    public static let maximumPageSize = 500

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// `[a-z][a-z0-9_-]{0,63}`
    public static func isValidCollection(_ name: String) -> Bool {
        guard let first = name.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), name.utf8.count <= 64 else {
            return false
        }
        return name.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// `[A-Za-z0-9_-]{1,128}`
    public static func isValidRecordID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D
        }
    }

    static func validate(collection: String, id: String?) throws {
        guard isValidCollection(collection) else {
            throw LanyardError.invalidRequest(field: "collection", "collection must match [a-z][a-z0-9_-]{0,63}")
        }
        if let id, !isValidRecordID(id) {
            throw LanyardError.invalidRequest(field: "id", "id must match [A-Za-z0-9_-]{1,128}")
        }
    }

    /// `PUT /v1/data/{collection}/{id}`; `expectedVersion` comes from `If-Match`.
    public func put(collection: String, id: String, data: JSONValue, expectedVersion: Int64?, caller: Caller) async throws -> RecordView {
        try Self.validate(collection: collection, id: id)
        let encoded = try Self.encode(data)
        let dependencies = self.dependencies
        let record = try await dependencies.database.transaction { connection in
            try await Self.lockOwner(caller, connection)
            let records = RecordStore(connection)
            let existing = try await records.find(userID: caller.userID, collection: collection, recordID: id)
            if let expectedVersion {
                let current = existing.flatMap { $0.deleted ? nil : $0.version }
                guard current == expectedVersion else { throw Self.versionConflict(current: current) }
            }
            let row = try await records.upsert(userID: caller.userID, collection: collection, recordID: id,
                                               version: (existing?.version ?? 0) + 1, updatedAt: dependencies.clock.now(),
                                               data: encoded)
            return row
        }
        dependencies.signals.recordsChanged([caller.userID], written: [FeedChange(record)])
        return RecordView(record)
    }

    /// A record's data as stored: an object, nested at most `maximumNestingDepth` deep, at most
    /// `maximumRecordBytes` long.
    static func encode(_ data: JSONValue) throws -> String {
        guard case .object = data else { throw LanyardError.invalidRequest(field: "data", "data must be a JSON object") }
        guard data.nestingDepth <= maximumNestingDepth else {
            throw LanyardError.invalidRequest(field: "data", """
                data nests objects and arrays more than \(maximumNestingDepth) levels deep
                """)
        }
        var writer = JSONWriter()
        writer.json(data)
        guard writer.bytes.count <= maximumRecordBytes else { throw LanyardError.payloadTooLarge(limit: maximumRecordBytes) }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    public func get(collection: String, id: String, caller: Caller) async throws -> RecordView {
        try Self.validate(collection: collection, id: id)
        let row = try await dependencies.database.read { connection in
            try await RecordStore(connection).find(userID: caller.userID, collection: collection, recordID: id)
        }
        guard let row, !row.deleted else { throw LanyardError.notFound("No such record") }
        return RecordView(row)
    }

    /// Leaves a tombstone (a new version with no data) so other devices learn of the deletion.
    public func delete(collection: String, id: String, expectedVersion: Int64?, caller: Caller) async throws -> RecordView {
        try Self.validate(collection: collection, id: id)
        let dependencies = self.dependencies
        let tombstone = try await dependencies.database.transaction { connection in
            try await Self.lockOwner(caller, connection)
            let records = RecordStore(connection)
            guard let existing = try await records.find(userID: caller.userID, collection: collection, recordID: id),
                  !existing.deleted else { throw LanyardError.notFound("No such record") }
            if let expectedVersion, expectedVersion != existing.version {
                throw Self.versionConflict(current: existing.version)
            }
            return try await records.upsert(userID: caller.userID, collection: collection, recordID: id,
                                            version: existing.version + 1, updatedAt: dependencies.clock.now(), data: nil)
        }
        dependencies.signals.recordsChanged([caller.userID], written: [FeedChange(tombstone)])
        return RecordView(tombstone)
    }

    /// `GET /v1/data/{collection}?since=CURSOR&limit=N`.
    public func changes(collection: String, since cursor: String?, limit: Int?, caller: Caller) async throws -> ChangesPage {
        try Self.validate(collection: collection, id: nil)
        var after: Int64 = 0
        if let cursor, !cursor.isEmpty {
            guard let parsed = Int64(cursor), parsed >= 0 else {
                throw LanyardError.invalidRequest(field: "since", "since must be a cursor returned as next_cursor")
            }
            after = parsed
        }
        let pageSize = limit ?? 100
        guard (1...Self.maximumPageSize).contains(pageSize) else {
            throw LanyardError.invalidRequest(field: "limit", "limit must be from 1 to \(Self.maximumPageSize)")
        }
        let start = after
        let rows = try await dependencies.database.read { connection in
            try await RecordStore(connection).changes(userID: caller.userID, collection: collection, after: start,
                                                      limit: pageSize + 1)
        }
        let page = Array(rows.prefix(pageSize))
        return ChangesPage(records: page.map(RecordView.init),
                           nextCursor: String(page.last?.changeSequence ?? after), hasMore: rows.count > pageSize)
    }

    /// Serializes an account's writes (the change sequence is per account) and refuses ended accounts.
    static func lockOwner(_ caller: Caller, _ connection: any DatabaseConnection) async throws {
        guard let user = try await UserStore(connection).findForUpdate(id: caller.userID), user.mergedInto == nil else {
            throw LanyardError.unauthorized("This account no longer exists")
        }
    }

    static func versionConflict(current: Int64?) -> LanyardError {
        LanyardError(.versionConflict, "The record changed since you read it",
                     details: ["current_version": current.map { .number(Double($0)) } ?? .null])
    }
}

/// A guest's records follow them into the account they sign into. Where both have a record with the same
/// collection and id, the newer `updated_at` wins and the other is kept in the audit log.
struct RecordsMergeStep: MergeStep {
    func move(from anonymousID: String, into targetID: String, connection: any DatabaseConnection,
              audit: AuditLog, now: Date) async throws {
        let records = RecordStore(connection)
        for incoming in try await records.all(userID: anonymousID) {
            let existing = try await records.find(userID: targetID, collection: incoming.collection, recordID: incoming.recordID)
            if let existing, existing.updatedAt >= incoming.updatedAt {
                try await audit.write(.mergeRecordReplaced, userID: targetID, details: Self.loser(incoming, kept: "target"))
                continue
            }
            if let existing {
                try await audit.write(.mergeRecordReplaced, userID: targetID, details: Self.loser(existing, kept: "guest"))
            }
            try await records.upsert(userID: targetID, collection: incoming.collection, recordID: incoming.recordID,
                                     version: max(existing?.version ?? 0, incoming.version) + 1,
                                     updatedAt: incoming.updatedAt, data: incoming.data)
        }
        try await records.deleteAll(userID: anonymousID)
    }

    static func loser(_ row: RecordRow, kept: String) -> [String: String] {
        ["collection": row.collection, "id": row.recordID, "from_account": row.userID, "kept": kept,
         "discarded_updated_at": String(row.updatedAt.unixMilliseconds), "discarded_data": row.data ?? "null"]
    }
}
