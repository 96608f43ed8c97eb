import Foundation

public struct GroupInviteRow: Sendable, Equatable {
    public var id: String
    public var groupID: String
    /// SHA-256 of the normalized code, hex: the code itself is never stored.
    public var codeHash: String
    public var role: String
    public var maxUses: Int
    public var uses: Int
    public var createdBy: String
    public var createdAt: Date
    public var expiresAt: Date
    public var revokedAt: Date?

    public init(id: String, groupID: String, codeHash: String, role: String, maxUses: Int, createdBy: String,
                createdAt: Date, expiresAt: Date) {
        (self.id, self.groupID, self.codeHash, self.role, self.maxUses, self.uses) = (id, groupID, codeHash, role, maxUses, 0)
        (self.createdBy, self.createdAt, self.expiresAt, self.revokedAt) = (createdBy, createdAt, expiresAt, nil)
    }

    init(row: SQLRow) throws {
        id = try row.string("id")
        groupID = try row.string("group_id")
        codeHash = try row.string("code_hash")
        role = try row.string("role")
        maxUses = Int(try row.integer("max_uses"))
        uses = Int(try row.integer("uses"))
        createdBy = try row.string("created_by")
        createdAt = try row.date("created_at")
        expiresAt = try row.date("expires_at")
        revokedAt = try row.optionalDate("revoked_at")
    }
}

/// The `group_invites` table. Uses are counted under the group row's lock, so an invite is never used more than
/// `max_uses` times.
public struct GroupInviteStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func insert(_ invite: GroupInviteRow) async throws {
        try await connection.query("""
            INSERT INTO group_invites (id, group_id, code_hash, role, max_uses, uses, created_by, created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8)
            """, [.text(invite.id), .text(invite.groupID), .text(invite.codeHash), .text(invite.role),
                  .integer(Int64(invite.maxUses)), .text(invite.createdBy), .date(invite.createdAt),
                  .date(invite.expiresAt)])
    }

    public func find(codeHash: String) async throws -> GroupInviteRow? {
        try await connection.first("SELECT * FROM group_invites WHERE code_hash = $1", [.text(codeHash)])
            .map(GroupInviteRow.init(row:))
    }

    public func find(id: String, groupID: String) async throws -> GroupInviteRow? {
        try await connection.first("SELECT * FROM group_invites WHERE id = $1 AND group_id = $2",
                                   [.text(id), .text(groupID)]).map(GroupInviteRow.init(row:))
    }

    /// Invites that can still be used at `now`, newest first.
    public func pending(groupID: String, at now: Date) async throws -> [GroupInviteRow] {
        try await connection.query("""
            SELECT * FROM group_invites
            WHERE group_id = $1 AND revoked_at IS NULL AND expires_at > $2 AND uses < max_uses
            ORDER BY created_at DESC, id
            """, [.text(groupID), .date(now)]).map(GroupInviteRow.init(row:))
    }

    public func use(id: String) async throws {
        try await connection.query("UPDATE group_invites SET uses = uses + 1 WHERE id = $1", [.text(id)])
    }

    public func revoke(id: String, at now: Date) async throws {
        try await connection.query("UPDATE group_invites SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                                   [.text(id), .date(now)])
    }

    /// Revokes every invite `userID` made in the group that is not revoked yet; the ids it revoked.
    @discardableResult
    public func revokeMadeBy(_ userID: String, groupID: String, at now: Date) async throws -> [String] {
        try await connection.query("""
            UPDATE group_invites SET revoked_at = $3 WHERE group_id = $1 AND created_by = $2 AND revoked_at IS NULL
            RETURNING id
            """, [.text(groupID), .text(userID), .date(now)]).map { try $0.string("id") }
    }
}
