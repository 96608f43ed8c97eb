import Foundation

/// A row of `redirect_flows`: one redirect sign-in, from the authorize request to the code's exchange.
public struct RedirectFlowRecord: Sendable, Equatable {
    public var id: String
    public var provider: String
    /// `lanyard` (`/v1/auth/authorize`) or `gotrue` (`/auth/v1/authorize`).
    public var origin: String
    /// `signin` or `link`.
    public var intent: String
    public var redirectURI: String
    public var codeChallenge: String
    /// The app's own `state`, returned to it untouched.
    public var clientState: String?
    public var nonce: String
    /// For `link`: the account and session that started the flow.
    public var userID: String?
    public var sessionID: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var calledBackAt: Date?
    public var codeHash: String?
    public var codeExpiresAt: Date?
    /// The proven identity (and Apple's refresh token), sealed under the master key until the exchange.
    public var sealedIdentity: [UInt8]?
    public var usedAt: Date?

    public init(id: String, provider: String, origin: String, intent: String, redirectURI: String, codeChallenge: String,
                clientState: String?, nonce: String, userID: String?, sessionID: String?, createdAt: Date, expiresAt: Date) {
        (self.id, self.provider, self.origin, self.intent) = (id, provider, origin, intent)
        (self.redirectURI, self.codeChallenge, self.clientState, self.nonce) = (redirectURI, codeChallenge, clientState, nonce)
        (self.userID, self.sessionID, self.createdAt, self.expiresAt) = (userID, sessionID, createdAt, expiresAt)
    }

    init(row: SQLRow) throws {
        id = try row.string("id")
        provider = try row.string("provider")
        origin = try row.string("origin")
        intent = try row.string("intent")
        redirectURI = try row.string("redirect_uri")
        codeChallenge = try row.string("code_challenge")
        clientState = try row.optionalString("client_state")
        nonce = try row.string("nonce")
        userID = try row.optionalString("user_id")
        sessionID = try row.optionalString("session_id")
        createdAt = try row.date("created_at")
        expiresAt = try row.date("expires_at")
        calledBackAt = try row.optionalDate("called_back_at")
        codeHash = try row.optionalString("code_hash")
        codeExpiresAt = try row.optionalDate("code_expires_at")
        sealedIdentity = row["sealed_identity"] == .null ? nil : try row.bytes("sealed_identity")
        usedAt = try row.optionalDate("used_at")
    }
}

/// `redirect_flows`. Every step of a flow is one conditional update, so a replayed callback or a code presented
/// twice (racing or not) takes effect once.
public struct RedirectFlowStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func insert(_ flow: RedirectFlowRecord) async throws {
        try await connection.query("""
            INSERT INTO redirect_flows (id, provider, origin, intent, redirect_uri, code_challenge, client_state, nonce,
                                        user_id, session_id, created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """, [.text(flow.id), .text(flow.provider), .text(flow.origin), .text(flow.intent), .text(flow.redirectURI),
                  .text(flow.codeChallenge), .optionalText(flow.clientState), .text(flow.nonce), .optionalText(flow.userID),
                  .optionalText(flow.sessionID), .date(flow.createdAt), .date(flow.expiresAt)])
    }

    public func find(id: String) async throws -> RedirectFlowRecord? {
        try await connection.first("SELECT * FROM redirect_flows WHERE id = $1", [.text(id)]).map(RedirectFlowRecord.init(row:))
    }

    /// The provider called back: true for exactly one callback of an open flow.
    public func calledBack(id: String, at date: Date) async throws -> Bool {
        try await connection.first("""
            UPDATE redirect_flows SET called_back_at = $2
            WHERE id = $1 AND called_back_at IS NULL AND expires_at > $2 RETURNING id
            """, [.text(id), .date(date)]) != nil
    }

    /// The proven identity, under the code the app will exchange.
    public func issueCode(id: String, codeHash: String, expiresAt: Date, sealedIdentity: [UInt8]) async throws {
        try await connection.query("""
            UPDATE redirect_flows SET code_hash = $2, code_expires_at = $3, sealed_identity = $4 WHERE id = $1
            """, [.text(id), .text(codeHash), .date(expiresAt), .blob(sealedIdentity)])
    }

    /// Takes the flow a code names: once, whoever races; a second presentation finds it used.
    public func use(codeHash: String, at date: Date) async throws -> RedirectFlowRecord? {
        try await connection.first("""
            UPDATE redirect_flows SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL RETURNING *
            """, [.text(codeHash), .date(date)]).map(RedirectFlowRecord.init(row:))
    }

    public func find(codeHash: String) async throws -> RedirectFlowRecord? {
        try await connection.first("SELECT * FROM redirect_flows WHERE code_hash = $1", [.text(codeHash)])
            .map(RedirectFlowRecord.init(row:))
    }

    /// Flows ended before `date` (their codes long dead).
    public func deleteEnded(before date: Date) async throws {
        try await connection.query("DELETE FROM redirect_flows WHERE expires_at < $1", [.date(date)])
    }
}
