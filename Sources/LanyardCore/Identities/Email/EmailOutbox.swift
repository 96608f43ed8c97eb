import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport
import LanyardWire

/// The mail outbox's rules (reference section 18): what is due, what a failed attempt leads to, and what a mail
/// that can never be delivered does to its flow (it answers `INVALID_CODE undeliverable`), to the console and to
/// the app's backend (`email.failed`). The sending itself is the server's mailer.
public struct EmailOutbox: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// Waits between attempts: six in all, the last about eight minutes after the first, inside a flow's life.
    static let retryDelays: [TimeInterval] = [5, 15, 45, 120, 300]

    /// When to try again after `attempts` failed attempts, or nil to give up.
    static func nextAttempt(after attempts: Int, at date: Date) -> Date? {
        guard attempts >= 1, attempts <= retryDelays.count else { return nil }
        return date.addingTimeInterval(retryDelays[attempts - 1])
    }

    /// One mail ready for the wire.
    public struct Due: Sendable {
        public var id: Int64
        public var flowID: String
        public var recipient: String
        public var attempts: Int
        public var subject: String
        public var text: String
        public var html: String
        public var messageID: String
    }

    /// Leases the due mails until `leaseEnd`; a mail whose body cannot be opened (the master key changed) fails.
    public func claimDue(leaseFor lease: TimeInterval, limit: Int) async throws -> [Due] {
        let now = dependencies.clock.now()
        // Most polls find nothing: a read says so without a write transaction.
        guard try await dependencies.database.read({ try await EmailDeliveryStore($0).hasDue(now: now) }) else { return [] }
        let rows = try await dependencies.database.transaction { connection in
            try await EmailDeliveryStore(connection).claimDue(now: now, leaseEnd: now.addingTimeInterval(lease), limit: limit)
        }
        var due: [Due] = []
        for row in rows {
            guard let sealed = row.sealedBody, let content = try? dependencies.emailSecrets.open(sealed) else {
                try await recordFailure(row.id, flowID: row.flowID, recipient: row.recipient, userID: row.userID,
                                        attempts: row.attempts, error: "the mail cannot be opened", permanent: true)
                continue
            }
            due.append(Due(id: row.id, flowID: row.flowID, recipient: row.recipient, attempts: row.attempts,
                           subject: content.subject, text: content.text, html: content.html, messageID: content.messageID))
        }
        return due
    }

    /// Handed over; in the mailbox (dev mode without SMTP) the body stays for `GET /_emulator/mail`.
    public func recordSent(_ id: Int64, keepBody: Bool) async throws {
        let now = dependencies.clock.now()
        try await dependencies.database.transaction { connection in
            try await EmailDeliveryStore(connection).recordSent(id: id, at: now, keepBody: keepBody)
        }
    }

    /// A failed attempt: retried on the schedule unless `permanent` or the last; a mail given up on marks its flow
    /// undeliverable and is audited and sent to the webhooks as `email.failed`. True when it was given up on.
    @discardableResult
    public func recordFailure(_ id: Int64, flowID: String, recipient: String, userID: String?, attempts: Int,
                              error: String, permanent: Bool) async throws -> Bool {
        let now = dependencies.clock.now()
        let retryAt = permanent ? nil : Self.nextAttempt(after: attempts + 1, at: now)
        let dependencies = self.dependencies
        try await dependencies.database.transaction { connection in
            let deliveries = EmailDeliveryStore(connection)
            if let retryAt {
                try await deliveries.recordRetry(id: id, error: error, retryAt: retryAt)
                return
            }
            try await deliveries.recordFailed(id: id, error: error, at: now)
            try await EmailFlowStore(connection).markUndeliverable(id: flowID, at: now)
            let owner = if let userID { userID } else {
                try await IdentityStore(connection).find(provider: Provider.email.rawValue, providerUserID: recipient)?.userID
            }
            try await dependencies.audit(connection, at: now, clientIP: nil).write(
                .emailFailed, userID: owner,
                details: ["email": recipient, "flow_id": flowID, "error": String(error.prefix(200)), "code": "EMAIL_UNDELIVERABLE"])
        }
        return retryAt == nil
    }

    /// Flows a day past their end, limit counters idle for an hour (their windows are over), and mail records
    /// older than 30 days.
    public func forgetEnded() async throws {
        let now = dependencies.clock.now()
        try await dependencies.database.transaction { connection in
            try await EmailFlowStore(connection).deleteEnded(before: now.addingTimeInterval(-86_400))
            try await EmailLimitStore(connection).deleteIdle(before: now.addingTimeInterval(-3_600))
            try await EmailDeliveryStore(connection).deleteOlder(than: now.addingTimeInterval(-30 * 86_400))
        }
    }

    /// The console's Email deliveries page, newest first.
    public func deliveries(status: String?, limit: Int) async throws -> [AdminEmailDelivery] {
        guard status == nil || EmailDeliveryRecord.Status(rawValue: status!) != nil else {
            throw LanyardError.invalidRequest(field: "status", "status must be pending, sent or failed")
        }
        let rows = try await dependencies.database.read { connection in
            try await EmailDeliveryStore(connection).list(status: status.flatMap(EmailDeliveryRecord.Status.init), limit: limit)
        }
        return rows.map { row in
            AdminEmailDelivery(id: row.id, recipient: row.recipient, userID: row.userID, intent: row.intent,
                               status: row.status.rawValue, attempts: row.attempts,
                               nextAttemptAt: row.status == .pending ? row.nextAttemptAt : nil, lastError: row.lastError,
                               createdAt: row.createdAt, sentAt: row.sentAt, failedAt: row.failedAt)
        }
    }

    /// The emulator's mailbox (dev mode): the mails kept, to `recipient` or all, newest first.
    public func mailbox(to recipient: String?, limit: Int) async throws -> [MailboxMessage] {
        let address = try recipient.map { try EmailFlows.address($0).value }
        let rows = try await dependencies.database.read { connection in
            try await EmailDeliveryStore(connection).mailbox(recipient: address, limit: limit)
        }
        return rows.compactMap { row in
            guard let sealed = row.sealedBody, let content = try? dependencies.emailSecrets.open(sealed) else { return nil }
            return MailboxMessage(to: row.recipient, subject: content.subject, text: content.text, html: content.html,
                                  code: content.code, link: content.link, intent: row.intent, createdAt: row.createdAt)
        }
    }
}
