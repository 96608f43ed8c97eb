import Foundation
import LanyardStore
import LanyardWire
import LanyardSupport

/// A group's records (reference section 14): the personal store's semantics (`RecordOperations`), under the
/// group row's lock, with each collection's policy deciding who reads and writes.
struct GroupRecordAccess: RecordAccess {
    let group: String
    let caller: Caller

    var table: RecordTable { .group }
    var ownerID: String { group }
    var groupID: String? { group }
    var author: String? { caller.userID }

    func lockForWrite(_ connection: any DatabaseConnection, collection: String) async throws -> WritePermit {
        let membership = try await GroupMembership.require(ownerID, userID: caller.userID, connection,
                                                           collection: collection, lock: true)
        let (role, userID, policy) = (membership.role, caller.userID, membership.policy)
        guard role >= policy.writeRequirement else { throw LanyardError.insufficientRole(policy.writeRequirement) }
        let readers = try await GroupMemberStore(connection).list(groupID: ownerID).map(\.userID)
        return WritePermit(check: { existing in
            guard policy.mayWrite(role, userID: userID, existingCreatedBy: existing?.createdBy) else {
                throw LanyardError.insufficientRole(.admin)
            }
        }, readers: readers)
    }

    func checkRead(_ connection: any DatabaseConnection, collection: String) async throws {
        let membership = try await GroupMembership.require(ownerID, userID: caller.userID, connection,
                                                           collection: collection)
        guard membership.policy.mayRead(membership.role) else {
            throw LanyardError.insufficientRole(membership.policy.read)
        }
    }

    func committed(_ row: RecordRow, readers: [String], signals: any AccountSignals) {
        signals.recordsChanged(readers, written: [FeedChange(row, source: .group(group))])
    }
}

/// `/v1/groups/{gid}/data/...` and `/v1/groups/{gid}/policies/{collection}`.
public struct GroupData: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    private func operations(_ groupID: String, _ caller: Caller) -> RecordOperations<GroupRecordAccess> {
        RecordOperations(dependencies, GroupRecordAccess(group: groupID, caller: caller))
    }

    public func put(_ groupID: String, collection: String, id: String, data: JSONValue, expectedVersion: Int64?,
                    caller: Caller) async throws -> DataRecord<JSONText> {
        try await operations(groupID, caller).put(collection: collection, id: id, data: data, expectedVersion: expectedVersion)
    }

    public func get(_ groupID: String, collection: String, id: String, caller: Caller) async throws -> DataRecord<JSONText> {
        try await operations(groupID, caller).get(collection: collection, id: id)
    }

    public func delete(_ groupID: String, collection: String, id: String, expectedVersion: Int64?,
                       caller: Caller) async throws -> DataRecord<JSONText> {
        try await operations(groupID, caller).delete(collection: collection, id: id, expectedVersion: expectedVersion)
    }

    public func changes(_ groupID: String, collection: String, since: String?, limit: Int?,
                        caller: Caller) async throws -> DataChanges<JSONText> {
        try await operations(groupID, caller).changes(collection: collection, since: since, limit: limit)
    }

    /// `PUT /v1/groups/{gid}/policies/{collection}` (owner and admins).
    public func setPolicy(_ groupID: String, collection: String, _ body: PolicyBody,
                          caller: Caller) async throws -> CollectionPolicy {
        try DataRecords.validate(collection: collection, id: nil)
        let read = body.read ?? GroupPolicy.standard.read
        guard GroupPolicy.readRoles.contains(read) else {
            throw LanyardError.invalidRequest(field: "read", "read must be one of viewer, member, admin")
        }
        let policy = GroupPolicy(read: read, write: body.write ?? GroupPolicy.standard.write)
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let members = try await dependencies.database.transaction { connection in
            try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true).require(.admin)
            try await GroupStore(connection).setPolicy(groupID: groupID, collection: collection, read: policy.read.rawValue,
                                                       write: policy.write.rawValue)
            try await dependencies.audit(connection, at: now, clientIP: nil).write(
                .groupPolicySet, userID: caller.userID,
                details: ["group_id": groupID, "actor": caller.userID, "collection": collection,
                          "read": policy.read.rawValue, "write": policy.write.rawValue])
            return try await GroupMemberStore(connection).list(groupID: groupID).map(\.userID)
        }
        // Who may read the collection may have changed: every member's feed reads its sources again.
        dependencies.signals.accessChanged(members)
        return CollectionPolicy(collection: collection, policy: policy)
    }

    /// `GET /v1/groups/{gid}/policies/{collection}` (members): the policy in force, the standard one without any.
    public func policy(_ groupID: String, collection: String, caller: Caller) async throws -> CollectionPolicy {
        try DataRecords.validate(collection: collection, id: nil)
        return try await dependencies.database.read { connection in
            let policy = try await GroupMembership.require(groupID, userID: caller.userID, connection,
                                                           collection: collection).policy
            return CollectionPolicy(collection: collection, policy: policy)
        }
    }
}
