import Foundation

public struct AuditEntry: Sendable, Equatable {
    public var at: Date
    public var event: String
    public var userID: String?
    public var sessionID: String?
    public var clientIP: String?
    /// A JSON object with event-specific facts; never a token or key.
    public var details: String?

    public init(at: Date, event: String, userID: String?, sessionID: String?, clientIP: String?, details: String?) {
        self.at = at
        self.event = event
        self.userID = userID
        self.sessionID = sessionID
        self.clientIP = clientIP
        self.details = details
    }

    init(row: SQLRow) throws {
        at = try row.date("at")
        event = try row.string("event")
        userID = try row.optionalString("user_id")
        sessionID = try row.optionalString("session_id")
        clientIP = try row.optionalString("client_ip")
        details = try row.optionalString("details")
    }
}

/// The append-only `audit_log` table.
public struct AuditStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Held back with the transaction's other blind writes on PostgreSQL (see `enqueueWrite`).
    public func append(_ entry: AuditEntry) async throws {
        try await connection.enqueueWrite("""
            INSERT INTO audit_log (at, event, user_id, session_id, client_ip, details) VALUES ($1, $2, $3, $4, $5, $6)
            """, [.date(entry.at), .text(entry.event), .optionalText(entry.userID), .optionalText(entry.sessionID),
                  .optionalText(entry.clientIP), .optionalText(entry.details)])
    }

    /// Entries about one account, oldest first.
    public func entries(userID: String) async throws -> [AuditEntry] {
        try await connection.query("SELECT * FROM audit_log WHERE user_id = $1 ORDER BY id", [.text(userID)])
            .map(AuditEntry.init(row:))
    }

    public func entries(event: String) async throws -> [AuditEntry] {
        try await connection.query("SELECT * FROM audit_log WHERE event = $1 ORDER BY id", [.text(event)])
            .map(AuditEntry.init(row:))
    }
}
