import Foundation
import LanyardStore
import LanyardWire
import LanyardSupport

/// A member's own collection, read by the other members of a group it is shared with (reference section 14):
/// read-only, and gone the moment it is unshared or the member leaves.
struct SharedRecordAccess: RecordAccess {
    let group: String
    let member: String
    let caller: Caller

    var table: RecordTable { .personal }
    var ownerID: String { member }
    var author: String? { nil }
    var groupID: String? { nil }

    func lockForWrite(_ connection: any DatabaseConnection, collection: String) async throws -> WritePermit {
        throw LanyardError(.forbidden, "A shared collection is read-only")
    }

    func checkRead(_ connection: any DatabaseConnection, collection: String) async throws {
        _ = try await GroupMembership.require(group, userID: caller.userID, connection)
        guard try await GroupMemberStore(connection).find(groupID: group, userID: member) != nil,
              try await GroupShareStore(connection).isShared(groupID: group, userID: member, collection: collection) else {
            throw LanyardError.notFound("This collection is not shared with the group")
        }
    }

    func committed(_ row: RecordRow, readers: [String], signals: any AccountSignals) {}
}

/// `PUT/DELETE /v1/groups/{gid}/shares/{collection}` and `GET /v1/groups/{gid}/members/{user_id}/data/...`.
public struct GroupShares: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// Shares one of the caller's own collections with the group, read-only.
    public func share(_ groupID: String, collection: String, caller: Caller) async throws -> GroupShare {
        try DataRecords.validate(collection: collection, id: nil)
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let members = try await dependencies.database.transaction { connection in
            _ = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            try await GroupShareStore(connection).share(groupID: groupID, userID: caller.userID, collection: collection,
                                                        at: now)
            try await dependencies.audit(connection, at: now, clientIP: nil).write(
                .groupCollectionShared, userID: caller.userID,
                details: ["group_id": groupID, "actor": caller.userID, "collection": collection])
            return try await GroupMemberStore(connection).list(groupID: groupID).map(\.userID)
        }
        dependencies.signals.accessChanged(members)
        return GroupShare(groupID: LanyardGroup.ID(groupID), userID: User.ID(caller.userID), collection: collection)
    }

    public func unshare(_ groupID: String, collection: String, caller: Caller) async throws {
        try DataRecords.validate(collection: collection, id: nil)
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let members = try await dependencies.database.transaction { connection in
            _ = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            try await GroupShareStore(connection).unshare(groupID: groupID, userID: caller.userID, collection: collection)
            try await dependencies.audit(connection, at: now, clientIP: nil).write(
                .groupCollectionUnshared, userID: caller.userID,
                details: ["group_id": groupID, "actor": caller.userID, "collection": collection])
            return try await GroupMemberStore(connection).list(groupID: groupID).map(\.userID)
        }
        dependencies.signals.accessChanged(members)
    }

    /// The collections members share with the group.
    public func list(_ groupID: String, caller: Caller) async throws -> ShareList {
        try await dependencies.database.read { connection in
            _ = try await GroupMembership.require(groupID, userID: caller.userID, connection)
            return ShareList(shares: try await GroupShareStore(connection).list(groupID: groupID).map {
                GroupShare(groupID: LanyardGroup.ID(groupID), userID: User.ID($0.userID), collection: $0.collection)
            })
        }
    }

    private func operations(_ groupID: String, member: String, _ caller: Caller) -> RecordOperations<SharedRecordAccess> {
        RecordOperations(dependencies, SharedRecordAccess(group: groupID, member: member, caller: caller))
    }

    public func get(_ groupID: String, member: String, collection: String, id: String,
                    caller: Caller) async throws -> DataRecord<JSONText> {
        try await operations(groupID, member: member, caller).get(collection: collection, id: id)
    }

    public func changes(_ groupID: String, member: String, collection: String, since: String?, limit: Int?,
                        caller: Caller) async throws -> DataChanges<JSONText> {
        try await operations(groupID, member: member, caller).changes(collection: collection, since: since, limit: limit)
    }
}
