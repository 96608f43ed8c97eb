import Foundation

/// The answer of sign-in, anonymous sign-in, refresh and re-authentication (reference section 3).
///
/// ```swift
/// let session = try WireCoding.decoder().decode(SessionResponse.self, from: data)
/// print(session.user.id, session.isNewUser, session.mergedFrom ?? "no merge")
/// ```
public struct SessionResponse: Sendable, Equatable, Codable {
    /// The ES256 access token (`Authorization: Bearer …`).
    public var accessToken: String
    /// Always `Bearer`.
    public var tokenType: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// The single-use refresh token.
    public var refreshToken: String
    /// The account as it now is.
    public var user: User
    /// The account's providers, oldest link first.
    public var linkedProviders: [Provider]
    /// Whether this sign-in made the account.
    public var isNewUser: Bool
    /// The guest account merged into this one by this sign-in, if any.
    public var mergedFrom: User.ID?

    /// Builds an answer; `linkedProviders` follows from the user's identities.
    ///
    /// ```swift
    /// let answer = SessionResponse(accessToken: "…", expiresIn: 900, refreshToken: "…", user: user, isNewUser: true)
    /// ```
    public init(accessToken: String, expiresIn: Int, refreshToken: String, user: User, isNewUser: Bool,
                mergedFrom: User.ID? = nil) {
        self.accessToken = accessToken
        tokenType = "Bearer"
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.user = user
        linkedProviders = user.identities.map(\.provider)
        self.isNewUser = isNewUser
        self.mergedFrom = mergedFrom
    }

    enum CodingKeys: String, CodingKey {
        case user
        case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
        case refreshToken = "refresh_token", linkedProviders = "linked_providers", isNewUser = "is_new_user"
        case mergedFrom = "merged_from"
    }

    /// Writes every member, `merged_from: null` too, as the server does.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encode(tokenType, forKey: .tokenType)
        try container.encode(expiresIn, forKey: .expiresIn)
        try container.encode(refreshToken, forKey: .refreshToken)
        try container.encode(user, forKey: .user)
        try container.encode(linkedProviders, forKey: .linkedProviders)
        try container.encode(isNewUser, forKey: .isNewUser)
        try container.encode(mergedFrom, forKey: .mergedFrom)
    }
}

/// The answer of `POST` and `DELETE /v1/auth/link/{provider}`.
///
/// ```swift
/// let linked = try WireCoding.decoder().decode(LinkResponse.self, from: data)
/// print(linked.message, linked.linkedProviders)
/// ```
public struct LinkResponse: Sendable, Equatable, Codable {
    /// The account's providers after the change, oldest link first.
    public var linkedProviders: [Provider]
    /// What happened, for a person: "Apple account linked".
    public var message: String
    /// The account as it now is; only a link answers it.
    public var user: User?

    /// Builds an answer.
    ///
    /// ```swift
    /// let unlinked = LinkResponse(linkedProviders: [.apple], message: "Google account unlinked")
    /// ```
    public init(linkedProviders: [Provider], message: String, user: User? = nil) {
        self.linkedProviders = linkedProviders
        self.message = message
        self.user = user
    }

    enum CodingKeys: String, CodingKey {
        case message, user
        case linkedProviders = "linked_providers"
    }
}
