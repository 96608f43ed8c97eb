import Foundation
import LanyardStore

/// An identity as the API shows it (DESIGN section 3, `User.identities`).
public struct IdentityView: Encodable, Sendable, Equatable {
    public var provider: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var linkedAt: Date
    public var lastSignInAt: Date?

    enum CodingKeys: String, CodingKey {
        case provider, email
        case emailVerified = "email_verified", isPrivateEmail = "is_private_email"
        case linkedAt = "linked_at", lastSignInAt = "last_sign_in_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(provider, forKey: .provider)
        try container.encode(email, forKey: .email)
        try container.encode(emailVerified, forKey: .emailVerified)
        try container.encode(isPrivateEmail, forKey: .isPrivateEmail)
        try container.encode(linkedAt, forKey: .linkedAt)
        try container.encode(lastSignInAt, forKey: .lastSignInAt)
    }
}

/// The account as the API shows it: DESIGN's `User`, plus `linked_providers`.
public struct UserView: Encodable, Sendable, Equatable {
    public var id: String
    public var createdAt: Date
    public var isAnonymous: Bool
    public var displayName: String?
    public var email: String?
    public var identities: [IdentityView]

    /// The providers of the account's identities, oldest link first.
    public var linkedProviders: [String] { identities.map(\.provider) }

    public init(user: UserRecord, identities: [IdentityRecord]) {
        id = user.id
        createdAt = user.createdAt
        isAnonymous = user.isAnonymous
        displayName = user.displayName
        // The primary (first linked) identity's email; other identities may carry other emails, which is normal.
        email = identities.lazy.compactMap(\.email).first
        self.identities = identities.map {
            IdentityView(provider: $0.provider, email: $0.email, emailVerified: $0.emailVerified,
                         isPrivateEmail: $0.isPrivateEmail, linkedAt: $0.linkedAt, lastSignInAt: $0.lastSignInAt)
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, email, identities
        case createdAt = "created_at", isAnonymous = "is_anonymous", displayName = "display_name"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(isAnonymous, forKey: .isAnonymous)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(email, forKey: .email)
        try container.encode(identities, forKey: .identities)
    }

    static func load(userID: String, connection: any DatabaseConnection) async throws -> UserView {
        guard let user = try await UserStore(connection).find(id: userID) else {
            throw LanyardError.unauthorized("This account no longer exists")
        }
        return UserView(user: user, identities: try await IdentityStore(connection).list(userID: userID))
    }
}

/// `GET /v1/users/me`: the `User` with `linked_providers` beside its fields.
public struct MeResponse: Encodable, Sendable {
    public var user: UserView

    enum CodingKeys: String, CodingKey { case linkedProviders = "linked_providers" }

    public func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(user.linkedProviders, forKey: .linkedProviders)
    }
}

/// The session response of sign-in, anonymous, refresh and reauthenticate (DESIGN section 3).
public struct SessionResponse: Encodable, Sendable {
    public var accessToken: String
    public var tokenType = "Bearer"
    public var expiresIn: Int
    public var refreshToken: String
    public var user: UserView
    public var isNewUser: Bool
    public var mergedFrom: String?
    /// Not encoded: lets the server label metrics and logs without parsing the token.
    public var sessionID: String

    /// For tools (the benchmark) that build a response without a session.
    public init(accessToken: String, refreshToken: String, expiresIn: Int, user: UserView, isNewUser: Bool) {
        self.init(tokens: IssuedTokens(accessToken: accessToken, refreshToken: refreshToken, expiresIn: expiresIn,
                                       sessionID: ""), user: user, isNewUser: isNewUser)
    }

    init(tokens: IssuedTokens, user: UserView, isNewUser: Bool, mergedFrom: String? = nil) {
        accessToken = tokens.accessToken
        expiresIn = tokens.expiresIn
        refreshToken = tokens.refreshToken
        sessionID = tokens.sessionID
        self.user = user
        self.isNewUser = isNewUser
        self.mergedFrom = mergedFrom
    }

    enum CodingKeys: String, CodingKey {
        case user
        case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
        case refreshToken = "refresh_token", linkedProviders = "linked_providers", isNewUser = "is_new_user"
        case mergedFrom = "merged_from"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encode(tokenType, forKey: .tokenType)
        try container.encode(expiresIn, forKey: .expiresIn)
        try container.encode(refreshToken, forKey: .refreshToken)
        try container.encode(user, forKey: .user)
        try container.encode(user.linkedProviders, forKey: .linkedProviders)
        try container.encode(isNewUser, forKey: .isNewUser)
        try container.encode(mergedFrom, forKey: .mergedFrom)
    }
}

/// `POST /v1/auth/link/{provider}` and `DELETE …` answers.
public struct LinkResponse: Encodable, Sendable {
    public var linkedProviders: [String]
    public var message: String
    public var user: UserView?

    enum CodingKeys: String, CodingKey {
        case message, user
        case linkedProviders = "linked_providers"
    }
}
