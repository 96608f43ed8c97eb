import Foundation

// The admin API's answers (reference section 11), read by the console and the `lanyard` command.

/// An account as the admin API lists it.
public struct AdminUserSummary: Codable, Sendable, Equatable {
    public var id: String
    public var createdAt: Date
    public var lastActiveAt: Date
    public var isAnonymous: Bool
    public var disabled: Bool
    public var displayName: String?
    public var email: String?
    public var providers: [String]
    /// The id another system knew the account by, and that system (reference section 24); absent when none.
    public var legacyID: String?
    public var legacySource: String?

    /// Builds the answer.
    public init(id: String, createdAt: Date, lastActiveAt: Date, isAnonymous: Bool, disabled: Bool,
                displayName: String?, email: String?, providers: [String], legacyID: String? = nil,
                legacySource: String? = nil) {
        self.legacyID = legacyID
        self.legacySource = legacySource
        self.id = id
        self.createdAt = createdAt
        self.lastActiveAt = lastActiveAt
        self.isAnonymous = isAnonymous
        self.disabled = disabled
        self.displayName = displayName
        self.email = email
        self.providers = providers
    }

    enum CodingKeys: String, CodingKey {
        case id, disabled, email, providers
        case createdAt = "created_at", lastActiveAt = "last_active_at", isAnonymous = "is_anonymous"
        case displayName = "display_name", legacyID = "legacy_id", legacySource = "legacy_source"
    }
}

/// One identity, with what an operator needs to recognise it (the provider's subject).
public struct AdminIdentity: Codable, Sendable, Equatable {
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

    /// Builds the answer.
    public init(id: String, provider: String, subject: String, email: String?, emailVerified: Bool,
                isPrivateEmail: Bool, linkedAt: Date, lastSignInAt: Date?, primary: Bool) {
        self.id = id
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.linkedAt = linkedAt
        self.lastSignInAt = lastSignInAt
        self.primary = primary
    }

    enum CodingKeys: String, CodingKey {
        case id, provider, subject, email, primary
        case emailVerified = "email_verified", isPrivateEmail = "is_private_email", linkedAt = "linked_at"
        case lastSignInAt = "last_sign_in_at"
    }
}

/// An active session with its device hints.
public struct AdminSession: Codable, Sendable, Equatable {
    public var id: String
    public var method: String
    public var clientIP: String?
    public var userAgent: String?
    public var createdAt: Date
    public var lastRefreshedAt: Date
    public var expiresAt: Date

    /// Builds the answer.
    public init(id: String, method: String, clientIP: String?, userAgent: String?, createdAt: Date,
                lastRefreshedAt: Date, expiresAt: Date) {
        self.id = id
        self.method = method
        self.clientIP = clientIP
        self.userAgent = userAgent
        self.createdAt = createdAt
        self.lastRefreshedAt = lastRefreshedAt
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case id, method
        case clientIP = "client_ip", userAgent = "user_agent", createdAt = "created_at"
        case lastRefreshedAt = "last_refreshed_at", expiresAt = "expires_at"
    }
}

/// An audit log entry.
public struct AdminAuditEvent: Codable, Sendable, Equatable {
    public var id: Int64
    public var at: Date
    public var type: String
    public var userID: String?
    public var sessionID: String?
    public var clientIP: String?
    public var details: JSONText?

    /// Builds the answer.
    public init(id: Int64, at: Date, type: String, userID: String?, sessionID: String?, clientIP: String?,
                details: JSONText?) {
        self.id = id
        self.at = at
        self.type = type
        self.userID = userID
        self.sessionID = sessionID
        self.clientIP = clientIP
        self.details = details
    }

    enum CodingKeys: String, CodingKey {
        case id, at, type, details
        case userID = "user_id", sessionID = "session_id", clientIP = "client_ip"
    }
}

/// `GET /v1/admin/users/{id}`.
public struct AdminUserDetails: Codable, Sendable, Equatable {
    public var user: AdminUserSummary
    public var identities: [AdminIdentity]
    public var sessions: [AdminSession]
    public var audit: [AdminAuditEvent]
    /// Builds the answer.
    public init(user: AdminUserSummary, identities: [AdminIdentity], sessions: [AdminSession],
                audit: [AdminAuditEvent]) {
        self.user = user
        self.identities = identities
        self.sessions = sessions
        self.audit = audit
    }

}

/// A page of a list, and where the next one starts (`nil` at the end).
public struct AdminPage<Item: Encodable & Sendable>: Encodable, Sendable {
    public var items: [Item]
    public var nextCursor: String?
    public let itemsKey: String

