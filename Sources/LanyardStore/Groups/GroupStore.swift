import Foundation

public struct GroupRow: Sendable, Equatable {
    public var id: String
    public var name: String
    public var kind: String
    public var onOwnerDeleted: String
    public var membersCanInvite: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: String, name: String, kind: String, onOwnerDeleted: String, membersCanInvite: Bool, createdAt: Date) {
        (self.id, self.name, self.kind, self.onOwnerDeleted) = (id, name, kind, onOwnerDeleted)
        (self.membersCanInvite, self.createdAt, self.updatedAt) = (membersCanInvite, createdAt, createdAt)
    }

    init(row: SQLRow) throws {
        id = try row.string("id")
        name = try row.string("name")
        kind = try row.string("kind")
        onOwnerDeleted = try row.string("on_owner_deleted")
        membersCanInvite = try row.bool("members_can_invite")
        createdAt = try row.date("created_at")
        updatedAt = try row.date("updated_at")
    }
}

/// A group, an account's role in it, and one collection's stored policy (`read`, `write`) if it has one.
public struct GroupMembershipRow: Sendable {
    public var group: GroupRow
    public var role: String
    public var policy: (read: String, write: String)?
}

/// A group with one account's membership in it and its member count: what `GET /v1/groups` lists.
public struct GroupWithMembership: Sendable {
    public var group: GroupRow
    public var role: String
    public var joinedAt: Date
    public var memberCount: Int
}

/// The `groups` table. Everything that changes a group's members, invites or records locks its row first
/// (`findForUpdate`), so counts checked under that lock (the member limit, pending invites) hold under any
/// concurrency, and a group's record sequences never repeat.
public struct GroupStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func insert(_ group: GroupRow) async throws {
        try await connection.query("""
            INSERT INTO groups (id, name, kind, on_owner_deleted, members_can_invite, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """, [.text(group.id), .text(group.name), .text(group.kind), .text(group.onOwnerDeleted),
                  .bool(group.membersCanInvite), .date(group.createdAt), .date(group.updatedAt)])
    }

    public func find(id: String) async throws -> GroupRow? {
        try await connection.first("SELECT * FROM groups WHERE id = $1", [.text(id)]).map(GroupRow.init(row:))
    }

    public func findForUpdate(id: String) async throws -> GroupRow? {
        try await connection.first("SELECT * FROM groups WHERE id = $1\(connection.dialect.forUpdate)", [.text(id)])
            .map(GroupRow.init(row:))
    }

    public func update(_ group: GroupRow) async throws {
        try await connection.query("""
            UPDATE groups SET name = $2, on_owner_deleted = $3, members_can_invite = $4, updated_at = $5 WHERE id = $1
            """, [.text(group.id), .text(group.name), .text(group.onOwnerDeleted), .bool(group.membersCanInvite),
                  .date(group.updatedAt)])
    }

    /// Dissolves the group: members, invites, records, policies and shares go with it (ON DELETE CASCADE).
    public func delete(id: String) async throws {
        try await connection.query("DELETE FROM groups WHERE id = $1", [.text(id)])
    }

    /// The account's groups, oldest membership first, with its role and each group's member count.
    public func list(userID: String) async throws -> [GroupWithMembership] {
        try await connection.query("""
            SELECT g.*, m.role AS my_role, m.joined_at AS my_joined_at,
                   (SELECT COUNT(*) FROM group_members c WHERE c.group_id = g.id) AS member_count
            FROM group_members m JOIN groups g ON g.id = m.group_id
            WHERE m.user_id = $1 ORDER BY m.joined_at, g.id
            """, [.text(userID)]).map { row in
                GroupWithMembership(group: try GroupRow(row: row), role: try row.string("my_role"),
                                    joinedAt: try row.date("my_joined_at"), memberCount: Int(try row.integer("member_count")))
            }
    }

    /// Groups whose name or id contains `query` (any case), newest first, with their member counts: the admin list.
    public func search(query: String?, limit: Int) async throws -> [(group: GroupRow, memberCount: Int)] {
        let pattern = "%" + (query ?? "").lowercased()
            .replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        return try await connection.query("""
            SELECT g.*, (SELECT COUNT(*) FROM group_members c WHERE c.group_id = g.id) AS member_count
            FROM groups g WHERE LOWER(g.name) LIKE $1 ESCAPE '\\' OR g.id LIKE $1 ESCAPE '\\'
            ORDER BY g.created_at DESC, g.id LIMIT $2
            """, [.text(pattern), .integer(Int64(limit))]).map { row in
                (try GroupRow(row: row), Int(try row.integer("member_count")))
            }
    }

    /// A group with one account's role in it and, when `collection` is given, that collection's stored policy, in one
    /// query (a group request's whole access check); `nil` when the group does not exist or the account is not in
    /// it. `lock` takes the group row's lock first, in a statement of its own: a join that waited for the lock would
    /// answer the role as it was when it began (PostgreSQL's read committed), a role another request just changed.
    public func membership(groupID: String, userID: String, collection: String? = nil,
                           lock: Bool = false) async throws -> GroupMembershipRow? {
        if lock {
            guard try await connection.first("SELECT id FROM groups WHERE id = $1\(connection.dialect.forUpdate)",
                                             [.text(groupID)]) != nil else { return nil }
        }
        return try await connection.first("""
            SELECT g.*, m.role AS member_role, p.read_role, p.write_role
            FROM groups g JOIN group_members m ON m.group_id = g.id AND m.user_id = $2
            LEFT JOIN group_policies p ON p.group_id = g.id AND p.collection = $3
            WHERE g.id = $1
            """, [.text(groupID), .text(userID), .text(collection ?? "")]).map { row in
                GroupMembershipRow(group: try GroupRow(row: row), role: try row.string("member_role"),
                                   policy: try row.optionalString("read_role").map { ($0, try row.string("write_role")) })
            }
    }

    // MARK: Collection policies

    public func policy(groupID: String, collection: String) async throws -> (read: String, write: String)? {
        try await connection.first("""
            SELECT read_role, write_role FROM group_policies WHERE group_id = $1 AND collection = $2
            """, [.text(groupID), .text(collection)]).map { (try $0.string("read_role"), try $0.string("write_role")) }
    }

    public func setPolicy(groupID: String, collection: String, read: String, write: String) async throws {
        try await connection.query("""
            INSERT INTO group_policies (group_id, collection, read_role, write_role) VALUES ($1, $2, $3, $4)
            ON CONFLICT (group_id, collection) DO UPDATE SET read_role = excluded.read_role, write_role = excluded.write_role
            """, [.text(groupID), .text(collection), .text(read), .text(write)])
    }
}
