import Foundation
import LanyardStore
import LanyardWire
import LanyardSupport

/// Invites (reference section 14): codes that travel by any channel, since nobody joins by email (an Apple user's
/// address is a relay the inviter never sees). Each is used at most `max_uses` times, and a group never exceeds
/// its member limit: both are counted under the group row's lock.
public struct GroupInvites: Sendable {
    public static let maximumPending = 50
    public static let maximumUses = 100
    public static let defaultLifetime: TimeInterval = 7 * 86_400
    public static let maximumLifetime: TimeInterval = 30 * 86_400

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// `POST /v1/groups/{gid}/invites`: the code is in this answer only.
    public func create(_ groupID: String, _ request: InviteBody, caller: Caller) async throws -> GroupInvite {
        let role = request.role ?? .member
        guard role != .owner else {
            throw LanyardError.invalidRequest(field: "role", "role must be one of admin, member, viewer")
        }
        let maxUses = request.maxUses ?? 1
        guard (1...Self.maximumUses).contains(maxUses) else {
            throw LanyardError.invalidRequest(field: "max_uses", "max_uses must be from 1 to \(Self.maximumUses)")
        }
        let lifetime = request.expiresIn.map(TimeInterval.init) ?? Self.defaultLifetime
        guard lifetime >= 60, lifetime <= Self.maximumLifetime else {
            throw LanyardError.invalidRequest(field: "expires_in", """
                expires_in must be from 60 seconds to 30 days (\(Int(Self.maximumLifetime)) seconds)
                """)
        }
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let code = InviteCode.generate(dependencies.random)
        let invite = GroupInviteRow(id: dependencies.random.newID(at: now), groupID: groupID,
                                    codeHash: InviteCode.hash(normalized: InviteCode.normalize(code)!),
                                    role: role.rawValue, maxUses: maxUses, createdBy: caller.userID, createdAt: now,
                                    expiresAt: now.addingTimeInterval(lifetime))
        try await dependencies.database.transaction { connection in
            let membership = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            guard GroupPermissions.mayInvite(membership.role, membersCanInvite: membership.group.membersCanInvite) else {
                throw LanyardError.insufficientRole(.admin)
            }
            guard GroupPermissions.mayGrant(role, inviter: membership.role) else {
                throw LanyardError.insufficientRole(role)
            }
            let invites = GroupInviteStore(connection)
            guard try await invites.pending(groupID: groupID, at: now).count < Self.maximumPending else {
                throw LanyardError.groupLimit("too_many_invites", limit: Self.maximumPending)
            }
            try await invites.insert(invite)
            try await dependencies.audit(connection, at: now, clientIP: nil).write(
                .groupInviteCreated, userID: caller.userID,
                details: ["group_id": groupID, "actor": caller.userID, "invite_id": invite.id, "role": role.rawValue,
                          "max_uses": String(maxUses)])
        }
        return GroupInvite(invite, code: code, url: "\(dependencies.accessTokens.issuer)/join/\(code)")
    }

    /// `GET /v1/groups/{gid}/invites` (owner and admins): pending invites, without their codes.
    public func list(_ groupID: String, caller: Caller) async throws -> InviteList {
        let now = dependencies.clock.now()
        return try await dependencies.database.read { connection in
            try await GroupMembership.require(groupID, userID: caller.userID, connection).require(.admin)
            return InviteList(invites: try await GroupInviteStore(connection).pending(groupID: groupID, at: now)
                .map { GroupInvite($0) })
        }
    }

