import Foundation

/// A row of the webhook outbox.
public struct WebhookEventRecord: Sendable, Equatable {
    public enum Status: String, Sendable { case pending, delivered, failed }

    public var id: Int64
    /// `webhook-id`: the same on every attempt, so receivers deduplicate.
    public var eventID: String
    /// The account the event is about; events of one account are delivered in order.
    public var userID: String?
    public var type: String
    /// The exact body sent (and signed).
    public var payload: String
    public var createdAt: Date
    public var status: Status
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastAttemptAt: Date?
    public var lastStatus: Int?
    public var lastError: String?
    public var deliveredAt: Date?

    init(row: SQLRow) throws {
        id = try row.integer("id")
        eventID = try row.string("event_id")
        userID = try row.optionalString("user_id")
        type = try row.string("type")
        payload = try row.string("payload")
        createdAt = try row.date("created_at")
        status = Status(rawValue: try row.string("status")) ?? .pending
        attempts = Int(try row.integer("attempts"))
        nextAttemptAt = try row.date("next_attempt_at")
        lastAttemptAt = try row.optionalDate("last_attempt_at")
        lastStatus = try row.optionalInteger("last_status").map(Int.init)
        lastError = try row.optionalString("last_error")
        deliveredAt = try row.optionalDate("delivered_at")
    }
}

/// `webhook_events`: the outbox. Rows are written with the change that causes them and claimed by delivery
/// workers with a lease, so with several instances each attempt is made by one of them.
public struct WebhookStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Held back with the transaction's other blind writes on PostgreSQL (see `enqueueWrite`). `relatedUserID`: a
    /// second account the event is about (a merge's other side), whose earlier events it waits for too.
    public func enqueue(eventID: String, userID: String?, relatedUserID: String? = nil, type: String, payload: String,
                        at date: Date) async throws {
        try await connection.enqueueWrite("""
            INSERT INTO webhook_events (event_id, user_id, related_user_id, type, payload, created_at, status, attempts,
                                        next_attempt_at)
            VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $6)
            """, [.text(eventID), .optionalText(userID), .optionalText(relatedUserID), .text(type), .text(payload),
                  .date(date)])
    }

    /// Leases up to `limit` events due at `now` until `leaseEnd`: each the oldest pending event of every account it
    /// names (its account and its related one), and none leased by another worker (PostgreSQL skips rows another
    /// instance is claiming).
    public func claimDue(now: Date, leaseEnd: Date, limit: Int) async throws -> [WebhookEventRecord] {
        try await connection.query("""
            UPDATE webhook_events SET locked_until = $2 WHERE id IN (
                SELECT e.id FROM webhook_events e
                WHERE e.status = 'pending' AND e.next_attempt_at <= $1 AND (e.locked_until IS NULL OR e.locked_until <= $1)
                AND NOT EXISTS (SELECT 1 FROM webhook_events p
                                WHERE p.user_id = e.user_id AND p.id < e.id AND p.status = 'pending')
                AND NOT EXISTS (SELECT 1 FROM webhook_events p
                                WHERE p.related_user_id = e.user_id AND p.id < e.id AND p.status = 'pending')
                AND (e.related_user_id IS NULL OR (
                    NOT EXISTS (SELECT 1 FROM webhook_events p
                                WHERE p.user_id = e.related_user_id AND p.id < e.id AND p.status = 'pending')
                    AND NOT EXISTS (SELECT 1 FROM webhook_events p
                                    WHERE p.related_user_id = e.related_user_id AND p.id < e.id AND p.status = 'pending')))
                ORDER BY e.id LIMIT $3\(connection.dialect.forUpdateSkipLocked))
            RETURNING *
            """, [.date(now), .date(leaseEnd), .integer(Int64(limit))]).map(WebhookEventRecord.init(row:))
            .sorted { $0.id < $1.id }
    }

    /// Records an attempt: delivered, to be retried at `retryAt`, or failed for good (`retryAt` nil).
    public func recordAttempt(id: Int64, at date: Date, delivered: Bool, httpStatus: Int?, error: String?,
                              retryAt: Date?) async throws {
        let status = delivered ? "delivered" : (retryAt == nil ? "failed" : "pending")
        try await connection.query("""
            UPDATE webhook_events SET status = $2, attempts = attempts + 1, last_attempt_at = $3, last_status = $4,
                last_error = $5, next_attempt_at = $6, delivered_at = $7, locked_until = NULL
            WHERE id = $1
            """, [.integer(id), .text(status), .date(date), httpStatus.map { .integer(Int64($0)) } ?? .null,
                  .optionalText(error.map { String($0.prefix(500)) }), .date(retryAt ?? date),
                  delivered ? .date(date) : .null])
    }

    /// Events newest first; only failed ones with `failedOnly`.
    public func list(failedOnly: Bool, limit: Int) async throws -> [WebhookEventRecord] {
        try await connection.query("""
            SELECT * FROM webhook_events \(failedOnly ? "WHERE status = 'failed' " : "")ORDER BY id DESC LIMIT $1
            """, [.integer(Int64(limit))]).map(WebhookEventRecord.init(row:))
    }

    /// Makes a failed (or delivered) event pending again, due at `date`; false when there is no such event.
    public func retry(eventID: String, at date: Date) async throws -> Bool {
        !(try await connection.query("""
            UPDATE webhook_events SET status = 'pending', next_attempt_at = $2, locked_until = NULL
            WHERE event_id = $1 AND status <> 'pending' RETURNING id
            """, [.text(eventID), .date(date)]).isEmpty)
    }

    public func pendingCount() async throws -> Int {
        Int(try await connection.first("SELECT count(*) AS n FROM webhook_events WHERE status = 'pending'")?.integer("n") ?? 0)
    }
}
