import Foundation
import LanyardStore
import LanyardWire
import LanyardSupport

/// The record store's semantics (reference section 7), the same for an account's own records and a group's:
/// versions for optimistic concurrency (`If-Match`), tombstones so other devices learn of deletions, a cursor per
/// collection, and the size and nesting limits. Who may do what is the `RecordAccess`'s.
struct RecordOperations<Access: RecordAccess>: Sendable {
    let dependencies: CoreDependencies
    let access: Access

    init(_ dependencies: CoreDependencies, _ access: Access) {
        self.dependencies = dependencies
        self.access = access
    }

    func put(collection: String, id: String, data: JSONValue, expectedVersion: Int64?) async throws -> DataRecord<JSONText> {
        try DataRecords.validate(collection: collection, id: id)
        let encoded = try DataRecords.encode(data)
        let (access, now) = (access, dependencies.clock.now())
        let (row, readers) = try await dependencies.database.transaction { connection in
            let permit = try await access.lockForWrite(connection, collection: collection)
            let records = RecordStore(connection, access.table)
            let existing = try await records.find(ownerID: access.ownerID, collection: collection, recordID: id)
            if let expectedVersion {
                let current = existing.flatMap { $0.deleted ? nil : $0.version }
                guard current == expectedVersion else { throw DataRecords.versionConflict(current: current) }
            }
            try permit.check(existing.flatMap { $0.deleted ? nil : $0 })
            let row = try await records.upsert(ownerID: access.ownerID, collection: collection, recordID: id,
                                               version: (existing?.version ?? 0) + 1, updatedAt: now, data: encoded,
                                               author: access.author)
            return (row, permit.readers)
        }
        access.committed(row, readers: readers, signals: dependencies.signals)
        return DataRecord<JSONText>(row, groupID: access.groupID)
    }

    func get(collection: String, id: String) async throws -> DataRecord<JSONText> {
        try DataRecords.validate(collection: collection, id: id)
        let access = access
        let row = try await dependencies.database.read { connection in
            try await access.checkRead(connection, collection: collection)
            return try await RecordStore(connection, access.table).find(ownerID: access.ownerID, collection: collection,
                                                                       recordID: id)
        }
        guard let row, !row.deleted else { throw LanyardError.notFound("No such record") }
        return DataRecord<JSONText>(row, groupID: access.groupID)
    }

    func delete(collection: String, id: String, expectedVersion: Int64?) async throws -> DataRecord<JSONText> {
        try DataRecords.validate(collection: collection, id: id)
        let (access, now) = (access, dependencies.clock.now())
        let (tombstone, readers) = try await dependencies.database.transaction { connection in
            let permit = try await access.lockForWrite(connection, collection: collection)
            let records = RecordStore(connection, access.table)
            guard let existing = try await records.find(ownerID: access.ownerID, collection: collection, recordID: id),
                  !existing.deleted else { throw LanyardError.notFound("No such record") }
            if let expectedVersion, expectedVersion != existing.version {
                throw DataRecords.versionConflict(current: existing.version)
            }
            try permit.check(existing)
            let row = try await records.upsert(ownerID: access.ownerID, collection: collection, recordID: id,
                                               version: existing.version + 1, updatedAt: now, data: nil,
                                               author: access.author)
            return (row, permit.readers)
        }
        access.committed(tombstone, readers: readers, signals: dependencies.signals)
        return DataRecord<JSONText>(tombstone, groupID: access.groupID)
    }

    /// `?since=CURSOR&limit=N` on a collection: its changes after the cursor, oldest first, tombstones included.
    func changes(collection: String, since cursor: String?, limit: Int?) async throws -> DataChanges<JSONText> {
        try DataRecords.validate(collection: collection, id: nil)
        var after: Int64 = 0
        if let cursor, !cursor.isEmpty {
            guard let parsed = Int64(cursor), parsed >= 0 else {
                throw LanyardError.invalidRequest(field: "since", "since must be a cursor returned as next_cursor")
            }
            after = parsed
        }
        let pageSize = limit ?? 100
        guard (1...DataRecords.maximumPageSize).contains(pageSize) else {
            throw LanyardError.invalidRequest(field: "limit", "limit must be from 1 to \(DataRecords.maximumPageSize)")
        }
        let (access, start) = (access, after)
        let rows = try await dependencies.database.read { connection in
            try await access.checkRead(connection, collection: collection)
            return try await RecordStore(connection, access.table).changes(ownerID: access.ownerID, collection: collection,
                                                                          after: start, limit: pageSize + 1)
        }
        let page = Array(rows.prefix(pageSize))
        return DataChanges<JSONText>(records: page.map { DataRecord<JSONText>($0, groupID: access.groupID) },
                           nextCursor: String(page.last?.changeSequence ?? after), hasMore: rows.count > pageSize)
    }
}
