import Foundation

/// The `group_shares` table: a member's own collections shared read-only with a group.
public struct GroupShareStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func share(groupID: String, userID: String, collection: String, at now: Date) async throws {
        try await connection.query("""
            INSERT INTO group_shares (group_id, user_id, collection, shared_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (group_id, user_id, collection) DO NOTHING
            """, [.text(groupID), .text(userID), .text(collection), .date(now)])
    }

    public func unshare(groupID: String, userID: String, collection: String) async throws {
        try await connection.query("DELETE FROM group_shares WHERE group_id = $1 AND user_id = $2 AND collection = $3",
                                   [.text(groupID), .text(userID), .text(collection)])
    }

    public func isShared(groupID: String, userID: String, collection: String) async throws -> Bool {
        try await connection.first("""
            SELECT 1 AS found FROM group_shares WHERE group_id = $1 AND user_id = $2 AND collection = $3
            """, [.text(groupID), .text(userID), .text(collection)]) != nil
    }

    /// The collections members share with the group: (member, collection), in the order they were shared.
    public func list(groupID: String) async throws -> [(userID: String, collection: String)] {
        try await connection.query("""
            SELECT user_id, collection FROM group_shares WHERE group_id = $1 ORDER BY shared_at, user_id, collection
            """, [.text(groupID)]).map { (try $0.string("user_id"), try $0.string("collection")) }
    }

    /// What an account's change feed reads besides its own records, in one query: the groups it belongs to, and
    /// the collections other members share with them.
    public func feedSources(userID: String) async throws
        -> (groups: [String], shares: [(groupID: String, userID: String, collection: String)]) {
        let rows = try await connection.query("""
            SELECT m.group_id, s.user_id AS sharer, s.collection
            FROM group_members m LEFT JOIN group_shares s ON s.group_id = m.group_id AND s.user_id <> m.user_id
            WHERE m.user_id = $1 ORDER BY m.group_id, s.shared_at, s.user_id, s.collection
            """, [.text(userID)])
        var groups: [String] = []
        var shares: [(groupID: String, userID: String, collection: String)] = []
        for row in rows {
            let group = try row.string("group_id")
            if groups.last != group { groups.append(group) }
            if let sharer = try row.optionalString("sharer"), let collection = try row.optionalString("collection") {
                shares.append((group, sharer, collection))
            }
        }
        return (groups, shares)
    }

    /// The policies of the groups `userID` is in that ask more than a viewer to read, with the account's role there.
    public func readPolicies(userID: String) async throws -> [(groupID: String, collection: String, read: String, role: String)] {
        try await connection.query("""
            SELECT p.group_id, p.collection, p.read_role, m.role
            FROM group_members m JOIN group_policies p ON p.group_id = m.group_id
            WHERE m.user_id = $1 AND p.read_role <> 'viewer'
            """, [.text(userID)]).map {
                (try $0.string("group_id"), try $0.string("collection"), try $0.string("read_role"), try $0.string("role"))
            }
    }
}
