import Foundation

public struct RefreshTokenRecord: Sendable, Equatable {
    public var tokenKey: String
    public var sessionID: String
    public var createdAt: Date
    public var rotatedAt: Date?
}

/// The `refresh_tokens` table. A token is stored under its key (`RefreshTokens.storageKey`: its session's id and
/// its SHA-256 hash; the column keeps its first name, `token_hash`), never as itself.
public struct RefreshTokenStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Presented tokens (up to `BatchedKeys.maximum`, by key), each with its session and the session's
    /// account with its identities: everything a refresh decides on and answers with, in one query (nothing a
    /// refresh writes shows in the account), batched on PostgreSQL. Tokens not found are left out. Nothing is
    /// locked: refreshes of one token that race all decide to rotate it, and `rotate` is idempotent (the
    /// successor is derived from the token).
    public func findForRefresh(tokenKeys: [String]) async throws -> [String: RefreshTarget] {
        try await BatchedKeys.rows(Self.tokensWithSessionsAndAccounts, keys: tokenKeys, column: "token_hash",
                                   on: connection).mapValues { rows in
            let row = rows[0]
            let session = try SessionRecord(row: row, prefix: SessionRecord.columnPrefix)
            let token = RefreshTokenRecord(tokenKey: try row.string("token_hash"), sessionID: session.id,
                                           createdAt: try row.date("token_created_at"),
                                           rotatedAt: try row.optionalDate("token_rotated_at"))
            return RefreshTarget(token: token, session: session, owner: try UserRecord(row: row),
                                 ownerIdentities: try UserStore.identities(in: rows))
        }
    }

    private static let tokensWithSessionsAndAccounts = BatchedKeys.Statements(orderBy: "identity_link_position") { key in
        """
        SELECT u.*, t.token_hash AS token_hash, t.created_at AS token_created_at, t.rotated_at AS token_rotated_at,
               \(SessionRecord.prefixedColumns(table: "s")), \(UserStore.identityColumns),
               i.link_position AS identity_link_position
        FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id JOIN users u ON u.id = s.user_id
             LEFT JOIN identities i ON i.user_id = u.id
        WHERE t.token_hash = \(key)
        """
    }

    /// Rotates: the presented token is marked used, its successor stored, and the session extended. Running it
    /// twice changes nothing more: the token keeps its first rotation time, the successor is stored once.
    /// Held back (`enqueueWrite`): on PostgreSQL one statement, so a refresh's transaction is that statement,
    /// without `BEGIN`; three on SQLite.
    /// - Throws: `StoreError.foreignKeyViolation` when the session is gone (deleted with its account).
    public func rotate(_ rotation: Rotation) async throws {
        switch connection.dialect {
        case .postgres:
            try await rotate([rotation])
        case .sqlite:
            let binds = rotation.binds
            try await connection.enqueueWrite("UPDATE refresh_tokens SET rotated_at = $3 WHERE token_hash = $1 AND rotated_at IS NULL",
                                              Array(binds[0..<3]))
            try await connection.enqueueWrite("""
                INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($2, $4, $3)
                ON CONFLICT (token_hash) DO NOTHING
                """, Array(binds[0..<4]))
            try await connection.enqueueWrite("UPDATE sessions SET refreshed_at = $3, expires_at = $5 WHERE id = $4", binds)
        }
    }

    /// Up to `BatchedKeys.maximum` distinct rotations in one statement (PostgreSQL: `RefreshRotations` batches
    /// concurrent refreshes' rotations), all or none.
    /// - Throws: `StoreError.foreignKeyViolation` when a session is gone; `StoreError.serializationFailure`
    ///   when two batches touching the same sessions deadlocked.
    public func rotate(_ rotations: [Rotation]) async throws {
        precondition(connection.dialect == .postgres && (1...BatchedKeys.maximum).contains(rotations.count))
        try await connection.enqueueWrite(Self.rotationStatements[rotations.count - 1], rotations.flatMap(\.binds))
    }

    /// The rotation statement for 1 to `BatchedKeys.maximum` rotations, each row of `input` one of them.
    private static let rotationStatements: [String] = (1...BatchedKeys.maximum).map { count in
        let rows = (0..<count).map { row in
            "(" + (1...Rotation.bindCount).map { "$\(row * Rotation.bindCount + $0)" }.joined(separator: ", ") + ")"
        }
        return """
            WITH input (token_hash, successor_hash, at, session_id, expires_at) AS (
                VALUES \(rows.joined(separator: ",\n       "))
            ), rotated AS (
                UPDATE refresh_tokens t SET rotated_at = input.at FROM input
                WHERE t.token_hash = input.token_hash AND t.rotated_at IS NULL
            ), successor AS (
                INSERT INTO refresh_tokens (token_hash, session_id, created_at)
                SELECT successor_hash, session_id, at FROM input
                ON CONFLICT (token_hash) DO NOTHING
            )
            UPDATE sessions s SET refreshed_at = input.at, expires_at = input.expires_at FROM input
            WHERE s.id = input.session_id
            """
    }
}

/// One refresh's writes: `tokenKey` marked used at `date`, `successorKey` stored for the same session, the
/// session extended to `sessionExpiresAt`.
public struct Rotation: Hashable, Sendable {
    public var tokenKey: String
    public var successorKey: String
    public var sessionID: String
    public var date: Date
    public var sessionExpiresAt: Date

    public init(tokenKey: String, successorKey: String, sessionID: String, date: Date, sessionExpiresAt: Date) {
        self.tokenKey = tokenKey
        self.successorKey = successorKey
        self.sessionID = sessionID
        self.date = date
        self.sessionExpiresAt = sessionExpiresAt
    }

    static let bindCount = 5

    /// `$1` token, `$2` successor, `$3` time, `$4` session, `$5` session expiry.
    var binds: [SQLValue] {
        [.text(tokenKey), .text(successorKey), .date(date), .text(sessionID), .date(sessionExpiresAt)]
    }
}

public struct RefreshTarget: Sendable {
    public var token: RefreshTokenRecord
    public var session: SessionRecord
    public var owner: UserRecord
    public var ownerIdentities: [IdentityRecord]
}
