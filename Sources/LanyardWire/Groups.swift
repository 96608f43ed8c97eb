import Foundation

/// A member's role in a group, highest first: one `owner`, then `admin`, `member`, `viewer`.
///
/// ```swift
/// if group.role >= .admin { showInviteButton() }
/// ```
public enum GroupRole: String, Sendable, Codable, CaseIterable, Comparable {
    case viewer, member, admin, owner

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }

    public static func < (lhs: GroupRole, rhs: GroupRole) -> Bool { lhs.rank < rhs.rank }
}

/// A group for sharing records: a family or a team (`Group` in reference section 14).
///
/// ```swift
/// let family = try await client.groups.create(name: "The Smiths")
/// print(family.id, family.role == .owner)
/// ```
public struct LanyardGroup: Sendable, Codable, Identifiable, Equatable {
    /// A family or a team (the same rules; apps show them differently).
    public enum Kind: String, Sendable, Codable, CaseIterable { case family, team }

    /// What happens to the group when its owner's account is deleted.
    public enum OwnerDeletion: String, Sendable, Codable, CaseIterable {
        /// To the longest-standing admin, else member; dissolved when neither is left.
        case transfer
        /// The group goes with its owner.
        case dissolve
    }

    /// Its id.
    public var id: ID
    /// Its name.
    public var name: String
    /// A family or a team.
    public var kind: Kind
    /// When it was created.
    public var createdAt: Date
    /// What happens to it when its owner's account is deleted.
    public var onOwnerDeleted: OwnerDeletion
    /// Whether members (not only admins) may invite.
    public var membersCanInvite: Bool
    /// How many members it has.
    public var memberCount: Int
    /// The signed-in account's role in it; absent where nobody's is meant (the admin API).
    public var role: GroupRole?
    /// With `GET /v1/groups/{gid}` only: the members, longest-standing first.
    public var members: [GroupMember]?

    /// A group as the server answers it.
    ///
    /// ```swift
    /// let group = LanyardGroup(id: "g1", name: "Family", kind: .family, createdAt: .now, onOwnerDeleted: .transfer,
    ///                          membersCanInvite: false, memberCount: 1, role: .owner)
    /// ```
    public init(id: ID, name: String, kind: Kind, createdAt: Date, onOwnerDeleted: OwnerDeletion,
                membersCanInvite: Bool, memberCount: Int, role: GroupRole?, members: [GroupMember]? = nil) {
        (self.id, self.name, self.kind, self.createdAt) = (id, name, kind, createdAt)
        (self.onOwnerDeleted, self.membersCanInvite, self.memberCount) = (onOwnerDeleted, membersCanInvite, memberCount)
        (self.role, self.members) = (role, members)
    }

    enum CodingKeys: String, CodingKey {
        case id, name, kind, role, members
        case createdAt = "created_at", onOwnerDeleted = "on_owner_deleted", membersCanInvite = "members_can_invite"
        case memberCount = "member_count"
    }
}

/// A member as the group shows it: never an Apple relay address, and an email only where the member shares it.
///
/// ```swift
/// ForEach(group.members ?? []) { Text($0.displayName ?? "Member") }
/// ```
public struct GroupMember: Sendable, Codable, Identifiable, Equatable {
    /// The member's account id.
    public var userID: User.ID
    /// The member's display name, if any (`null` when it has none).
    public var displayName: String?
    /// The role.
    public var role: GroupRole
    /// When the member joined.
    public var joinedAt: Date
    /// The member's email, only where the member shares it; never an Apple relay address.
    public var email: String?

    /// Its id.
    public var id: User.ID { userID }

    /// A member as the server answers it.
    ///
    /// ```swift
    /// let member = GroupMember(userID: "u1", displayName: "Ada", role: .owner, joinedAt: .now)
    /// ```
    public init(userID: User.ID, displayName: String?, role: GroupRole, joinedAt: Date, email: String? = nil) {
        (self.userID, self.displayName, self.role, self.joinedAt, self.email) = (userID, displayName, role, joinedAt, email)
    }

    enum CodingKeys: String, CodingKey {
        case role, email
        case userID = "user_id", displayName = "display_name", joinedAt = "joined_at"
    }

