import Foundation
import LanyardStore
import LanyardWire
import LanyardSupport

/// Groups for family sharing (reference section 14): creating, listing, reading, changing and dissolving them.
/// Members, invites and group records have services of their own.
public struct Groups: Sendable {
    public static let maximumNameLength = 100
    public static let maximumNameBytes = 400

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// `POST /v1/groups`: the caller becomes its owner. Guests (anonymous accounts) may join groups but not create them.
    public func create(_ settings: GroupSettingsBody, caller: Caller, client: ClientInfo) async throws -> LanyardGroup {
        guard !caller.isAnonymous else {
            throw LanyardError(.forbidden, "Sign in with Apple or Google to create a group")
        }
        let name = try Self.name(settings.name)
        let kind = settings.kind ?? .family
        let rule = settings.onOwnerDeleted ?? .transfer
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let group = GroupRow(id: dependencies.random.newID(at: now), name: name, kind: kind.rawValue,
                             onOwnerDeleted: rule.rawValue, membersCanInvite: settings.membersCanInvite ?? false,
                             createdAt: now)
        try await dependencies.database.transaction { connection in
            try await DataRecords.lockOwner(caller, connection)
            try await Self.checkRoomForAnotherGroup(userID: caller.userID, connection, dependencies)
            try await GroupStore(connection).insert(group)
            try await GroupMemberStore(connection).insert(
                GroupMemberRow(groupID: group.id, userID: caller.userID, role: GroupRole.owner.rawValue, joinedAt: now))
            try await dependencies.audit(connection, at: now, clientIP: client.ip).write(
                .groupCreated, userID: caller.userID, details: ["group_id": group.id, "actor": caller.userID,
                                                                "name": group.name])
        }
        dependencies.signals.accessChanged([caller.userID])
        return LanyardGroup(group, memberCount: 1, role: .owner)
    }

    /// `GET /v1/groups`: the caller's groups, oldest membership first.
    public func list(caller: Caller) async throws -> GroupList {
        let rows = try await dependencies.database.read { try await GroupStore($0).list(userID: caller.userID) }
        return GroupList(groups: rows.map { LanyardGroup($0.group, memberCount: $0.memberCount, role: GroupRole(rawValue: $0.role)) })
    }

    /// `GET /v1/groups/{gid}`: the group with its members.
    public func get(_ groupID: String, caller: Caller) async throws -> LanyardGroup {
        try await dependencies.database.read { connection in
            let membership = try await GroupMembership.require(groupID, userID: caller.userID, connection)
            let members = try await GroupMemberStore(connection).listing(groupID: groupID).map(GroupMember.init)
            return LanyardGroup(membership.group, memberCount: members.count, role: membership.role,
                             members: members)
        }
    }

    /// `PATCH /v1/groups/{gid}` (owner and admins).
    public func update(_ groupID: String, _ settings: GroupSettingsBody, caller: Caller,
                       client: ClientInfo) async throws -> LanyardGroup {
        let name = try settings.name.map { try Self.name($0) }
        let rule = settings.onOwnerDeleted
        if settings.kind != nil { throw LanyardError.invalidRequest(field: "kind", "A group's kind cannot change") }
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        return try await dependencies.database.transaction { connection in
            let membership = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            try membership.require(.admin)
            var group = membership.group
            let changed = Self.changes(from: group, name: name, rule: rule, membersCanInvite: settings.membersCanInvite)
            group.name = name ?? group.name
            group.onOwnerDeleted = rule?.rawValue ?? group.onOwnerDeleted
            group.membersCanInvite = settings.membersCanInvite ?? group.membersCanInvite
            group.updatedAt = now
            try await GroupStore(connection).update(group)
            try await dependencies.audit(connection, at: now, clientIP: client.ip).write(
                .groupUpdated, userID: caller.userID,
                details: ["group_id": group.id, "actor": caller.userID, "changed": changed.joined(separator: ",")])
            let count = try await GroupMemberStore(connection).count(groupID: groupID)
            return LanyardGroup(group, memberCount: count, role: membership.role)
        }
    }

    /// `DELETE /v1/groups/{gid}`: the owner, signed in recently, dissolves the group.
    public func dissolve(_ groupID: String, caller: Caller, client: ClientInfo) async throws {
        let members = try await dependencies.database.transaction { [dependencies] connection in
            let membership = try await GroupMembership.require(groupID, userID: caller.userID, connection, lock: true)
            try membership.require(.owner)
            try Authenticator(dependencies).requireRecentSignIn(caller)
            return try await Self.remove(membership.group, actor: caller.userID, connection, dependencies,
                                         clientIP: client.ip)
        }
        dependencies.signals.accessChanged(members)
    }

    /// An operator's dissolution (`DELETE /v1/admin/groups/{gid}`, `lanyard groups dissolve`).
    public func dissolveByAdmin(_ groupID: String, client: ClientInfo) async throws {
        let members = try await dependencies.database.transaction { [dependencies] connection in
            guard let group = try await GroupStore(connection).findForUpdate(id: groupID) else {
                throw LanyardError.noSuchGroup
            }
            return try await Self.remove(group, actor: "admin", connection, dependencies, clientIP: client.ip)
        }
        dependencies.signals.accessChanged(members)
    }

    /// Deletes the group with everything in it, audited; returns its former members, whose feeds lose it.
    static func remove(_ group: GroupRow, actor: String, _ connection: any DatabaseConnection,
                       _ dependencies: CoreDependencies, clientIP: String?) async throws -> [String] {
        let members = try await GroupMemberStore(connection).list(groupID: group.id).map(\.userID)
        try await GroupStore(connection).delete(id: group.id)
        for member in members { try await GroupMemberStore(connection).refreshClaims(userID: member) }
        try await dependencies.audit(connection, at: dependencies.clock.now(), clientIP: clientIP).write(
            .groupDeleted, userID: actor == "admin" ? nil : actor,
            details: ["group_id": group.id, "actor": actor, "members": members.joined(separator: ",")])
        return members
    }

    /// `LANYARD_GROUPS_PER_ACCOUNT`, counted under the account row's lock.
    static func checkRoomForAnotherGroup(userID: String, _ connection: any DatabaseConnection,
                                         _ dependencies: CoreDependencies) async throws {
        guard try await GroupMemberStore(connection).count(userID: userID) < dependencies.groupsPerAccount else {
            throw LanyardError.groupLimit("too_many_groups", limit: dependencies.groupsPerAccount)
        }
    }

    /// At most `maximumNameLength` characters, and `maximumNameBytes` in UTF-8 (a few characters can be made of
    /// many combining marks).
    static func name(_ text: String?) throws -> String {
        let name = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= maximumNameLength, name.utf8.count <= maximumNameBytes else {
            throw LanyardError.invalidRequest(field: "name", """
                name must be 1 to \(maximumNameLength) characters and at most \(maximumNameBytes) bytes
                """)
        }
        return name
    }

    /// The settings a `PATCH` changes, by their field names (what `group.updated` says).
    static func changes(from group: GroupRow, name: String?, rule: LanyardGroup.OwnerDeletion?,
                        membersCanInvite: Bool?) -> [String] {
        var changed: [String] = []
        if let name, name != group.name { changed.append("name") }
        if let rule, rule.rawValue != group.onOwnerDeleted { changed.append("on_owner_deleted") }
        if let membersCanInvite, membersCanInvite != group.membersCanInvite { changed.append("members_can_invite") }
        return changed
    }
}
