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

/// A group for sharing records: a family or a team.
///
/// ```swift
/// let family = try await client.groups.create(name: "The Smiths")
/// print(family.id, family.role == .owner)
/// ```
public struct LanyardGroup: Sendable, Decodable, Identifiable, Equatable {
    /// A family or a team (the same rules; apps show them differently).
    public enum Kind: String, Sendable, Codable { case family, team }

    /// What happens to the group when its owner's account is deleted.
    public enum OwnerDeletion: String, Sendable, Codable {
        /// To the longest-standing admin, else member; dissolved when nobody is left.
        case transfer
        /// The group goes with its owner.
        case dissolve
    }

    /// Its id.
    public var id: String
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
    /// The signed-in account's role in it.
    public var role: GroupRole?
    /// With `LanyardGroups.group(_:)` only: the members, longest-standing first.
    public var members: [GroupMember]?

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
public struct GroupMember: Sendable, Decodable, Identifiable, Equatable {
    /// The member's account id.
    public var userID: String
    /// The member's display name, if any.
    public var displayName: String?
    /// The role.
    public var role: GroupRole
    /// When the member joined.
    public var joinedAt: Date
    /// The member's email, only where the member shares it; never an Apple relay address.
    public var email: String?

    /// Its id.
    public var id: String { userID }

    enum CodingKeys: String, CodingKey {
        case role, email
        case userID = "user_id", displayName = "display_name", joinedAt = "joined_at"
    }
}

/// An invite: the code (and a link) to pass on by any channel; `code` and `url` only when just created.
///
/// ```swift
/// let invite = try await client.groups.invite(to: family.id)
/// ShareLink(item: invite.url!)   // or show invite.code, or a QR code of the URL
/// ```
public struct GroupInvite: Sendable, Decodable, Identifiable, Equatable {
    /// Its id.
    public var id: String
    /// Like `K7QMX-2XPDA`: typed in any case, with or without the dash.
    public var code: String?
    /// `<server>/join/<code>`, for a share sheet or a QR code.
    public var url: URL?
    /// The role.
    public var role: GroupRole
    /// How many accounts may join with it.
    public var maxUses: Int
    /// How many have.
    public var uses: Int
    /// When it stops working.
    public var expiresAt: Date
    /// The member who made it.
    public var createdBy: String

    enum CodingKeys: String, CodingKey {
        case id, code, url, role, uses
        case maxUses = "max_uses", expiresAt = "expires_at", createdBy = "created_by"
    }
}

/// What accepting a code would join, shown before joining: no members.
///
/// ```swift
/// let preview = try await client.groups.preview(code: typedCode)
/// confirmText = "Join \(preview.groupName) as \(preview.role.rawValue)?"
/// ```
public struct InvitePreview: Sendable, Decodable, Equatable {
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
}

/// Who may read and write one of a group's collections.
///
/// ```swift
/// try await client.groups.setPolicy(GroupPolicy(read: .viewer, write: .author), for: "chores", in: family.id)
/// ```
public struct GroupPolicy: Sendable, Codable, Equatable {
    /// Who writes: members and up (`.member`), `.admin`, `.owner`, or `.author` (members only what they created).
    public enum Write: String, Sendable, Codable { case member, admin, owner, author }

    /// The lowest role that reads the collection.
    public var read: GroupRole
    /// Who writes the collection.
    public var write: Write

    public init(read: GroupRole = .viewer, write: Write = .member) {
        (self.read, self.write) = (read, write)
    }
}

/// One of a member's own collections shared read-only with a group.
///
/// ```swift
/// for share in try await client.groups.shares(in: family.id) { print(share.userID, share.collection) }
/// ```
public struct GroupShare: Sendable, Decodable, Equatable {
    /// The group.
    public var groupID: String
    /// The member's account id.
    public var userID: String
    /// The collection.
    public var collection: String

    enum CodingKeys: String, CodingKey { case collection, groupID = "group_id", userID = "user_id" }
}

struct GroupListBody: Decodable { var groups: [LanyardGroup] }
struct InviteListBody: Decodable { var invites: [GroupInvite] }
struct ShareListBody: Decodable { var shares: [GroupShare] }
struct JoinBody: Decodable { var group: LanyardGroup; var role: GroupRole }
