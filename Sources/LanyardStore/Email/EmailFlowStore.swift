import Foundation

/// A row of `email_flows`: one mail's code and link, and who may finish it.
public struct EmailFlowRecord: Sendable, Equatable {
    public var id: String
    public var address: String
    /// `signin`, `link` or `reauthenticate`.
    public var intent: String
    /// `lanyard` (a device holds the flow's secret), `gotrue` or `recovery` (no device secret: code only).
    public var origin: String
    public var secretHash: String?
    public var codeHash: String
    public var linkHash: String?
    public var match: Int
    /// For `link` and `reauthenticate`: the account and the session that started the flow; for `recovery`, the
    /// account the operator sent it for.
    public var userID: String?
    public var sessionID: String?
    public var redirectTo: String?
    public var clientIP: String?
    public var userAgent: String?
    /// GoTrue's `create_user`: false means a code for an address without an account signs no one up.
    public var createUser: Bool
    public var wrongCodes: Int
    public var createdAt: Date
    public var expiresAt: Date
    public var confirmedAt: Date?
    public var usedAt: Date?
    public var undeliverableAt: Date?
    /// When a wrong number typed on the link's page ended the link (the code still works).
    public var linkEndedAt: Date?

    public init(id: String, address: String, intent: String, origin: String, secretHash: String?, codeHash: String,
                linkHash: String?, match: Int, userID: String?, sessionID: String?, redirectTo: String?,
                clientIP: String?, userAgent: String?, createUser: Bool, createdAt: Date, expiresAt: Date) {
        (self.id, self.address, self.intent, self.origin) = (id, address, intent, origin)
        (self.secretHash, self.codeHash, self.linkHash, self.match) = (secretHash, codeHash, linkHash, match)
        (self.userID, self.sessionID, self.redirectTo) = (userID, sessionID, redirectTo)
        (self.clientIP, self.userAgent, self.createUser) = (clientIP, userAgent, createUser)
        (self.wrongCodes, self.createdAt, self.expiresAt) = (0, createdAt, expiresAt)
    }

    init(row: SQLRow) throws {
        id = try row.string("id")
        address = try row.string("address")
        intent = try row.string("intent")
        origin = try row.string("origin")
        secretHash = try row.optionalString("secret_hash")
        codeHash = try row.string("code_hash")
        linkHash = try row.optionalString("link_hash")
        match = Int(try row.integer("match_number"))
        userID = try row.optionalString("user_id")
        sessionID = try row.optionalString("session_id")
        redirectTo = try row.optionalString("redirect_to")
        clientIP = try row.optionalString("client_ip")
        userAgent = try row.optionalString("user_agent")
        createUser = try row.bool("create_user")
        wrongCodes = Int(try row.integer("wrong_codes"))
        createdAt = try row.date("created_at")
        expiresAt = try row.date("expires_at")
        confirmedAt = try row.optionalDate("confirmed_at")
        usedAt = try row.optionalDate("used_at")
        undeliverableAt = try row.optionalDate("undeliverable_at")
        linkEndedAt = try row.optionalDate("link_ended_at")
    }
}

