import Foundation
import LanyardStore
import LanyardWire
import LanyardSupport

/// A group's members (reference section 14): roles, removal, leaving and transferring ownership. Every change
/// takes the group row's lock first, takes effect on the next request (membership is read from the database each
/// time) and signs nobody out. The group has exactly one owner at every commit: the unique index refuses a second,
/// and transfers demote and promote in one transaction.
public struct GroupMembers: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// `PATCH /v1/groups/{gid}/members/{user_id}` (owner): any role but owner (that is a transfer).
    public func setRole(_ groupID: String, userID: String, role: GroupRole, caller: Caller,
                        client: ClientInfo) async throws -> GroupMember {
        guard role != .owner else {
            throw LanyardError.invalidRequest(field: "role", "role must be one of admin, member, viewer")
        }
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let view = try await dependencies.database.transaction { connection in
            try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true).require(.owner)
            let members = GroupMemberStore(connection)
            guard let target = try await members.find(groupID: groupID, userID: userID) else {
                throw LanyardError.notFound("No such member")
            }
            guard target.role != GroupRole.owner.rawValue else {
                throw LanyardError.invalidRequest(field: "user_id", "The owner's role changes only by a transfer")
            }
            if target.role != role.rawValue {
                try await members.setRole(groupID: groupID, userID: userID, role: role.rawValue)
                try await dependencies.audit(connection, at: now, clientIP: client.ip).write(
                    .groupMemberRoleChanged, userID: userID,
                    details: ["group_id": groupID, "actor": caller.userID, "from": target.role, "role": role.rawValue])
            }
            return try await Self.view(groupID: groupID, userID: userID, connection)
        }
        // What the member may read may have changed: its feed reads its sources again.
        dependencies.signals.accessChanged([userID])
        return view
    }

    /// `PATCH /v1/groups/{gid}/members/me`: whether the other members see the caller's email.
    public func setShareEmail(_ groupID: String, share: Bool, caller: Caller) async throws -> GroupMember {
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        return try await dependencies.database.transaction { connection in
            _ = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            try await GroupMemberStore(connection).setShareEmail(groupID: groupID, userID: caller.userID, share: share)
            try await dependencies.audit(connection, at: now, clientIP: nil).write(
                .groupMemberUpdated, userID: caller.userID,
                details: ["group_id": groupID, "actor": caller.userID, "share_email": String(share)])
            return try await Self.view(groupID: groupID, userID: caller.userID, connection)
        }
    }

    /// `DELETE /v1/groups/{gid}/members/{user_id}`: the owner removes anyone else, admins remove members and viewers.
    public func remove(_ groupID: String, userID: String, caller: Caller, client: ClientInfo) async throws {
        guard userID != caller.userID else {
            throw LanyardError.invalidRequest(field: "user_id", "To leave a group, use POST /v1/groups/{gid}/leave")
        }
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        try await dependencies.database.transaction { connection in
            let membership = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            let members = GroupMemberStore(connection)
            guard let target = try await members.find(groupID: groupID, userID: userID),
                  let targetRole = GroupRole(rawValue: target.role) else { throw LanyardError.notFound("No such member") }
            guard GroupPermissions.mayRemove(targetRole, remover: membership.role) else {
                throw LanyardError.insufficientRole(targetRole >= .admin ? .owner : .admin)
            }
            try await members.remove(groupID: groupID, userID: userID)
            try await Self.revokeInvites(madeBy: userID, groupID: groupID, connection, dependencies, now: now)
            try await dependencies.audit(connection, at: now, clientIP: client.ip).write(
                .groupMemberRemoved, userID: userID,
                details: ["group_id": groupID, "actor": caller.userID, "role": target.role, "reason": "removed"])
        }
        dependencies.signals.accessChanged([userID])
    }

    /// `POST /v1/groups/{gid}/leave`: any member but the owner, who must transfer first.
    public func leave(_ groupID: String, caller: Caller, client: ClientInfo) async throws {
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        try await dependencies.database.transaction { connection in
            let membership = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            guard membership.role != .owner else { throw LanyardError.ownerMustTransfer }
            try await GroupMemberStore(connection).remove(groupID: groupID, userID: caller.userID)
            try await Self.revokeInvites(madeBy: caller.userID, groupID: groupID, connection, dependencies, now: now)
            try await dependencies.audit(connection, at: now, clientIP: client.ip).write(
                .groupMemberRemoved, userID: caller.userID,
                details: ["group_id": groupID, "actor": caller.userID, "role": membership.role.rawValue, "reason": "left"])
        }
        dependencies.signals.accessChanged([caller.userID])
    }

    /// `POST /v1/groups/{gid}/transfer`: the owner, signed in recently, hands the group to another member, and
    /// becomes an admin, atomically.
    public func transfer(_ groupID: String, to userID: String, caller: Caller, client: ClientInfo) async throws -> LanyardGroup {
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        return try await dependencies.database.transaction { connection in
            let membership = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            try membership.require(.owner)
            try Authenticator(dependencies).requireRecentSignIn(caller)
            let members = GroupMemberStore(connection)
            guard userID != caller.userID, try await members.find(groupID: groupID, userID: userID) != nil else {
                throw LanyardError.notFound("No such member")
            }
            try await Self.handOver(groupID: groupID, from: caller.userID, to: userID, connection)
            try await dependencies.audit(connection, at: now, clientIP: client.ip).write(
                .groupOwnershipTransferred, userID: userID,
                details: ["group_id": groupID, "actor": caller.userID, "from": caller.userID, "to": userID])
            return LanyardGroup(membership.group, memberCount: try await members.count(groupID: groupID), role: .admin)
        }
    }

    /// A member who leaves or is removed takes their pending invites with them, audited.
    static func revokeInvites(madeBy userID: String, groupID: String, _ connection: any DatabaseConnection,
                              _ dependencies: CoreDependencies, now: Date) async throws {
        let audit = dependencies.audit(connection, at: now, clientIP: nil)
        for invite in try await GroupInviteStore(connection).revokeMadeBy(userID, groupID: groupID, at: now) {
            try await audit.write(.groupInviteRevoked, userID: userID,
                                  details: ["group_id": groupID, "actor": userID, "invite_id": invite, "reason": "maker_left"])
        }
    }

    /// The old owner (if still a member) becomes an admin, then the new one the owner: in this order, so the
    /// one-owner index never sees two.
    static func handOver(groupID: String, from oldOwner: String?, to newOwner: String,
                         _ connection: any DatabaseConnection) async throws {
        let members = GroupMemberStore(connection)
        if let oldOwner { try await members.setRole(groupID: groupID, userID: oldOwner, role: GroupRole.admin.rawValue) }
        try await members.setRole(groupID: groupID, userID: newOwner, role: GroupRole.owner.rawValue)
    }

    static func view(groupID: String, userID: String, _ connection: any DatabaseConnection) async throws -> GroupMember {
        guard let listing = try await GroupMemberStore(connection).listing(groupID: groupID)
            .first(where: { $0.member.userID == userID }) else { throw LanyardError.notFound("No such member") }
        return GroupMember(listing)
    }
}