    /// `display_name` always, `null` when there is none; `email` only where shared.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userID, forKey: .userID)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(role, forKey: .role)
        try container.encode(joinedAt, forKey: .joinedAt)
        try container.encodeIfPresent(email, forKey: .email)
    }
}

/// An invite: the code (and a link) to pass on by any channel; `code` and `url` only when just created.
///
/// ```swift
/// let invite = try await client.groups.invite(to: family.id)
/// ShareLink(item: invite.url!)   // or show invite.code, or a QR code of the URL
/// ```
public struct GroupInvite: Sendable, Codable, Identifiable, Equatable {
    /// Its id.
    public var id: ID
    /// Like `K7QMX-2XPDA`: typed in any case, with or without the dash.
    public var code: String?
    /// `<server>/join/<code>`, for a share sheet or a QR code.
    public var url: URL?
    /// The role it grants (at most what its maker may grant when it is accepted).
    public var role: GroupRole
    /// How many accounts may join with it.
    public var maxUses: Int
    /// How many have.
    public var uses: Int
    /// When it stops working.
    public var expiresAt: Date
    /// The member who made it.
    public var createdBy: User.ID

    /// An invite as the server answers it.
    ///
    /// ```swift
    /// let invite = GroupInvite(id: "i1", role: .member, maxUses: 1, uses: 0, expiresAt: .now, createdBy: "u1")
    /// ```
    public init(id: ID, code: String? = nil, url: URL? = nil, role: GroupRole, maxUses: Int, uses: Int,
                expiresAt: Date, createdBy: User.ID) {
        (self.id, self.code, self.url, self.role) = (id, code, url, role)
        (self.maxUses, self.uses, self.expiresAt, self.createdBy) = (maxUses, uses, expiresAt, createdBy)
    }

    enum CodingKeys: String, CodingKey {
        case id, code, url, role, uses
        case maxUses = "max_uses", expiresAt = "expires_at", createdBy = "created_by"
    }
}

/// What accepting a code would join, shown before joining: no members (`GET /v1/invites/{code}`).
///
/// ```swift
/// let preview = try await client.groups.preview(code: typedCode)
/// confirmText = "Join \(preview.groupName) as \(preview.role.rawValue)?"
/// ```
public struct InvitePreview: Sendable, Codable, Equatable {
    /// The group's name.
    public var groupName: String
    /// A family or a team.
    public var kind: LanyardGroup.Kind
    /// How many members it has.
    public var memberCount: Int
    /// The inviting member's display name, if any.
    public var inviterName: String?
    /// The role.
    public var role: GroupRole
    /// When it stops working.
    public var expiresAt: Date

    /// A preview as the server answers it.
    ///
    /// ```swift
    /// let preview = InvitePreview(groupName: "Family", kind: .family, memberCount: 3, inviterName: "Ada",
    ///                             role: .member, expiresAt: .now)
    /// ```
    public init(groupName: String, kind: LanyardGroup.Kind, memberCount: Int, inviterName: String?, role: GroupRole,
                expiresAt: Date) {
        (self.groupName, self.kind, self.memberCount) = (groupName, kind, memberCount)
        (self.inviterName, self.role, self.expiresAt) = (inviterName, role, expiresAt)
    }

    enum CodingKeys: String, CodingKey { case group, inviter, role, expiresAt = "expires_at" }
    enum GroupKeys: String, CodingKey { case name, kind, memberCount = "member_count" }
    enum InviterKeys: String, CodingKey { case displayName = "display_name" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let group = try container.nestedContainer(keyedBy: GroupKeys.self, forKey: .group)
        groupName = try group.decode(String.self, forKey: .name)
        kind = try group.decode(LanyardGroup.Kind.self, forKey: .kind)
        memberCount = try group.decode(Int.self, forKey: .memberCount)
        inviterName = try container.nestedContainer(keyedBy: InviterKeys.self, forKey: .inviter)
            .decodeIfPresent(String.self, forKey: .displayName)
        role = try container.decode(GroupRole.self, forKey: .role)
        expiresAt = try container.decode(Date.self, forKey: .expiresAt)
    }

