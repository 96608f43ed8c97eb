import Foundation

/// A revocation owed to Apple: the sealed refresh token and the client it was issued to.
public struct AppleRevocationRecord: Sendable {
    public var id: Int64
    public var userID: String?
    public var clientID: String
    public var sealedToken: [UInt8]
    public var attempts: Int

    init(row: SQLRow) throws {
        id = try row.integer("id")
        userID = try row.optionalString("user_id")
        clientID = try row.string("client_id")
        sealedToken = (try? row.bytes("sealed_token")) ?? []
        attempts = Int(try row.integer("attempts"))
    }
}

/// `apple_tokens` (an Apple identity's refresh token, sealed) and `apple_revocations` (the outbox of revocations:
/// written in the transaction that deletes the account or unlinks the identity, leased by the workers).
public struct AppleTokenStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Keeps the identity's newest refresh token.
    public func save(identityID: String, clientID: String, sealedToken: [UInt8], at date: Date) async throws {
        try await connection.query("""
            INSERT INTO apple_tokens (identity_id, client_id, sealed_token, updated_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (identity_id) DO UPDATE SET client_id = excluded.client_id, sealed_token = excluded.sealed_token,
                updated_at = excluded.updated_at
            """, [.text(identityID), .text(clientID), .blob(sealedToken), .date(date)])
    }

    public func token(identityID: String) async throws -> (clientID: String, sealedToken: [UInt8])? {
        guard let row = try await connection.first("SELECT * FROM apple_tokens WHERE identity_id = $1", [.text(identityID)])
        else { return nil }
        return (try row.string("client_id"), try row.bytes("sealed_token"))
    }

    /// Owes Apple the revocation of the account's Apple tokens (one statement; nothing when it has none). Run before
    /// the identity or the account goes, in the same transaction: the token then goes with it.
    public func scheduleRevocation(userID: String, at date: Date) async throws {
        try await connection.query("""
            INSERT INTO apple_revocations (user_id, client_id, sealed_token, created_at, status, attempts, next_attempt_at)
            SELECT $1, t.client_id, t.sealed_token, $2, 'pending', 0, $2
            FROM apple_tokens t JOIN identities i ON i.id = t.identity_id WHERE i.user_id = $1
            """, [.text(userID), .date(date)])
    }

    /// Leases up to `limit` revocations due at `now` (PostgreSQL skips rows another instance is claiming).
    public func claimDue(now: Date, leaseEnd: Date, limit: Int) async throws -> [AppleRevocationRecord] {
        try await connection.query("""
            UPDATE apple_revocations SET locked_until = $2 WHERE id IN (
                SELECT id FROM apple_revocations
                WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until <= $1)
                ORDER BY id LIMIT $3\(connection.dialect.forUpdateSkipLocked))
            RETURNING *
            """, [.date(now), .date(leaseEnd), .integer(Int64(limit))]).map(AppleRevocationRecord.init(row:))
    }

    /// Revoked: the token is erased. Otherwise tried again at `retryAt`.
    public func record(id: Int64, revoked: Bool, error: String?, retryAt: Date, at date: Date) async throws {
        if revoked {
            try await connection.query("""
                UPDATE apple_revocations SET status = 'revoked', sealed_token = NULL, revoked_at = $2, attempts = attempts + 1,
                    locked_until = NULL, last_error = NULL WHERE id = $1
                """, [.integer(id), .date(date)])
        } else {
            try await connection.query("""
                UPDATE apple_revocations SET attempts = attempts + 1, next_attempt_at = $2, last_error = $3, locked_until = NULL
                WHERE id = $1
                """, [.integer(id), .date(retryAt), .optionalText(error.map { String($0.prefix(300)) })])
        }
    }
}
