import Foundation

public struct RefreshTokenRecord: Sendable, Equatable {
    public var tokenHash: String
    public var sessionID: String
    public var createdAt: Date
    public var rotatedAt: Date?
}

/// The `refresh_tokens` table. Only SHA-256 hashes are stored, never a token.
public struct RefreshTokenStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Presented tokens (up to `BatchedKeys.maximum`, by hash), each with its session and the session's
    /// account with its identities: everything a refresh decides on and answers with, in one query (nothing a
    /// refresh writes shows in the account), batched on PostgreSQL. Tokens not found are left out. Nothing is
    /// locked: refreshes of one token that race all decide to rotate it, and `rotate` is idempotent (the
    /// successor is derived from the token).
    public func findForRefresh(tokenHashes: [String]) async throws -> [String: RefreshTarget] {
        try await BatchedKeys.rows(Self.tokensWithSessionsAndAccounts, keys: tokenHashes, column: "token_hash",
                                   on: connection).mapValues { rows in
            let row = rows[0]
            let session = try SessionRecord(row: row, prefix: SessionRecord.columnPrefix)
            let token = RefreshTokenRecord(tokenHash: try row.string("token_hash"), sessionID: session.id,
                                           createdAt: try row.date("token_created_at"),
                                           rotatedAt: try row.optionalDate("token_rotated_at"))
            return RefreshTarget(token: token, session: session, owner: try UserRecord(row: row),
                                 ownerIdentities: try UserStore.identities(in: rows))
        }
    }

    private static let tokensWithSessionsAndAccounts = BatchedKeys.Statements(orderBy: "identity_link_position") { hash in
        """
        SELECT u.*, t.token_hash AS token_hash, t.created_at AS token_created_at, t.rotated_at AS token_rotated_at,
               \(SessionRecord.prefixedColumns(table: "s")), \(UserStore.identityColumns),
               i.link_position AS identity_link_position
        FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id JOIN users u ON u.id = s.user_id
             LEFT JOIN identities i ON i.user_id = u.id
        WHERE t.token_hash = \(hash)
        """
    }

    /// Rotates: the presented token is marked used, its successor stored, and the session extended. One
    /// statement on PostgreSQL, held back (`enqueueWrite`): a refresh's transaction is this one statement, without
    /// `BEGIN`. Three statements on SQLite. Running it twice changes nothing more: the
    /// token keeps its first rotation time, the successor is stored once.
    public func rotate(_ tokenHash: String, to successorHash: String, sessionID: String, at date: Date,
                       sessionExpiresAt: Date) async throws {
        let binds: [SQLValue] = [.text(tokenHash), .text(successorHash), .date(date), .text(sessionID), .date(sessionExpiresAt)]
        switch connection.dialect {
        case .postgres:
            try await connection.enqueueWrite("""
                WITH rotated AS (
                    UPDATE refresh_tokens SET rotated_at = $3 WHERE token_hash = $1 AND rotated_at IS NULL
                ), successor AS (
                    INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($2, $4, $3)
                    ON CONFLICT (token_hash) DO NOTHING
                )
                UPDATE sessions SET refreshed_at = $3, expires_at = $5 WHERE id = $4
                """, binds)
        case .sqlite:
            try await connection.enqueueWrite("UPDATE refresh_tokens SET rotated_at = $3 WHERE token_hash = $1 AND rotated_at IS NULL",
                                              Array(binds[0..<3]))
            try await connection.enqueueWrite("""
                INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($2, $4, $3)
                ON CONFLICT (token_hash) DO NOTHING
                """, Array(binds[0..<4]))
            try await connection.enqueueWrite("UPDATE sessions SET refreshed_at = $3, expires_at = $5 WHERE id = $4", binds)
        }
    }
}

public struct RefreshTarget: Sendable {
    public var token: RefreshTokenRecord
    public var session: SessionRecord
    public var owner: UserRecord
    public var ownerIdentities: [IdentityRecord]
}
