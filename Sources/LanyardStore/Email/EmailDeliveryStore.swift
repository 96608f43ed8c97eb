import Foundation

/// A row of the mail outbox.
public struct EmailDeliveryRecord: Sendable, Equatable {
    public enum Status: String, Sendable { case pending, sent, failed }

    public var id: Int64
    public var flowID: String
    public var recipient: String
    public var userID: String?
    public var intent: String
    /// The mail, sealed under the master key; erased once sent (kept in dev mode: the emulator's mailbox).
    public var sealedBody: [UInt8]?
    public var status: Status
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    public var createdAt: Date
    public var sentAt: Date?
    public var failedAt: Date?

    init(row: SQLRow) throws {
        id = try row.integer("id")
        flowID = try row.string("flow_id")
        recipient = try row.string("recipient")
        userID = try row.optionalString("user_id")
        intent = try row.string("intent")
        sealedBody = row["sealed_body"] == .null ? nil : try row.bytes("sealed_body")
        status = Status(rawValue: try row.string("status")) ?? .pending
        attempts = Int(try row.integer("attempts"))
        nextAttemptAt = try row.date("next_attempt_at")
        lastError = try row.optionalString("last_error")
        createdAt = try row.date("created_at")
        sentAt = try row.optionalDate("sent_at")
        failedAt = try row.optionalDate("failed_at")
    }
}

/// `email_deliveries`: written with the flow in one transaction, claimed by each instance's mailer with a lease
/// (PostgreSQL skips rows another instance holds), so one instance attempts a mail at a time.
public struct EmailDeliveryStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func enqueue(flowID: String, recipient: String, userID: String?, intent: String, sealedBody: [UInt8],
                        at date: Date) async throws {
        try await connection.query("""
            INSERT INTO email_deliveries (flow_id, recipient, user_id, intent, sealed_body, status, attempts,
                                          next_attempt_at, created_at)
            VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6)
            """, [.text(flowID), .text(recipient), .optionalText(userID), .text(intent), .blob(sealedBody), .date(date)])
    }

    /// Whether any mail is due at `now`: a read, so an idle mailer's poll takes no write lock.
    public func hasDue(now: Date) async throws -> Bool {
        try await connection.first("""
            SELECT 1 AS due FROM email_deliveries
            WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until <= $1) LIMIT 1
            """, [.date(now)]) != nil
    }

    public func claimDue(now: Date, leaseEnd: Date, limit: Int) async throws -> [EmailDeliveryRecord] {
        try await connection.query("""
            UPDATE email_deliveries SET locked_until = $2 WHERE id IN (
                SELECT id FROM email_deliveries
                WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until <= $1)
                ORDER BY id LIMIT $3\(connection.dialect.forUpdateSkipLocked))
            RETURNING *
            """, [.date(now), .date(leaseEnd), .integer(Int64(limit))]).map(EmailDeliveryRecord.init(row:))
            .sorted { $0.id < $1.id }
    }

    /// Handed to the SMTP server (or kept in the mailbox): the body is erased unless `keepBody`.
    public func recordSent(id: Int64, at date: Date, keepBody: Bool) async throws {
        try await connection.query("""
            UPDATE email_deliveries SET status = 'sent', attempts = attempts + 1, sent_at = $2, last_error = NULL,
                locked_until = NULL\(keepBody ? "" : ", sealed_body = NULL")
            WHERE id = $1
            """, [.integer(id), .date(date)])
    }

    public func recordRetry(id: Int64, error: String, retryAt: Date) async throws {
        try await connection.query("""
            UPDATE email_deliveries SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3, locked_until = NULL
            WHERE id = $1
            """, [.integer(id), .text(String(error.prefix(500))), .date(retryAt)])
    }

    /// Given up: the body is erased; the row stays for the console.
    public func recordFailed(id: Int64, error: String, at date: Date) async throws {
        try await connection.query("""
            UPDATE email_deliveries SET status = 'failed', attempts = attempts + 1, last_error = $2, failed_at = $3,
                sealed_body = NULL, locked_until = NULL
            WHERE id = $1
            """, [.integer(id), .text(String(error.prefix(500))), .date(date)])
    }

    /// Newest first; of one status when given.
    public func list(status: EmailDeliveryRecord.Status?, limit: Int) async throws -> [EmailDeliveryRecord] {
        if let status {
            return try await connection.query("SELECT * FROM email_deliveries WHERE status = $1 ORDER BY id DESC LIMIT $2",
                                              [.text(status.rawValue), .integer(Int64(limit))]).map(EmailDeliveryRecord.init(row:))
        }
        return try await connection.query("SELECT * FROM email_deliveries ORDER BY id DESC LIMIT $1",
                                          [.integer(Int64(limit))]).map(EmailDeliveryRecord.init(row:))
    }

    /// Mails delivered to the emulator's mailbox, to `recipient` (all mails without one), newest first. Like a
    /// real mail server's inbox it holds only what the mailer has handed over (`sent`): a mail still queued is not
    /// there yet, so whoever reads a mail here knows its outbox row has reached its final state.
    public func mailbox(recipient: String?, limit: Int) async throws -> [EmailDeliveryRecord] {
        guard let recipient else { return try await list(status: .sent, limit: limit) }
        return try await connection.query("""
            SELECT * FROM email_deliveries WHERE recipient = $1 AND status = 'sent' ORDER BY id DESC LIMIT $2
            """, [.text(recipient), .integer(Int64(limit))]).map(EmailDeliveryRecord.init(row:))
    }

    /// Records of mails sent or failed before `date`.
    public func deleteOlder(than date: Date) async throws {
        try await connection.query("DELETE FROM email_deliveries WHERE status <> 'pending' AND created_at < $1", [.date(date)])
    }

}
