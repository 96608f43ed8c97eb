import Foundation

/// The signed-in account, as the server last described it.
///
/// ```swift
/// if let user = client.user {
///     print(user.displayName ?? "Guest", user.isAnonymous, user.linkedProviders.map(\.provider))
/// }
/// ```
public struct User: Sendable, Equatable, Codable, Identifiable {
    /// The account's id; it never changes, also not when a guest signs in.
    public var id: ID
    /// When the account was made.
    public var createdAt: Date
    /// A guest: no sign-in method yet.
    public var isAnonymous: Bool
    /// The name the account shows, if any.
    public var displayName: String?
    /// The email of the first linked identity that has one.
    public var email: String?
    /// The account's sign-in methods, oldest link first.
    public var identities: [Identity]

    /// The account's sign-in methods, oldest first; the first is the primary one.
    ///
    /// ```swift
    /// ForEach(user.linkedProviders, id: \.provider) { Text($0.provider.displayName) }
    /// ```
    public var linkedProviders: [LinkedProvider] {
        identities.enumerated().map { index, identity in
            // A server before 0.3 sent no flag: its first identity was the primary.
            LinkedProvider(provider: identity.provider,
                           isPrimary: identity.primary || (index == 0 && !identities.contains(where: \.primary)),
                           linkedAt: identity.linkedAt, email: identity.email)
        }
    }

    /// Whether `provider` is one of the account's sign-in methods.
    ///
    /// ```swift
    /// let canLinkGoogle = !(client.user?.isLinked(.google) ?? true)
    /// ```
    public func isLinked(_ provider: Provider) -> Bool {
        identities.contains { $0.provider == provider }
    }

    /// Builds a user, for previews and tests.
    ///
    /// ```swift
    /// let preview = User(id: "1", createdAt: .now, isAnonymous: true)
    /// ```
    public init(id: ID, createdAt: Date, isAnonymous: Bool, displayName: String? = nil, email: String? = nil,
                identities: [Identity] = []) {
        self.id = id
        self.createdAt = createdAt
        self.isAnonymous = isAnonymous
        self.displayName = displayName
        self.email = email
        self.identities = identities
    }

    enum CodingKeys: String, CodingKey {
        case id, email, identities
        case createdAt = "created_at", isAnonymous = "is_anonymous", displayName = "display_name"
    }

    /// Writes every member, `null` ones too, as the server does.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(isAnonymous, forKey: .isAnonymous)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(email, forKey: .email)
        try container.encode(identities, forKey: .identities)
    }
}

/// One provider account attached to the user.
///
/// ```swift
/// for identity in user.identities where identity.isPrivateEmail {
///     print("\(identity.provider.displayName) hides the real address")
/// }
/// ```
public struct Identity: Sendable, Equatable, Codable {
    /// Which provider.
    public var provider: Provider
    /// The email the provider shared, if any.
    public var email: String?
    /// Whether the provider verified that email.
    public var emailVerified: Bool
    /// An Apple private relay address.
    public var isPrivateEmail: Bool
    /// When it was linked to this account.
    public var linkedAt: Date
    /// When it was last used to sign in.
    public var lastSignInAt: Date?
    /// The account's primary sign-in method: the one it was created (or upgraded from a guest) with, or, once that
    /// one is unlinked, the oldest remaining. Exactly one identity of a signed-in account is primary.
    public var primary: Bool

    /// Builds an identity, for previews and tests.
    ///
    /// ```swift
    /// let google = Identity(provider: .google, email: "ada@example.com", linkedAt: .now)
    /// ```
    public init(provider: Provider, email: String? = nil, emailVerified: Bool = false, isPrivateEmail: Bool = false,
                linkedAt: Date, lastSignInAt: Date? = nil, primary: Bool = false) {
        self.provider = provider
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.linkedAt = linkedAt
        self.lastSignInAt = lastSignInAt
        self.primary = primary
    }

    enum CodingKeys: String, CodingKey {
        case provider, email, primary
        case emailVerified = "email_verified", isPrivateEmail = "is_private_email", linkedAt = "linked_at"
        case lastSignInAt = "last_sign_in_at"
    }