/// `email_flows`. Every change of a flow's state is one conditional update, so racing requests cannot both use
/// a flow, nor count a wrong code twice past its limit.
public struct EmailFlowStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func insert(_ flow: EmailFlowRecord) async throws {
        try await connection.query("""
            INSERT INTO email_flows (id, address, intent, origin, secret_hash, code_hash, link_hash, match_number, user_id,
                                     session_id, redirect_to, client_ip, user_agent, create_user, wrong_codes, created_at,
                                     expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 0, $15, $16)
            """, [.text(flow.id), .text(flow.address), .text(flow.intent), .text(flow.origin),
                  .optionalText(flow.secretHash), .text(flow.codeHash), .optionalText(flow.linkHash),
                  .integer(Int64(flow.match)), .optionalText(flow.userID), .optionalText(flow.sessionID),
                  .optionalText(flow.redirectTo), .optionalText(flow.clientIP), .optionalText(flow.userAgent),
                  .bool(flow.createUser), .date(flow.createdAt), .date(flow.expiresAt)])
    }

    public func find(id: String) async throws -> EmailFlowRecord? {
        try await connection.first("SELECT * FROM email_flows WHERE id = $1", [.text(id)]).map(EmailFlowRecord.init(row:))
    }

    public func find(linkHash: String) async throws -> EmailFlowRecord? {
        try await connection.first("SELECT * FROM email_flows WHERE link_hash = $1", [.text(linkHash)])
            .map(EmailFlowRecord.init(row:))
    }

    /// The newest flow for `address` that no device holds a secret for (GoTrue's, an operator's recovery), of
    /// `origins`, that can still be finished at `now` (not used, expired, dead of wrong codes or undeliverable).
    public func newestWithoutSecret(address: String, origins: [String], at now: Date,
                                    maxWrongCodes: Int) async throws -> EmailFlowRecord? {
        let placeholders = origins.indices.map { "$\($0 + 4)" }.joined(separator: ", ")
        return try await connection.first("""
            SELECT * FROM email_flows
            WHERE address = $1 AND secret_hash IS NULL AND used_at IS NULL AND expires_at > $2
              AND wrong_codes < $3 AND undeliverable_at IS NULL AND origin IN (\(placeholders))
            ORDER BY created_at DESC, id DESC LIMIT 1
            """, [.text(address), .date(now), .integer(Int64(maxWrongCodes))] + origins.map(SQLValue.text))
            .map(EmailFlowRecord.init(row:))
    }

    /// Counts a wrong code while the flow is open; the count after it, or nil when the flow was already used.
    public func recordWrongCode(id: String) async throws -> Int? {
        try await connection.first("""
            UPDATE email_flows SET wrong_codes = wrong_codes + 1 WHERE id = $1 AND used_at IS NULL RETURNING wrong_codes
            """, [.text(id)]).map { Int(try $0.integer("wrong_codes")) }
    }

    /// Uses the flow: true for exactly one caller, while it has fewer than `maxWrongCodes` wrong codes.
    public func markUsed(id: String, at date: Date, maxWrongCodes: Int) async throws -> Bool {
        try await connection.first("""
            UPDATE email_flows SET used_at = $2 WHERE id = $1 AND used_at IS NULL AND wrong_codes < $3 RETURNING id
            """, [.text(id), .date(date), .integer(Int64(maxWrongCodes))]) != nil
    }

    /// A wrong number was typed on the link's page: the link ends (once, whoever races a right number). True when
    /// this call ended it.
    public func endLink(id: String, at date: Date) async throws -> Bool {
        try await connection.first("""
            UPDATE email_flows SET link_ended_at = $2
            WHERE id = $1 AND link_ended_at IS NULL AND confirmed_at IS NULL AND used_at IS NULL RETURNING id
            """, [.text(id), .date(date)]) != nil
    }

    /// The link was confirmed in a browser: the device holding the secret may now finish.
    public func confirm(id: String, at date: Date) async throws -> Bool {
        try await connection.first("""
            UPDATE email_flows SET confirmed_at = $2
            WHERE id = $1 AND confirmed_at IS NULL AND used_at IS NULL AND link_ended_at IS NULL RETURNING id
            """, [.text(id), .date(date)]) != nil
    }

    public func markUndeliverable(id: String, at date: Date) async throws {
        try await connection.query("UPDATE email_flows SET undeliverable_at = $2 WHERE id = $1",
                                   [.text(id), .date(date)])
    }

    /// Flows that ended before `date` (their limits live in `email_limits`, their mails in `email_deliveries`).
    public func deleteEnded(before date: Date) async throws {
        try await connection.query("DELETE FROM email_flows WHERE expires_at < $1", [.date(date)])
    }
}
