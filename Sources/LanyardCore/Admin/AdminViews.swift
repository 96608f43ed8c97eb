import Foundation
import LanyardStore
import LanyardSupport

/// An account as the admin API lists it.
public struct AdminUserSummary: Encodable, Sendable, Equatable {
    public var id: String
    public var createdAt: Date
    public var lastActiveAt: Date
    public var isAnonymous: Bool
    public var disabled: Bool
    public var displayName: String?
    public var email: String?
    public var providers: [String]

    init(_ user: UserRecord, identities: [IdentityRecord]) {
        id = user.id
        createdAt = user.createdAt
        lastActiveAt = user.lastActiveAt
        isAnonymous = user.isAnonymous
        disabled = user.disabledAt != nil
        displayName = user.displayName
        email = identities.lazy.compactMap(\.email).first
        providers = identities.map(\.provider)
    }

    enum CodingKeys: String, CodingKey {
        case id, disabled, email, providers
        case createdAt = "created_at", lastActiveAt = "last_active_at", isAnonymous = "is_anonymous"
        case displayName = "display_name"
    }
}

/// One identity, with what an operator needs to recognise it (the provider's subject).
public struct AdminIdentity: Encodable, Sendable {
    public var id: String
    public var provider: String
    public var subject: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var linkedAt: Date
    public var lastSignInAt: Date?
    /// The account's primary sign-in method (reference section 1).
    public var primary: Bool

    init(_ identity: IdentityRecord, primary: Bool) {
        id = identity.id
        provider = identity.provider
        subject = identity.providerUserID
        email = identity.email
        emailVerified = identity.emailVerified
        isPrivateEmail = identity.isPrivateEmail
        linkedAt = identity.linkedAt
        lastSignInAt = identity.lastSignInAt
        self.primary = primary
    }

    enum CodingKeys: String, CodingKey {
        case id, provider, subject, email, primary
        case emailVerified = "email_verified", isPrivateEmail = "is_private_email", linkedAt = "linked_at"
        case lastSignInAt = "last_sign_in_at"
    }
}

/// An active session with its device hints.
public struct AdminSession: Encodable, Sendable {
    public var id: String
    public var method: String
    public var clientIP: String?
    public var userAgent: String?
    public var createdAt: Date
    public var lastRefreshedAt: Date
    public var expiresAt: Date

    init(_ session: SessionRecord) {
        id = session.id
        method = session.amr
        clientIP = session.clientIP
        userAgent = session.userAgent
        createdAt = session.createdAt
        lastRefreshedAt = session.refreshedAt
        expiresAt = session.expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case id, method
        case clientIP = "client_ip", userAgent = "user_agent", createdAt = "created_at"
        case lastRefreshedAt = "last_refreshed_at", expiresAt = "expires_at"
    }
}

/// An audit log entry.
public struct AdminAuditEvent: Encodable, Sendable {
    public var id: Int64
    public var at: Date
    public var type: String
    public var userID: String?
    public var sessionID: String?
    public var clientIP: String?
    public var details: JSONValue?

    init(id: Int64, _ entry: AuditEntry) {
        self.id = id
        at = entry.at
        type = entry.event
        userID = entry.userID
        sessionID = entry.sessionID
        clientIP = entry.clientIP
        details = entry.details.flatMap { try? JSONParser.parse(Array($0.utf8)) }
    }

    enum CodingKeys: String, CodingKey {
        case id, at, type, details
        case userID = "user_id", sessionID = "session_id", clientIP = "client_ip"
    }
}

/// `GET /v1/admin/users/{id}`.
public struct AdminUserDetails: Encodable, Sendable {
    public var user: AdminUserSummary
    public var identities: [AdminIdentity]
    public var sessions: [AdminSession]
    public var audit: [AdminAuditEvent]
}

/// A page of a list, and where the next one starts (`nil` at the end).
public struct AdminPage<Item: Encodable & Sendable>: Encodable, Sendable {
    public var items: [Item]
    public var nextCursor: String?
    let itemsKey: String

    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(items, forKey: Key(stringValue: itemsKey))
        try container.encode(nextCursor, forKey: Key(stringValue: "next_cursor"))
    }
}

/// `GET /v1/admin/stats`.
public struct AdminStats: Encodable, Sendable {
    public struct Active: Encodable, Sendable {
        public var lastDay: Int
        public var last7Days: Int
        public var last30Days: Int
        enum CodingKeys: String, CodingKey { case lastDay = "1d", last7Days = "7d", last30Days = "30d" }
    }

    public struct Day: Encodable, Sendable {
        public var date: String
        public var count: Int
        public var byProvider: [String: Int]?
        enum CodingKeys: String, CodingKey { case date, count, byProvider = "by_provider" }
    }

    public var accounts: Int
    public var guests: Int
    public var disabled: Int
    public var active: Active
    public var signInsPerDay: [Day]
    public var mergesPerDay: [Day]
    public var reuseDetectionsPerDay: [Day]

    enum CodingKeys: String, CodingKey {
        case accounts, guests, disabled, active
        case signInsPerDay = "sign_ins_per_day", mergesPerDay = "merges_per_day"
        case reuseDetectionsPerDay = "reuse_detections_per_day"
    }
}
