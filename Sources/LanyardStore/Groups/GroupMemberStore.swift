import Foundation

public struct GroupMemberRow: Sendable, Equatable {
    public var groupID: String
    public var userID: String
    public var role: String
    public var joinedAt: Date
    public var shareEmail: Bool

    public init(groupID: String, userID: String, role: String, joinedAt: Date, shareEmail: Bool = false) {
        (self.groupID, self.userID, self.role, self.joinedAt, self.shareEmail) = (groupID, userID, role, joinedAt, shareEmail)
    }

    init(row: SQLRow) throws {
        groupID = try row.string("group_id")
        userID = try row.string("user_id")
        role = try row.string("role")
        joinedAt = try row.date("joined_at")
        shareEmail = try row.bool("share_email")
    }
}

/// A member as the group's member list shows it: the membership, the account's display name, and its emails with
/// whether each is a private relay address (the list shows one only where the member shares it, never a relay).
public struct GroupMemberListing: Sendable {
    public var member: GroupMemberRow
    public var displayName: String?
    public var emails: [(email: String, isPrivate: Bool)]
}

/// The `group_members` table. At most one owner per group is the database's (a unique partial index); the member
/// limit is checked under the group row's lock (`GroupStore.findForUpdate`).
public struct GroupMemberStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func insert(_ member: GroupMemberRow) async throws {
        try await connection.query("""
            INSERT INTO group_members (group_id, user_id, role, joined_at, share_email) VALUES ($1, $2, $3, $4, $5)
            """, [.text(member.groupID), .text(member.userID), .text(member.role), .date(member.joinedAt),
                  .bool(member.shareEmail)])
        try await refreshClaims(userID: member.userID)
    }

    /// Rewrites `users.group_claims` from the account's memberships: after every change to them, in its transaction.
    public func refreshClaims(userID: String) async throws {
        let claims = try await memberships(userID: userID).map { "\($0.groupID):\($0.role)" }.joined(separator: ",")
        try await connection.query("UPDATE users SET group_claims = $2 WHERE id = $1",
                                   [.text(userID), .optionalText(claims.isEmpty ? nil : claims)])
    }

    public func find(groupID: String, userID: String) async throws -> GroupMemberRow? {
        try await connection.first("SELECT * FROM group_members WHERE group_id = $1 AND user_id = $2",
                                   [.text(groupID), .text(userID)]).map(GroupMemberRow.init(row:))
    }

    /// The group's members, longest-standing first (joined in the same millisecond: the higher role first).
    public func list(groupID: String) async throws -> [GroupMemberRow] {
        try await connection.query("""
            SELECT * FROM group_members WHERE group_id = $1
            ORDER BY joined_at, CASE role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 WHEN 'member' THEN 2 ELSE 3 END, user_id
            """, [.text(groupID)]).map(GroupMemberRow.init(row:))
    }

    /// The group's members with what the member list may show of their accounts.
    public func listing(groupID: String) async throws -> [GroupMemberListing] {
        let members = try await list(groupID: groupID)
        let rows = try await connection.query("""
            SELECT m.user_id, u.display_name, i.email, i.is_private_email
            FROM group_members m JOIN users u ON u.id = m.user_id
            LEFT JOIN identities i ON i.user_id = m.user_id
            WHERE m.group_id = $1 ORDER BY m.user_id, i.link_position
            """, [.text(groupID)])
        var names: [String: String] = [:]
        var emails: [String: [(email: String, isPrivate: Bool)]] = [:]
        for row in rows {
            let userID = try row.string("user_id")
            names[userID] = try row.optionalString("display_name")
            if let email = try row.optionalString("email") {
                emails[userID, default: []].append((email, (try row.optionalInteger("is_private_email") ?? 0) != 0))
            }
        }
        return members.map { GroupMemberListing(member: $0, displayName: names[$0.userID], emails: emails[$0.userID] ?? []) }
    }

    public func count(groupID: String) async throws -> Int {
        Int(try await connection.first("SELECT COUNT(*) AS n FROM group_members WHERE group_id = $1",
                                       [.text(groupID)])?.integer("n") ?? 0)
    }

    /// How many groups the account belongs to.
    public func count(userID: String) async throws -> Int {
        Int(try await connection.first("SELECT COUNT(*) AS n FROM group_members WHERE user_id = $1",
                                       [.text(userID)])?.integer("n") ?? 0)
    }

    /// The account's memberships, oldest first.
    public func memberships(userID: String) async throws -> [GroupMemberRow] {
        try await connection.query("SELECT * FROM group_members WHERE user_id = $1 ORDER BY joined_at, group_id",
                                   [.text(userID)]).map(GroupMemberRow.init(row:))
    }

    public func setRole(groupID: String, userID: String, role: String) async throws {
        try await connection.query("UPDATE group_members SET role = $3 WHERE group_id = $1 AND user_id = $2",
                                   [.text(groupID), .text(userID), .text(role)])
        try await refreshClaims(userID: userID)
    }

    public func setShareEmail(groupID: String, userID: String, share: Bool) async throws {
        try await connection.query("UPDATE group_members SET share_email = $3 WHERE group_id = $1 AND user_id = $2",
                                   [.text(groupID), .text(userID), .bool(share)])
    }

    /// Removes the membership and the collections the member shared with the group.
    public func remove(groupID: String, userID: String) async throws {
        try await connection.query("DELETE FROM group_shares WHERE group_id = $1 AND user_id = $2",
                                   [.text(groupID), .text(userID)])
        try await connection.query("DELETE FROM group_members WHERE group_id = $1 AND user_id = $2",
                                   [.text(groupID), .text(userID)])
        try await refreshClaims(userID: userID)
    }
}
