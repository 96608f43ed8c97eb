import Foundation

public struct RefreshTokenRecord: Sendable, Equatable {
    public var tokenHash: String
    public var sessionID: String
    public var createdAt: Date
    public var rotatedAt: Date?

    init(row: SQLRow) throws {
        tokenHash = try row.string("token_hash")
        sessionID = try row.string("session_id")
        createdAt = try row.date("created_at")
        rotatedAt = try row.optionalDate("rotated_at")
    }
}

/// The `refresh_tokens` table. Only SHA-256 hashes are stored, never a token.
public struct RefreshTokenStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func insert(tokenHash: String, sessionID: String, at date: Date) async throws {
        try await connection.query("""
            INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($1, $2, $3)
            ON CONFLICT (token_hash) DO NOTHING
            """, [.text(tokenHash), .text(sessionID), .date(date)])
    }

    /// Reads the token and locks it, so concurrent refreshes of one token take turns.
    public func findForUpdate(tokenHash: String) async throws -> RefreshTokenRecord? {
        try await connection.first(
            "SELECT * FROM refresh_tokens WHERE token_hash = $1\(connection.dialect.forUpdate)", [.text(tokenHash)]
        ).map(RefreshTokenRecord.init(row:))
    }

    public func markRotated(tokenHash: String, at date: Date) async throws {
        try await connection.query("UPDATE refresh_tokens SET rotated_at = $2 WHERE token_hash = $1 AND rotated_at IS NULL",
                                   [.text(tokenHash), .date(date)])
    }
}
