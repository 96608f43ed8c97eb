import Foundation

extension LanyardClient {
    /// Groups for family sharing: create one, invite with a code that travels by any channel, join, share records.
    ///
    /// ```swift
    /// let family = try await client.groups.create(name: "The Smiths")
    /// let invite = try await client.groups.invite(to: family.id)
    /// // on the child's device:
    /// let joined = try await childClient.groups.join(code: invite.code!)
    /// ```
    public nonisolated var groups: LanyardGroups { LanyardGroups(client: self) }
}

/// The signed-in account's groups (reference section 14). Every call checks membership on the server: a member
/// removed elsewhere gets `.notFound` on the next call, whatever its token says.
///
/// ```swift
/// for group in try await client.groups.list() { print(group.name, group.role ?? .viewer) }
/// ```
public struct LanyardGroups: Sendable {
    let client: LanyardClient

    /// Creates a group; the account is its owner. Guests cannot create groups (`.forbidden`) but can join one.
    ///
    /// ```swift
    /// let family = try await client.groups.create(name: "The Smiths", onOwnerDeleted: .transfer)
    /// ```
    public func create(name: String, kind: LanyardGroup.Kind = .family, onOwnerDeleted: LanyardGroup.OwnerDeletion = .transfer,
                       membersCanInvite: Bool = false) async throws -> LanyardGroup {
        try await send("POST", "v1/groups", GroupSettingsBody(name: name, kind: kind, onOwnerDeleted: onOwnerDeleted,
                                                             membersCanInvite: membersCanInvite))
    }

    /// The account's groups, oldest membership first, each with the account's role.
    ///
    /// ```swift
    /// let groups = try await client.groups.list()
    /// ```
    public func list() async throws -> [LanyardGroup] {
        try await client.sendAuthorized(APIRequest("GET", "v1/groups"), as: GroupList.self).groups
    }

    /// One group with its members.
    ///
    /// ```swift
    /// let family = try await client.groups.group(familyID)
    /// print(family.members?.map(\.displayName))
    /// ```
    public func group(_ id: LanyardGroup.ID) async throws -> LanyardGroup {
        try await client.sendAuthorized(APIRequest("GET", "v1/groups/\(id)"), as: LanyardGroup.self)
    }

    /// Renames the group or changes its settings (owner and admins).
    ///
    /// ```swift
    /// try await client.groups.update(family.id, name: "Smith family", membersCanInvite: true)
    /// ```
    @discardableResult
    public func update(_ id: LanyardGroup.ID, name: String? = nil, onOwnerDeleted: LanyardGroup.OwnerDeletion? = nil,
                       membersCanInvite: Bool? = nil) async throws -> LanyardGroup {
        try await send("PATCH", "v1/groups/\(id)", GroupSettingsBody(name: name, onOwnerDeleted: onOwnerDeleted,
                                                                    membersCanInvite: membersCanInvite))
    }

    /// Dissolves the group with its records (the owner; `.reauthenticationRequired` after a while without signing in).
    ///
    /// ```swift
    /// try await client.groups.dissolve(family.id)
    /// ```
    public func dissolve(_ id: LanyardGroup.ID) async throws {
        try await client.sendAuthorized(APIRequest("DELETE", "v1/groups/\(id)"))
    }

    /// A new invite: pass `code` or `url` on by message, AirDrop or a QR code. Shown only now.
    ///
    /// ```swift
    /// let invite = try await client.groups.invite(to: family.id, role: .member, maxUses: 3)
    /// shareSheet(invite.url!)
    /// ```
    public func invite(to groupID: LanyardGroup.ID, role: GroupRole = .member, maxUses: Int = 1,
                       expiresIn: TimeInterval = 7 * 86_400) async throws -> GroupInvite {
        try await send("POST", "v1/groups/\(groupID)/invites",
                       InviteBody(role: role, maxUses: maxUses, expiresIn: Int(expiresIn)))
    }

    /// Pending invites (owner and admins), without their codes.
    ///
    /// ```swift
    /// let pending = try await client.groups.invites(in: family.id)
    /// ```
    public func invites(in groupID: LanyardGroup.ID) async throws -> [GroupInvite] {
        try await client.sendAuthorized(APIRequest("GET", "v1/groups/\(groupID)/invites"), as: InviteList.self).invites
    }

    /// Revokes an invite: its code stops working.
    ///
    /// ```swift
    /// try await client.groups.revokeInvite(invite.id, in: family.id)
    /// ```
    public func revokeInvite(_ inviteID: String, in groupID: LanyardGroup.ID) async throws {
        try await client.sendAuthorized(APIRequest("DELETE", "v1/groups/\(groupID)/invites/\(inviteID)"))
    }

    /// What a code joins, to show before joining. `.notFound` for a wrong code, `.inviteUnusable` for an expired,
    /// revoked or used-up one.
    ///
    /// ```swift
    /// let preview = try await client.groups.preview(code: "k7qmx2xpda")
    /// ```
    public func preview(code: String) async throws -> InvitePreview {
        try await client.sendAuthorized(APIRequest("GET", "v1/invites/\(Self.pathCode(code))"), as: InvitePreview.self)
    }

