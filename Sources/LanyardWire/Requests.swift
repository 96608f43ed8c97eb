import Foundation

/// The body of `POST /v1/auth/signin/{provider}`.
///
/// ```swift
/// let body = SignInBody(idToken: token, nonce: rawNonce, givenName: "Ada", familyName: "Lovelace")
/// ```
public struct SignInBody: Sendable, Equatable, Codable {
    /// The provider's ID token.
    public var idToken: String
    /// The raw nonce, when the app sent one to the provider.
    public var nonce: String?
    /// Apple's first sign-in only: the name the person shared.
    public var givenName: String?
    public var familyName: String?
    /// Apple's single-use code, redeemed for the refresh token account deletion revokes.
    public var authorizationCode: String?

    /// Builds a body.
    ///
    /// ```swift
    /// let body = SignInBody(idToken: token)
    /// ```
    public init(idToken: String, nonce: String? = nil, givenName: String? = nil, familyName: String? = nil,
                authorizationCode: String? = nil) {
        self.idToken = idToken
        self.nonce = nonce
        self.givenName = givenName
        self.familyName = familyName
        self.authorizationCode = authorizationCode
    }

    enum CodingKeys: String, CodingKey {
        case nonce
        case idToken = "id_token", givenName = "given_name", familyName = "family_name"
        case authorizationCode = "authorization_code"
    }
}

/// The body of `POST /v1/auth/link/{provider}` and `POST /v1/auth/reauthenticate/{provider}`.
///
/// ```swift
/// let body = ProviderTokenBody(idToken: token, nonce: rawNonce)
/// ```
public struct ProviderTokenBody: Sendable, Equatable, Codable {
    /// The provider's ID token.
    public var idToken: String
    /// The raw nonce, when the app sent one to the provider.
    public var nonce: String?
    /// Apple's single-use code.
    public var authorizationCode: String?

    /// Builds a body.
    ///
    /// ```swift
    /// let body = ProviderTokenBody(idToken: token)
    /// ```
    public init(idToken: String, nonce: String? = nil, authorizationCode: String? = nil) {
        self.idToken = idToken
        self.nonce = nonce
        self.authorizationCode = authorizationCode
    }

    enum CodingKeys: String, CodingKey {
        case nonce
        case idToken = "id_token", authorizationCode = "authorization_code"
    }
}

/// The body of `POST /v1/auth/refresh`.
///
/// ```swift
/// let body = RefreshBody(refreshToken: stored.refreshToken)
/// ```
public struct RefreshBody: Sendable, Equatable, Codable {
    /// The refresh token to rotate.
    public var refreshToken: String

    /// Builds a body.
    ///
    /// ```swift
    /// let body = RefreshBody(refreshToken: token)
    /// ```
    public init(refreshToken: String) {
        self.refreshToken = refreshToken
    }

    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
}

/// The body of `POST /v1/auth/signout`; without a scope, `local`.
///
/// ```swift
/// let body = SignOutBody(scope: .others)
/// ```
public struct SignOutBody: Sendable, Equatable, Codable {
    /// Which sessions end.
    public var scope: SignOutScope?

    /// Builds a body.
    ///
    /// ```swift
    /// let body = SignOutBody(scope: .global)
    /// ```
    public init(scope: SignOutScope? = nil) {
        self.scope = scope
    }
}

/// The body of `PATCH /v1/users/me`: a member left out is left as it is; `display_name: null` clears the name.
///
/// ```swift
/// let rename = ProfileUpdate(displayName: "Ada")
/// let clear = ProfileUpdate(displayName: nil)
/// ```
public struct ProfileUpdate: Sendable, Equatable, Codable {
    /// The new name, or `nil` to clear it (when `changesDisplayName`).
    public var displayName: String?
    /// Whether the body names `display_name` at all.
    public var changesDisplayName: Bool

    /// Sets (or, with `nil`, clears) the display name.
    ///
    /// ```swift
    /// let body = ProfileUpdate(displayName: "Ada")
    /// ```
    public init(displayName: String?) {
        self.displayName = displayName
        changesDisplayName = true
    }

    /// Changes nothing.
    ///
    /// ```swift
    /// let body = ProfileUpdate.unchanged
    /// ```
    public static let unchanged = ProfileUpdate(displayName: nil, changesDisplayName: false)

    private init(displayName: String?, changesDisplayName: Bool) {
        self.displayName = displayName
        self.changesDisplayName = changesDisplayName
    }

    enum CodingKeys: String, CodingKey { case displayName = "display_name" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        changesDisplayName = container.contains(.displayName)
        displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
    }

    /// Writes `display_name` (as `null` to clear it) only when it changes.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if changesDisplayName { try container.encode(displayName, forKey: .displayName) }
    }
}

/// The body of `PUT /v1/data/{collection}/{id}`.
///
/// ```swift
/// let body = DataRecordBody(data: Note(text: "Milk"))
/// ```
public struct DataRecordBody<Value: Codable & Sendable>: Sendable, Codable {
    /// The app's value, any JSON up to 256 KiB.
    public var data: Value

    /// Wraps a value.
    ///
    /// ```swift
    /// let body = DataRecordBody(data: ["done": true])
    /// ```
    public init(data: Value) {
        self.data = data
    }
}
