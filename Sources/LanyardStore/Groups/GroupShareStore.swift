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

    /// The groups one member's collection is shared with.
    public func groups(userID: String, collection: String) async throws -> [String] {
        try await connection.query("""
            SELECT group_id FROM group_shares WHERE user_id = $1 AND collection = $2
            """, [.text(userID), .text(collection)]).map { try $0.string("group_id") }
    }
}