    /// Joins the group a code invites to (a member already: the group as it is). Accepts a code as shown, typed in
    /// any case with or without the dash, or the invite's URL.
    ///
    /// ```swift
    /// let family = try await client.groups.join(code: scannedURL.absoluteString)
    /// ```
    @discardableResult
    public func join(code: String) async throws -> LanyardGroup {
        try await client.sendAuthorized(APIRequest("POST", "v1/invites/\(Self.pathCode(code))/accept"), as: JoinedGroup.self).group
    }

    /// Changes a member's role (the owner). Ownership moves by `transfer(_:to:)`.
    ///
    /// ```swift
    /// try await client.groups.setRole(.admin, of: member.userID, in: family.id)
    /// ```
    @discardableResult
    public func setRole(_ role: GroupRole, of userID: User.ID, in groupID: LanyardGroup.ID) async throws -> GroupMember {
        try await send("PATCH", "v1/groups/\(groupID)/members/\(userID)", MemberBody(role: role))
    }

    /// Whether the other members see this account's email (never an Apple relay address).
    ///
    /// ```swift
    /// try await client.groups.shareEmail(true, in: family.id)
    /// ```
    @discardableResult
    public func shareEmail(_ share: Bool, in groupID: LanyardGroup.ID) async throws -> GroupMember {
        try await send("PATCH", "v1/groups/\(groupID)/members/me", MemberBody(shareEmail: share))
    }

    /// Removes a member (the owner anyone, admins members and viewers).
    ///
    /// ```swift
    /// try await client.groups.remove(member.userID, from: family.id)
    /// ```
    public func remove(_ userID: User.ID, from groupID: LanyardGroup.ID) async throws {
        try await client.sendAuthorized(APIRequest("DELETE", "v1/groups/\(groupID)/members/\(userID)"))
    }

    /// Leaves the group; the owner gets `.ownerMustTransfer`.
    ///
    /// ```swift
    /// try await client.groups.leave(family.id)
    /// ```
    public func leave(_ groupID: LanyardGroup.ID) async throws {
        try await client.sendAuthorized(APIRequest("POST", "v1/groups/\(groupID)/leave"))
    }

    /// Hands the group to another member, who becomes owner; this account becomes an admin.
    ///
    /// ```swift
    /// try await client.groups.transfer(family.id, to: partner.userID)
    /// ```
    @discardableResult
    public func transfer(_ groupID: LanyardGroup.ID, to userID: User.ID) async throws -> LanyardGroup {
        try await send("POST", "v1/groups/\(groupID)/transfer", TransferBody(userID: userID))
    }

    /// Sets who reads and writes one of the group's collections (owner and admins).
    ///
    /// ```swift
    /// try await client.groups.setPolicy(GroupPolicy(write: .author), for: "chores", in: family.id)
    /// ```
    public func setPolicy(_ policy: GroupPolicy, for collection: String, in groupID: LanyardGroup.ID) async throws {
        let _: CollectionPolicy = try await send("PUT", "v1/groups/\(groupID)/policies/\(collection)",
                                                 PolicyBody(read: policy.read, write: policy.write))
    }

    /// Shares one of this account's own collections with the group, read-only for the others.
    ///
    /// ```swift
    /// try await client.groups.share("locations", with: family.id)
    /// ```
    public func share(_ collection: String, with groupID: LanyardGroup.ID) async throws {
        try await client.sendAuthorized(APIRequest("PUT", "v1/groups/\(groupID)/shares/\(collection)"))
    }

    /// Stops sharing a collection with the group.
    ///
    /// ```swift
    /// try await client.groups.unshare("locations", from: family.id)
    /// ```
    public func unshare(_ collection: String, from groupID: LanyardGroup.ID) async throws {
        try await client.sendAuthorized(APIRequest("DELETE", "v1/groups/\(groupID)/shares/\(collection)"))
    }

    /// The collections members share with the group.
    ///
    /// ```swift
    /// let shared = try await client.groups.shares(in: family.id)
    /// ```
    public func shares(in groupID: LanyardGroup.ID) async throws -> [GroupShare] {
        try await client.sendAuthorized(APIRequest("GET", "v1/groups/\(groupID)/shares"), as: ShareList.self).shares
    }

    private func send<Body: Encodable & Sendable, Response: Decodable & Sendable>(_ method: String, _ path: String,
                                                                      _ body: Body) async throws -> Response {
        try await client.sendAuthorized(try APIRequest(method, path, json: body), as: Response.self)
    }

    /// The code from what the person has: the code itself, or the invite's URL (`…/join/<code>`).
    static func pathCode(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let code = trimmed.range(of: "/join/").map { String(trimmed[$0.upperBound...]) } ?? trimmed
        return code.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/")))
            ?? code
    }
}
