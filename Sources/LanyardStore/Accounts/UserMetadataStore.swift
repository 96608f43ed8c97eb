import Foundation

/// `user_metadata`: an account's free-form JSON object, one row per account that has any.
public struct UserMetadataStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// The stored JSON text, or nil when the account has none.
    public func find(userID: String) async throws -> String? {
        try await connection.first("SELECT data FROM user_metadata WHERE user_id = $1", [.text(userID)])?.string("data")
    }

    public func save(userID: String, data: String, at date: Date) async throws {
        try await connection.query("""
            INSERT INTO user_metadata (user_id, data, updated_at) VALUES ($1, $2, $3)
            ON CONFLICT (user_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
            """, [.text(userID), .text(data), .date(date)])
    }

    /// Copies `fromUserID`'s metadata to `toUserID` when that account has none (one statement).
    public func copyIfMissing(from fromUserID: String, to toUserID: String, at date: Date) async throws {
        try await connection.query("""
            INSERT INTO user_metadata (user_id, data, updated_at)
            SELECT $2, data, $3 FROM user_metadata WHERE user_id = $1
            ON CONFLICT (user_id) DO NOTHING
            """, [.text(fromUserID), .text(toUserID), .date(date)])
    }
}
