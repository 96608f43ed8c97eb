import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

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
    public func put(collection: String, id: String, data: JSONValue, expectedVersion: Int64?, caller: Caller) async throws -> DataRecord<JSONText> {
        try await RecordOperations(dependencies, PersonalRecords(caller: caller))
            .put(collection: collection, id: id, data: data, expectedVersion: expectedVersion)
    }

    public func get(collection: String, id: String, caller: Caller) async throws -> DataRecord<JSONText> {
        try await RecordOperations(dependencies, PersonalRecords(caller: caller)).get(collection: collection, id: id)
    }

    /// Leaves a tombstone (a new version with no data) so other devices learn of the deletion.
    public func delete(collection: String, id: String, expectedVersion: Int64?, caller: Caller) async throws -> DataRecord<JSONText> {
        try await RecordOperations(dependencies, PersonalRecords(caller: caller))
            .delete(collection: collection, id: id, expectedVersion: expectedVersion)
    }

    /// `GET /v1/data/{collection}?since=CURSOR&limit=N`.
    public func changes(collection: String, since cursor: String?, limit: Int?, caller: Caller) async throws -> DataChanges<JSONText> {
        try await RecordOperations(dependencies, PersonalRecords(caller: caller))
            .changes(collection: collection, since: cursor, limit: limit)
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