    /// Builds the answer.
    public init(items: [Item], nextCursor: String?, itemsKey: String) {
        self.items = items
        self.nextCursor = nextCursor
        self.itemsKey = itemsKey
    }

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
public struct AdminStats: Codable, Sendable, Equatable {
    public struct Active: Codable, Sendable, Equatable {
        public var lastDay: Int
        public var last7Days: Int
        public var last30Days: Int
        /// Builds the answer.
        public init(lastDay: Int, last7Days: Int, last30Days: Int) {
            self.lastDay = lastDay
            self.last7Days = last7Days
            self.last30Days = last30Days
        }

        enum CodingKeys: String, CodingKey { case lastDay = "1d", last7Days = "7d", last30Days = "30d" }
    }

    public struct Day: Codable, Sendable, Equatable {
        public var date: String
        public var count: Int
        public var byProvider: [String: Int]?
        /// Builds the answer.
        public init(date: String, count: Int, byProvider: [String: Int]?) {
            self.date = date
            self.count = count
            self.byProvider = byProvider
        }

        enum CodingKeys: String, CodingKey { case date, count, byProvider = "by_provider" }
    }

    public var accounts: Int
    public var guests: Int
    public var disabled: Int
    public var active: Active
    public var signInsPerDay: [Day]
    public var mergesPerDay: [Day]
    public var reuseDetectionsPerDay: [Day]

    /// Builds the answer.
    public init(accounts: Int, guests: Int, disabled: Int, active: Active, signInsPerDay: [Day], mergesPerDay: [Day],
                reuseDetectionsPerDay: [Day]) {
        self.accounts = accounts
        self.guests = guests
        self.disabled = disabled
        self.active = active
        self.signInsPerDay = signInsPerDay
        self.mergesPerDay = mergesPerDay
        self.reuseDetectionsPerDay = reuseDetectionsPerDay
    }

    enum CodingKeys: String, CodingKey {
        case accounts, guests, disabled, active
        case signInsPerDay = "sign_ins_per_day", mergesPerDay = "merges_per_day"
        case reuseDetectionsPerDay = "reuse_detections_per_day"
    }
}

/// A configured provider and what the server knows of its keys (`GET /v1/admin/providers`, the console's
/// Providers page). Keys are fetched when a token first needs them.
public struct AdminProvider: Codable, Sendable, Equatable {
    /// The last fetch of the provider's keys that failed, since the last one that worked.
    public struct KeyFailure: Codable, Sendable, Equatable {
        public var at: Date
        public var message: String

        public init(at: Date, message: String) {
            self.at = at
            self.message = message
        }
    }

    /// The last token of the provider this instance refused, and why (never the token).
    public struct TokenRefusal: Codable, Sendable, Equatable {
        public var at: Date
        /// The `details.reason` of `INVALID_PROVIDER_TOKEN`.
        public var reason: String
        public var kid: String?

        public init(at: Date, reason: String, kid: String?) {
            (self.at, self.reason, self.kid) = (at, reason, kid)
        }
    }

    public var name: String
    public var displayName: String
    /// `apple`, `google` or `oidc`.
    public var kind: String
    /// Who may issue its tokens: the issuer, or Microsoft's rule with its tenants.
    public var issuer: String
    /// The accepted audiences.
    public var clientIDs: [String]
    /// A key set, or a discovery document that names one.
    public var keysURL: String
    public var nonceRequired: Bool
    /// The key ids held now; empty before the first fetch.
    public var keyIDs: [String]
    public var keysFetchedAt: Date?
    public var keysFreshUntil: Date?
    public var lastError: KeyFailure?
    public var lastRefusal: TokenRefusal?

    public init(name: String, displayName: String, kind: String, issuer: String, clientIDs: [String], keysURL: String,
                nonceRequired: Bool, keyIDs: [String], keysFetchedAt: Date?, keysFreshUntil: Date?, lastError: KeyFailure?,
                lastRefusal: TokenRefusal? = nil) {
        self.name = name
        self.displayName = displayName
        self.kind = kind
        self.issuer = issuer
        self.clientIDs = clientIDs
        self.keysURL = keysURL
        self.nonceRequired = nonceRequired
        self.keyIDs = keyIDs
        self.keysFetchedAt = keysFetchedAt
        self.keysFreshUntil = keysFreshUntil
        self.lastError = lastError
        self.lastRefusal = lastRefusal
    }

    enum CodingKeys: String, CodingKey {
        case name, kind, issuer
        case displayName = "display_name", clientIDs = "client_ids", keysURL = "keys_url", nonceRequired = "nonce_required"
        case keyIDs = "key_ids", keysFetchedAt = "keys_fetched_at", keysFreshUntil = "keys_fresh_until"
        case lastError = "last_error", lastRefusal = "last_refusal"
    }
}

/// `GET /v1/admin/providers`.
public struct AdminProviderList: Codable, Sendable, Equatable {
    public var providers: [AdminProvider]

    public init(providers: [AdminProvider]) {
        self.providers = providers
    }
}
