import Foundation
import LanyardStore
import LanyardWire

// The groups' answers are the wire types (`LanyardWire/Groups.swift`), built here from the stored rows.

extension LanyardGroup {
    /// A group with the caller's role in it (`nil` where nobody's is meant: the admin API) and, for one group, its
    /// members.
    init(_ group: GroupRow, memberCount: Int, role: GroupRole?, members: [GroupMember]? = nil) {
        self.init(id: ID(group.id), name: group.name, kind: Kind(rawValue: group.kind) ?? .family, createdAt: group.createdAt,
                  onOwnerDeleted: OwnerDeletion(rawValue: group.onOwnerDeleted) ?? .transfer,
                  membersCanInvite: group.membersCanInvite, memberCount: memberCount, role: role, members: members)
    }
}

extension GroupMember {
    /// A member as a group shows it: the email only where the member shares it, and never an Apple relay address.
    init(_ listing: GroupMemberListing) {
        self.init(userID: User.ID(listing.member.userID), displayName: listing.displayName,
                  role: GroupRole(rawValue: listing.member.role) ?? .viewer, joinedAt: listing.member.joinedAt,
                  email: listing.member.shareEmail ? Self.shareableEmail(listing.emails) : nil)
    }

    /// The first of the account's emails that is not a private relay address.
    static func shareableEmail(_ emails: [(email: String, isPrivate: Bool)]) -> String? {
        emails.first { !$0.isPrivate && !isRelayAddress($0.email) }?.email
    }

    /// Apple's private relay addresses, whatever the identity's flag says.
    static func isRelayAddress(_ email: String) -> Bool {
        email.lowercased().hasSuffix("@privaterelay.appleid.com")
    }
}

extension GroupInvite {
    /// An invite as its group's admins see it; `code` and `url` only in the answer that created it.
    init(_ row: GroupInviteRow, code: String? = nil, url: String? = nil) {
        self.init(id: .init(row.id), code: code, url: url.flatMap(URL.init(string:)), role: GroupRole(rawValue: row.role) ?? .member,
                  maxUses: row.maxUses, uses: row.uses, expiresAt: row.expiresAt, createdBy: User.ID(row.createdBy))
    }
}
