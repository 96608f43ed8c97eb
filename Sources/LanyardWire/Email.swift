import Foundation

/// What an email flow is for (reference section 18).
///
/// ```swift
/// let flow = try await client.email.start("ada@example.com", intent: .link)
/// ```
public enum EmailIntent: String, Sendable, Codable, CaseIterable {
    /// Sign in or sign up (a guest's bearer upgrades or merges at `verify`).
    case signin
    /// Add the address to the signed-in account as a sign-in method.
    case link
    /// Prove the person is still there, with the account's own email identity.
    case reauthenticate
}

/// `POST /v1/auth/email/start`.
///
/// ```swift
/// let body = EmailStartRequest(email: "ada@example.com")
/// ```
public struct EmailStartRequest: Sendable, Codable, Equatable {
    public var email: String
    public var intent: EmailIntent?
    /// Where the browser goes after the link is confirmed: one of `LANYARD_EMAIL_REDIRECT_URLS`, exactly.
    public var redirectTo: String?

    public init(email: String, intent: EmailIntent? = nil, redirectTo: String? = nil) {
        (self.email, self.intent, self.redirectTo) = (email, intent, redirectTo)
    }

    enum CodingKeys: String, CodingKey { case email, intent, redirectTo = "redirect_to" }
}

/// The answer to `start`: the same whether or not the address has an account. Keep `flowSecret` on the device;
/// show `match` so the person can type it on the page the mail's link opens.
///
/// ```swift
/// let flow = try await client.email.start("ada@example.com")
/// matchLabel.text = "Type \(flow.match) on the page the mail's link opens"
/// ```
public struct EmailFlowStarted: Sendable, Codable, Equatable {
    public var flowID: String
    public var flowSecret: String
    /// The two-digit number the confirm page asks the person to type (one try per link).
    public var match: Int
    /// Seconds until the code and link expire.
    public var expiresIn: Int
    /// Seconds until another mail may be asked for this address.
    public var resendAfter: Int

    public init(flowID: String, flowSecret: String, match: Int, expiresIn: Int, resendAfter: Int) {
        (self.flowID, self.flowSecret, self.match, self.expiresIn, self.resendAfter) =
            (flowID, flowSecret, match, expiresIn, resendAfter)
    }

    enum CodingKeys: String, CodingKey {
        case match, flowID = "flow_id", flowSecret = "flow_secret", expiresIn = "expires_in", resendAfter = "resend_after"
    }
}

/// `POST /v1/auth/email/verify`: the code from the mail, on the device that started the flow.
///
/// ```swift
/// let body = EmailVerifyRequest(flowID: flow.flowID, flowSecret: flow.flowSecret, code: "123456")
/// ```
public struct EmailVerifyRequest: Sendable, Codable, Equatable {
    public var flowID: String
    public var flowSecret: String
    public var code: String

    public init(flowID: String, flowSecret: String, code: String) {
        (self.flowID, self.flowSecret, self.code) = (flowID, flowSecret, code)
    }

    enum CodingKeys: String, CodingKey { case code, flowID = "flow_id", flowSecret = "flow_secret" }
}

/// `POST /v1/auth/email/complete`: finishes a flow whose link was confirmed, waiting up to `wait` seconds (≤ 30).
///
/// ```swift
/// let body = EmailCompleteRequest(flowID: flow.flowID, flowSecret: flow.flowSecret, wait: 25)
/// ```
public struct EmailCompleteRequest: Sendable, Codable, Equatable {
    public var flowID: String
    public var flowSecret: String
    public var wait: Int?

    public init(flowID: String, flowSecret: String, wait: Int? = nil) {
        (self.flowID, self.flowSecret, self.wait) = (flowID, flowSecret, wait)
    }

    enum CodingKeys: String, CodingKey { case wait, flowID = "flow_id", flowSecret = "flow_secret" }
}

/// `POST /v1/auth/email/recover`: an operator's recovery code, with the address it was sent to (no device holds
/// that flow's secret). A later code asked for the same address does not supersede it.
///
/// ```swift
/// let body = EmailRecoverRequest(email: "ada@example.com", code: "123456")
/// ```
public struct EmailRecoverRequest: Sendable, Codable, Equatable {
    public var email: String
    public var code: String

    public init(email: String, code: String) {
        (self.email, self.code) = (email, code)
    }
}

/// A row of the console's Email deliveries page (`GET /v1/admin/email/deliveries`).
///
/// ```swift
/// let failed = deliveries.filter { $0.status == "failed" }
/// ```
public struct AdminEmailDelivery: Sendable, Codable, Equatable {
    public var id: Int64
    public var recipient: String
    public var userID: String?
    public var intent: String
    /// `pending` (queued or retrying), `sent` or `failed`.
    public var status: String
    public var attempts: Int
    public var nextAttemptAt: Date?
    public var lastError: String?
    public var createdAt: Date
    public var sentAt: Date?
    public var failedAt: Date?

    public init(id: Int64, recipient: String, userID: String?, intent: String, status: String, attempts: Int,
                nextAttemptAt: Date?, lastError: String?, createdAt: Date, sentAt: Date?, failedAt: Date?) {
        (self.id, self.recipient, self.userID, self.intent, self.status, self.attempts) =
            (id, recipient, userID, intent, status, attempts)
        (self.nextAttemptAt, self.lastError, self.createdAt, self.sentAt, self.failedAt) =
            (nextAttemptAt, lastError, createdAt, sentAt, failedAt)
    }

    enum CodingKeys: String, CodingKey {
        case id, recipient, intent, status, attempts
        case userID = "user_id", nextAttemptAt = "next_attempt_at", lastError = "last_error", createdAt = "created_at"
        case sentAt = "sent_at", failedAt = "failed_at"
    }
}

/// A mail in the emulator's mailbox (`GET /_emulator/mail?to=`, dev mode).
///
/// ```swift
/// let code = mailbox.first?.code
/// ```
public struct MailboxMessage: Sendable, Codable, Equatable {
    public var to: String
    public var subject: String
    public var text: String
    public var html: String
    public var code: String
    /// The confirm link; nil for mails that carry a code only (GoTrue's, an operator's recovery).
    public var link: String?
    public var intent: String
    public var createdAt: Date

    public init(to: String, subject: String, text: String, html: String, code: String, link: String?, intent: String,
                createdAt: Date) {
        (self.to, self.subject, self.text, self.html, self.code, self.link, self.intent, self.createdAt) =
            (to, subject, text, html, code, link, intent, createdAt)
    }

    enum CodingKeys: String, CodingKey { case to, subject, text, html, code, link, intent, createdAt = "created_at" }
}