    /// `{"group": {"name", "kind", "member_count"}, "inviter": {"display_name"}, "role", "expires_at"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var group = container.nestedContainer(keyedBy: GroupKeys.self, forKey: .group)
        try group.encode(groupName, forKey: .name)
        try group.encode(kind, forKey: .kind)
        try group.encode(memberCount, forKey: .memberCount)
        var inviter = container.nestedContainer(keyedBy: InviterKeys.self, forKey: .inviter)
        try inviter.encode(inviterName, forKey: .displayName)
        try container.encode(role, forKey: .role)
        try container.encode(expiresAt, forKey: .expiresAt)
    }
}

/// Who may read and write one of a group's collections; without one, viewers read and members write.
///
/// ```swift
/// try await client.groups.setPolicy(GroupPolicy(read: .viewer, write: .author), for: "chores", in: family.id)
/// ```
public struct GroupPolicy: Sendable, Codable, Equatable {
    /// Who writes: members and up (`.member`), `.admin`, `.owner`, or `.author` (members only what they created,
    /// admins anything).
    public enum Write: String, Sendable, Codable, CaseIterable { case member, admin, owner, author }

    /// The policy of a collection that has none.
    public static let standard = GroupPolicy()

    /// The lowest role that reads the collection: `viewer`, `member` or `admin`.
    public var read: GroupRole
    /// Who writes the collection.
    public var write: Write

    /// A policy.
    ///
    /// ```swift
    /// let secrets = GroupPolicy(read: .admin, write: .owner)
    /// ```
    public init(read: GroupRole = .viewer, write: Write = .member) {
        (self.read, self.write) = (read, write)
    }
}

/// `PUT` and `GET /v1/groups/{gid}/policies/{collection}`: a collection's policy in force.
///
/// ```swift
/// let policy = try WireCoding.decoder().decode(CollectionPolicy.self, from: data)
/// ```
public struct CollectionPolicy: Sendable, Codable, Equatable {
    /// The collection.
    public var collection: String
    /// The lowest role that reads it.
    public var read: GroupRole
    /// Who writes it.
    public var write: GroupPolicy.Write

    /// A collection's policy.
    ///
    /// ```swift
    /// let policy = CollectionPolicy(collection: "chores", policy: GroupPolicy(write: .author))
    /// ```
    public init(collection: String, policy: GroupPolicy) {
        (self.collection, read, write) = (collection, policy.read, policy.write)
    }

    /// The policy alone.
    public var policy: GroupPolicy { GroupPolicy(read: read, write: write) }
}

/// One of a member's own collections shared read-only with a group.
///
/// ```swift
/// for share in try await client.groups.shares(in: family.id) { print(share.userID, share.collection) }
/// ```
public struct GroupShare: Sendable, Codable, Equatable {
    /// The group.
    public var groupID: LanyardGroup.ID
    /// The member's account id.
    public var userID: User.ID
    /// The collection.
    public var collection: String

    /// A share.
    ///
    /// ```swift
    /// let share = GroupShare(groupID: "g1", userID: "u1", collection: "locations")
    /// ```
    public init(groupID: LanyardGroup.ID, userID: User.ID, collection: String) {
        (self.groupID, self.userID, self.collection) = (groupID, userID, collection)
    }

    enum CodingKeys: String, CodingKey { case collection, groupID = "group_id", userID = "user_id" }
}

/// `GET /v1/groups`: the account's groups, each with its role.
public struct GroupList: Sendable, Codable, Equatable {
    public var groups: [LanyardGroup]

    /// A list.
    ///
    /// ```swift
    /// let list = GroupList(groups: [])
    /// ```
    public init(groups: [LanyardGroup]) { self.groups = groups }
}

/// `GET /v1/groups/{gid}/invites`: the pending invites, without their codes.
public struct InviteList: Sendable, Codable, Equatable {
    public var invites: [GroupInvite]

    /// A list.
    ///
    /// ```swift
    /// let list = InviteList(invites: [])
    /// ```
    public init(invites: [GroupInvite]) { self.invites = invites }
}

/// `GET /v1/groups/{gid}/shares`: what members share with the group.
public struct ShareList: Sendable, Codable, Equatable {
    public var shares: [GroupShare]

    /// A list.
    ///
    /// ```swift
    /// let list = ShareList(shares: [])
    /// ```
    public init(shares: [GroupShare]) { self.shares = shares }
}

