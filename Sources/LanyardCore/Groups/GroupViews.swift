import Foundation
import LanyardStore
import LanyardSupport

/// `Group` (reference section 14), with the caller's role in it.
public struct GroupView: JSONWritable, Sendable {
    public var id: String
    public var name: String
    public var kind: String
    public var createdAt: Date
    public var onOwnerDeleted: String
    public var membersCanInvite: Bool
    public var memberCount: Int
    /// The caller's role; `nil` where nobody's is meant (the admin API).
    public var role: String?
    /// With `GET /v1/groups/{gid}`: the members.
    public var members: [GroupMemberView]?

    init(_ group: GroupRow, memberCount: Int, role: String?, members: [GroupMemberView]? = nil) {
        (id, name, kind, createdAt) = (group.id, group.name, group.kind, group.createdAt)
        (onOwnerDeleted, membersCanInvite) = (group.onOwnerDeleted, group.membersCanInvite)
        (self.memberCount, self.role, self.members) = (memberCount, role, members)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("id"); json.string(id)
            json.key("name"); json.string(name)
            json.key("kind"); json.string(kind)
            json.key("created_at"); json.date(createdAt)
            json.key("on_owner_deleted"); json.string(onOwnerDeleted)
            json.key("members_can_invite"); json.bool(membersCanInvite)
            json.key("member_count"); json.integer(Int64(memberCount))
            if let role { json.key("role"); json.string(role) }
            if let members { json.key("members"); json.array(members) { $0.value($1) } }
        }
    }
}

/// A member as a group shows it: the email only where the member shares it, and never an Apple relay address.
public struct GroupMemberView: JSONWritable, Sendable {
    public var userID: String
    public var displayName: String?
    public var role: String
    public var joinedAt: Date
    public var email: String?

    init(_ listing: GroupMemberListing) {
        userID = listing.member.userID
        displayName = listing.displayName
        role = listing.member.role
        joinedAt = listing.member.joinedAt
        email = listing.member.shareEmail ? Self.shareableEmail(listing.emails) : nil
    }

    /// The first of the account's emails that is not a private relay address.
    static func shareableEmail(_ emails: [(email: String, isPrivate: Bool)]) -> String? {
        emails.first { !$0.isPrivate && !isRelayAddress($0.email) }?.email
    }

    /// Apple's private relay addresses, whatever the identity's flag says.
    static func isRelayAddress(_ email: String) -> Bool {
        email.lowercased().hasSuffix("@privaterelay.appleid.com")
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("user_id"); json.string(userID)
            json.key("display_name"); json.string(displayName)
            json.key("role"); json.string(role)
            json.key("joined_at"); json.date(joinedAt)
            if let email { json.key("email"); json.string(email) }
        }
    }
}

public struct GroupList: JSONWritable, Sendable {
    public var groups: [GroupView]

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("groups"); json.array(groups) { $0.value($1) }
        }
    }
}

/// An invite as its group's admins see it; `code` and `url` only in the answer that created it.
public struct InviteView: JSONWritable, Sendable {
    public var id: String
    public var role: String
    public var maxUses: Int
    public var uses: Int
    public var expiresAt: Date
    public var createdBy: String
    public var code: String?
    public var url: String?

    init(_ row: GroupInviteRow, code: String? = nil, url: String? = nil) {
        (id, role, maxUses, uses, expiresAt, createdBy) = (row.id, row.role, row.maxUses, row.uses, row.expiresAt, row.createdBy)
        (self.code, self.url) = (code, url)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("id"); json.string(id)
            if let code { json.key("code"); json.string(code) }
            if let url { json.key("url"); json.string(url) }
            json.key("role"); json.string(role)
            json.key("max_uses"); json.integer(Int64(maxUses))
            json.key("uses"); json.integer(Int64(uses))
            json.key("expires_at"); json.date(expiresAt)
            json.key("created_by"); json.string(createdBy)
        }
    }
}

public struct InviteList: JSONWritable, Sendable {
    public var invites: [InviteView]

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("invites"); json.array(invites) { $0.value($1) }
        }
    }
}

/// `GET /v1/invites/{code}`: enough to decide whether to join, nothing about the members.
public struct InvitePreview: JSONWritable, Sendable {
    public var groupName: String
    public var kind: String
    public var memberCount: Int
    public var inviterName: String?
    public var role: String
    public var expiresAt: Date

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("group"); json.object { group in
                group.key("name"); group.string(groupName)
                group.key("kind"); group.string(kind)
                group.key("member_count"); group.integer(Int64(memberCount))
            }
            json.key("inviter"); json.object { inviter in
                inviter.key("display_name"); inviter.string(inviterName)
            }
            json.key("role"); json.string(role)
            json.key("expires_at"); json.date(expiresAt)
        }
    }
}

/// `POST /v1/invites/{code}/accept` → `{"group", "role"}`.
public struct JoinedGroup: JSONWritable, Sendable {
    public var group: GroupView
    public var role: String
    /// Whether the account was already a member (no use of the invite spent).
    public var alreadyMember: Bool

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("group"); json.value(group)
            json.key("role"); json.string(role)
        }
    }
}