    /// Writes every member, `null` ones too, as the server does.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(provider, forKey: .provider)
        try container.encode(email, forKey: .email)
        try container.encode(emailVerified, forKey: .emailVerified)
        try container.encode(isPrivateEmail, forKey: .isPrivateEmail)
        try container.encode(linkedAt, forKey: .linkedAt)
        try container.encode(lastSignInAt, forKey: .lastSignInAt)
        try container.encode(primary, forKey: .primary)
    }

    /// Reads an identity; `primary` is false when a server before 0.3 did not send it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        provider = try container.decode(Provider.self, forKey: .provider)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try container.decode(Bool.self, forKey: .emailVerified)
        isPrivateEmail = try container.decode(Bool.self, forKey: .isPrivateEmail)
        linkedAt = try container.decode(Date.self, forKey: .linkedAt)
        lastSignInAt = try container.decodeIfPresent(Date.self, forKey: .lastSignInAt)
        primary = try container.decodeIfPresent(Bool.self, forKey: .primary) ?? false
    }
}

/// A sign-in method of the account, as a settings screen lists it.
///
/// ```swift
/// for method in client.linkedProviders {
///     print(method.provider.displayName, method.isPrimary ? "(primary)" : "", method.linkedAt)
/// }
/// ```
public struct LinkedProvider: Sendable, Equatable {
    /// Which provider.
    public var provider: Provider
    /// The account's primary sign-in method (the one it was created with; after that one is unlinked, the oldest).
    public var isPrimary: Bool
    /// When it was linked.
    public var linkedAt: Date
    /// The email that provider shared, if any.
    public var email: String?
}

/// `GET` and `PATCH /v1/users/me`: the account, its methods' names beside its members, and how many ways back in
/// it has (reference section 18: an app nudges an account with one to add a second).
///
/// ```swift
/// let account = try await client.account()
/// if account.recovery.methods < 2 { showAddAnEmailBanner() }
/// ```
public struct AccountResponse: Sendable, Equatable, Codable {
    public var user: User
    public var recovery: AccountRecovery
    /// The id the system the app moved from knew this account by (a Firebase uid, a Supabase user id, a Clerk
    /// `user_…`), and that system's name: `nil` for an account Lanyard made itself (reference section 24).
    ///
    /// ```swift
    /// let oldID = try await client.account().legacyID ?? client.user?.id.rawValue
    /// ```
    public var legacyID: String?
    public var legacySource: String?

    /// The names of the account's sign-in methods, oldest link first (`linked_providers`).
    public var linkedProviders: [Provider] { user.identities.map(\.provider) }

    /// The answer for `user`: its recovery counted from its identities.
    ///
    /// ```swift
    /// let answer = AccountResponse(user: user)
    /// ```
    public init(user: User, legacyID: String? = nil, legacySource: String? = nil) {
        self.user = user
        recovery = AccountRecovery(methods: user.identities.count)
        (self.legacyID, self.legacySource) = (legacyID, legacySource)
    }

    enum CodingKeys: String, CodingKey {
        case recovery, linkedProviders = "linked_providers", legacyID = "legacy_id", legacySource = "legacy_source"
    }

    public init(from decoder: any Decoder) throws {
        user = try User(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        recovery = try container.decodeIfPresent(AccountRecovery.self, forKey: .recovery)
            ?? AccountRecovery(methods: user.identities.count)
        legacyID = try container.decodeIfPresent(String.self, forKey: .legacyID)
        legacySource = try container.decodeIfPresent(String.self, forKey: .legacySource)
    }

    public func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(linkedProviders, forKey: .linkedProviders)
        try container.encode(recovery, forKey: .recovery)
        try container.encode(legacyID, forKey: .legacyID)
        try container.encode(legacySource, forKey: .legacySource)
    }
}

/// How many ways back in an account has: its sign-in methods.
///
/// ```swift
/// let nudge = account.recovery.methods == 1
/// ```
public struct AccountRecovery: Sendable, Equatable, Codable {
    public var methods: Int

    public init(methods: Int) {
        self.methods = methods
    }
}