/// `POST /v1/invites/{code}/accept`: the group joined and the role in it.
public struct JoinedGroup: Sendable, Codable, Equatable {
    public var group: LanyardGroup
    public var role: GroupRole

    /// An answer.
    ///
    /// ```swift
    /// let joined = JoinedGroup(group: family, role: .member)
    /// ```
    public init(group: LanyardGroup, role: GroupRole) { (self.group, self.role) = (group, role) }
}

/// `GET /v1/admin/groups/{gid}`: the group with its members, and its pending invites.
public struct AdminGroupDetails: Sendable, Codable, Equatable {
    public var group: LanyardGroup
    public var invites: [GroupInvite]

    /// An answer.
    ///
    /// ```swift
    /// let details = AdminGroupDetails(group: family, invites: [])
    /// ```
    public init(group: LanyardGroup, invites: [GroupInvite]) { (self.group, self.invites) = (group, invites) }
}

// MARK: Requests

/// The body of `POST /v1/groups` and `PATCH /v1/groups/{gid}`: what is given is set.
///
/// ```swift
/// let body = GroupSettingsBody(name: "The Smiths", kind: .family)
/// ```
public struct GroupSettingsBody: Sendable, Codable, Equatable {
    public var name: String?
    public var kind: LanyardGroup.Kind?
    public var onOwnerDeleted: LanyardGroup.OwnerDeletion?
    public var membersCanInvite: Bool?

    /// A body.
    public init(name: String? = nil, kind: LanyardGroup.Kind? = nil, onOwnerDeleted: LanyardGroup.OwnerDeletion? = nil,
                membersCanInvite: Bool? = nil) {
        (self.name, self.kind, self.onOwnerDeleted, self.membersCanInvite) = (name, kind, onOwnerDeleted, membersCanInvite)
    }

    enum CodingKeys: String, CodingKey {
        case name, kind, onOwnerDeleted = "on_owner_deleted", membersCanInvite = "members_can_invite"
    }
}

/// The body of `POST /v1/groups/{gid}/invites`.
///
/// ```swift
/// let body = InviteBody(role: .member, maxUses: 5, expiresIn: 86_400)
/// ```
public struct InviteBody: Sendable, Codable, Equatable {
    public var role: GroupRole?
    public var maxUses: Int?
    /// Seconds.
    public var expiresIn: Int?

    /// A body.
    public init(role: GroupRole? = nil, maxUses: Int? = nil, expiresIn: Int? = nil) {
        (self.role, self.maxUses, self.expiresIn) = (role, maxUses, expiresIn)
    }

    enum CodingKeys: String, CodingKey { case role, maxUses = "max_uses", expiresIn = "expires_in" }
}

/// The body of `PATCH /v1/groups/{gid}/members/{user_id}` (`role`, by the owner) and `…/members/me`
/// (`share_email`, by the member).
///
/// ```swift
/// let body = MemberBody(role: .admin)
/// ```
public struct MemberBody: Sendable, Codable, Equatable {
    public var role: GroupRole?
    public var shareEmail: Bool?

    /// A body.
    public init(role: GroupRole? = nil, shareEmail: Bool? = nil) { (self.role, self.shareEmail) = (role, shareEmail) }

    enum CodingKeys: String, CodingKey { case role, shareEmail = "share_email" }
}

/// The body of `POST /v1/groups/{gid}/transfer`.
///
/// ```swift
/// let body = TransferBody(userID: newOwner)
/// ```
public struct TransferBody: Sendable, Codable, Equatable {
    public var userID: User.ID

    /// A body.
    public init(userID: User.ID) { self.userID = userID }

    enum CodingKeys: String, CodingKey { case userID = "user_id" }
}

/// The body of `PUT /v1/groups/{gid}/policies/{collection}`: what is absent takes the standard policy's.
///
/// ```swift
/// let body = PolicyBody(read: .admin)
/// ```
public struct PolicyBody: Sendable, Codable, Equatable {
    public var read: GroupRole?
    public var write: GroupPolicy.Write?

    /// A body.
    public init(read: GroupRole? = nil, write: GroupPolicy.Write? = nil) { (self.read, self.write) = (read, write) }
}