    /// `DELETE /v1/groups/{gid}/invites/{id}` (owner and admins).
    public func revoke(_ groupID: String, inviteID: String, caller: Caller) async throws {
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        try await dependencies.database.transaction { connection in
            try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true).require(.admin)
            let invites = GroupInviteStore(connection)
            guard try await invites.find(id: inviteID, groupID: groupID) != nil else {
                throw LanyardError.notFound("No such invite")
            }
            try await invites.revoke(id: inviteID, at: now)
            try await dependencies.audit(connection, at: now, clientIP: nil).write(
                .groupInviteRevoked, userID: caller.userID,
                details: ["group_id": groupID, "actor": caller.userID, "invite_id": inviteID])
        }
    }

    /// `GET /v1/invites/{code}`: what joining would mean, without the members.
    public func preview(code: String, caller: Caller, client: ClientInfo) async throws -> InvitePreview {
        let (invite, group) = try await find(code: code, caller: caller, client: client)
        try Self.checkUsable(invite, at: dependencies.clock.now())
        return try await dependencies.database.read { connection in
            let count = try await GroupMemberStore(connection).count(groupID: group.id)
            let inviter = try await UserStore(connection).find(id: invite.createdBy)
            return InvitePreview(groupName: group.name, kind: LanyardGroup.Kind(rawValue: group.kind) ?? .family,
                                 memberCount: count, inviterName: inviter?.displayName,
                                 role: GroupRole(rawValue: invite.role) ?? .member, expiresAt: invite.expiresAt)
        }
    }

    /// `POST /v1/invites/{code}/accept`: joins the group with the invite's role. A member already: the group as it
    /// is, and no use spent.
    public func accept(code: String, caller: Caller, client: ClientInfo) async throws -> JoinedGroup {
        let (found, _) = try await find(code: code, caller: caller, client: client)
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let (joined, alreadyMember) = try await dependencies.database.transaction { connection -> (JoinedGroup, Bool) in
            // The account first, then the group: the order every group change takes its locks in.
            try await DataRecords.lockOwner(caller, connection)
            guard let group = try await GroupStore(connection).findForUpdate(id: found.groupID),
                  let invite = try await GroupInviteStore(connection).find(id: found.id, groupID: found.groupID) else {
                throw LanyardError.notFound("No such invite")
            }
            let members = GroupMemberStore(connection)
            if let member = try await members.find(groupID: group.id, userID: caller.userID) {
                let count = try await members.count(groupID: group.id)
                let role = GroupRole(rawValue: member.role) ?? .viewer
                return (JoinedGroup(group: LanyardGroup(group, memberCount: count, role: role), role: role), true)
            }
            try Self.checkUsable(invite, at: now)
            // The invite's maker as they are now: an invite grants no more than they still may.
            let maker = try await members.find(groupID: group.id, userID: invite.createdBy)
            guard let invited = GroupRole(rawValue: invite.role),
                  let role = GroupPermissions.grantedAtAccept(invited, makerRole: maker.flatMap { GroupRole(rawValue: $0.role) },
                                                              membersCanInvite: group.membersCanInvite) else {
                throw LanyardError.inviteUnusable("revoked")
            }
            let count = try await members.count(groupID: group.id)
            guard count < dependencies.groupMaxMembers else {
                throw LanyardError.groupLimit("group_full", limit: dependencies.groupMaxMembers)
            }
            try await Groups.checkRoomForAnotherGroup(userID: caller.userID, connection, dependencies)
            try await members.insert(GroupMemberRow(groupID: group.id, userID: caller.userID, role: role.rawValue, joinedAt: now))
            try await GroupInviteStore(connection).use(id: invite.id)
            try await dependencies.audit(connection, at: now, clientIP: client.ip).write(
                .groupMemberJoined, userID: caller.userID,
                details: ["group_id": group.id, "actor": caller.userID, "role": role.rawValue, "invite_id": invite.id,
                          "invited_by": invite.createdBy])
            return (JoinedGroup(group: LanyardGroup(group, memberCount: count + 1, role: role), role: role), false)
        }
        if !alreadyMember { dependencies.signals.accessChanged([caller.userID]) }
        return joined
    }

    /// The invite a code names. Wrong codes count against the account and the client's address, and past the limit
    /// even a right code is refused until the window ends: guessing codes costs the guesser.
    private func find(code: String, caller: Caller, client: ClientInfo) async throws -> (GroupInviteRow, GroupRow) {
        let limiter = dependencies.rateLimiter
        try await limiter.refuseIfLimited(.inviteCode, key: "user:" + caller.userID)
        try await limiter.refuseIfLimited(.inviteCode, key: client.ip.map { "ip:" + $0 })
        let hash = InviteCode.normalize(code).map(InviteCode.hash(normalized:))
        let found = try await dependencies.database.read { connection -> (GroupInviteRow, GroupRow)? in
            guard let hash, let invite = try await GroupInviteStore(connection).find(codeHash: hash),
                  Hashing.isSameSecret(invite.codeHash, hash),
                  let group = try await GroupStore(connection).find(id: invite.groupID) else { return nil }
            return (invite, group)
        }
        guard let found else {
            try await limiter.check(.inviteCode, key: "user:" + caller.userID)
            try await limiter.check(.inviteCode, key: client.ip.map { "ip:" + $0 })
            throw LanyardError.notFound("No such invite")
        }
        return found
    }

    static func checkUsable(_ invite: GroupInviteRow, at now: Date) throws {
        if invite.revokedAt != nil { throw LanyardError.inviteUnusable("revoked") }
        if invite.expiresAt <= now { throw LanyardError.inviteUnusable("expired") }
        if invite.uses >= invite.maxUses { throw LanyardError.inviteUnusable("used_up") }
    }
}
