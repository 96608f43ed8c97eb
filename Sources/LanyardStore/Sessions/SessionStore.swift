import Foundation

public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var createdAt: Date
    public var refreshedAt: Date
    public var expiresAt: Date
    public var authTime: Date
    public var amr: String
    public var clientIP: String?
    public var userAgent: String?
    public var revokedAt: Date?
    public var revokedReason: String?

    public init(id: String, userID: String, createdAt: Date, expiresAt: Date, authTime: Date, amr: String,
                clientIP: String?, userAgent: String?) {
        self.id = id
        self.userID = userID
        self.createdAt = createdAt
        self.refreshedAt = createdAt
        self.expiresAt = expiresAt
        self.authTime = authTime
        self.amr = amr
        self.clientIP = clientIP
        self.userAgent = userAgent
    }

    init(row: SQLRow, prefix: String = "") throws {
        id = try row.string(prefix + "id")
        userID = try row.string(prefix + "user_id")
        createdAt = try row.date(prefix + "created_at")
        refreshedAt = try row.date(prefix + "refreshed_at")
        expiresAt = try row.date(prefix + "expires_at")
        authTime = try row.date(prefix + "auth_time")
        amr = try row.string(prefix + "amr")
        clientIP = try row.optionalString(prefix + "client_ip")
        userAgent = try row.optionalString(prefix + "user_agent")
        revokedAt = try row.optionalDate(prefix + "revoked_at")
        revokedReason = try row.optionalString(prefix + "revoked_reason")
    }

    static let columnPrefix = "session_"
    static let columns = ["id", "user_id", "created_at", "refreshed_at", "expires_at", "auth_time", "amr", "client_ip",
                          "user_agent", "revoked_at", "revoked_reason"]

    /// `s.id AS session_id, …`: the session's columns beside another table's, which may share their names.
    static func prefixedColumns(table: String) -> String {
        columns.map { "\(table).\($0) AS \(columnPrefix)\($0)" }.joined(separator: ", ")
    }

    public func isActive(at date: Date) -> Bool {
        revokedAt == nil && expiresAt > date
    }
}

/// A session with what every authenticated request needs of its account.
public struct SessionOwner: Sendable {
    public var session: SessionRecord
    public var ownerIsAnonymous: Bool
    public var ownerMergedInto: String?
    /// The account with its identities, where the read includes them (PostgreSQL's shared read); `nil` on SQLite.
    public var account: SessionWithAccount?
}

/// The `sessions` table: one row per signed-in device.
public struct SessionStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Inserts a session and its first refresh token (hashed), held back on PostgreSQL (see `enqueueWrite`).
    public func insert(_ session: SessionRecord, refreshTokenKey: String) async throws {
        let binds: [SQLValue] = [
            .text(session.id), .text(session.userID), .date(session.createdAt), .date(session.refreshedAt),
            .date(session.expiresAt), .date(session.authTime), .text(session.amr), .optionalText(session.clientIP),
            .optionalText(session.userAgent), .text(refreshTokenKey),
        ]
        let insertSession = """
            INSERT INTO sessions (id, user_id, created_at, refreshed_at, expires_at, auth_time, amr, client_ip, user_agent)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """
        let insertToken = "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($1, $2, $3)"
        try await connection.enqueueWrite(insertSession, Array(binds[0..<9]))
        try await connection.enqueueWrite(insertToken, [binds[9], binds[0], binds[2]])
    }

    public func find(id: String) async throws -> SessionRecord? {
        try await connection.first("SELECT * FROM sessions WHERE id = $1", [.text(id)]).map { try SessionRecord(row: $0) }
    }

    /// The session with what every authenticated request needs of its account, in one query.
    public func findWithOwner(id: String) async throws -> SessionOwner? {
        guard let row = try await connection.first("""
            SELECT s.*, u.is_anonymous AS owner_is_anonymous, u.merged_into AS owner_merged_into
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = $1
            """, [.text(id)]) else { return nil }
        return SessionOwner(session: try SessionRecord(row: row), ownerIsAnonymous: try row.bool("owner_is_anonymous"),
                            ownerMergedInto: try row.optionalString("owner_merged_into"), account: nil)
    }

    /// The account's sessions that are neither revoked nor expired, newest first.
    public func listActive(userID: String, at date: Date) async throws -> [SessionRecord] {
        try await connection.query("""
            SELECT * FROM sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2
            ORDER BY created_at DESC, id
            """, [.text(userID), .date(date)]).map { try SessionRecord(row: $0) }
    }

    /// - Returns: whether the session was active and is now revoked.
    @discardableResult
    public func revoke(id: String, reason: String, at date: Date) async throws -> Bool {
        !(try await connection.query("""
            UPDATE sessions SET revoked_at = $2, revoked_reason = $3 WHERE id = $1 AND revoked_at IS NULL RETURNING id
            """, [.text(id), .date(date), .text(reason)]).isEmpty)
    }

    /// Revokes every active session of the account except `keeping`; returns the ids revoked.
    @discardableResult
    public func revokeAll(userID: String, keeping kept: String? = nil, reason: String, at date: Date) async throws -> [String] {
        try await connection.query("""
            UPDATE sessions SET revoked_at = $2, revoked_reason = $3
            WHERE user_id = $1 AND revoked_at IS NULL AND id <> $4 RETURNING id
            """, [.text(userID), .date(date), .text(reason), .text(kept ?? "")]).map { try $0.string("id") }
    }

    /// Revokes the account's active sessions opened with `method` (`apple`, say); returns the ids revoked.
    @discardableResult
    public func revokeAll(userID: String, method: String, reason: String, at date: Date) async throws -> [String] {
        try await connection.query("""
            UPDATE sessions SET revoked_at = $2, revoked_reason = $3
            WHERE user_id = $1 AND amr = $4 AND revoked_at IS NULL RETURNING id
            """, [.text(userID), .date(date), .text(reason), .text(method)]).map { try $0.string("id") }
    }
}
