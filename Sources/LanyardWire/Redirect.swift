/// `POST /v1/auth/authorize/{provider}`: a redirect sign-in started by an app that holds a session (a guest, or an
/// account that links with `intent: "link"`); a browser navigation uses `GET` with the same members as a query.
///
/// ```swift
/// let body = AuthorizeRequest(redirectURI: "com.example.app:/callback", codeChallenge: pkce.challenge)
/// ```
public struct AuthorizeRequest: Sendable, Codable, Equatable {
    /// Exactly one of the server's `LANYARD_REDIRECT_URIS`.
    public var redirectURI: String
    /// The base64url SHA-256 of the `code_verifier` the app keeps.
    public var codeChallenge: String
    /// `S256`, the only one taken.
    public var codeChallengeMethod: String
    /// The app's own value, returned to it untouched.
    public var state: String?
    /// `signin` (default) or `link`.
    public var intent: String?

    public init(redirectURI: String, codeChallenge: String, codeChallengeMethod: String = "S256", state: String? = nil,
                intent: String? = nil) {
        (self.redirectURI, self.codeChallenge, self.codeChallengeMethod) = (redirectURI, codeChallenge, codeChallengeMethod)
        (self.state, self.intent) = (state, intent)
    }

    enum CodingKeys: String, CodingKey {
        case state, intent
        case redirectURI = "redirect_uri", codeChallenge = "code_challenge", codeChallengeMethod = "code_challenge_method"
    }
}

/// The answer to `POST /v1/auth/authorize/{provider}`: the provider's page to open in a browser.
///
/// ```swift
/// let page = try await client.authorizationURL(for: .apple, redirectURI: callback)
/// ```
public struct AuthorizeResponse: Sendable, Codable, Equatable {
    public var url: String

    public init(url: String) {
        self.url = url
    }
}

/// `POST /v1/auth/token`: the code the browser brought back, the verifier the app kept, and the redirect URI it
/// started with; answered with a session (or, for `intent: "link"`, the account's methods).
///
/// ```swift
/// let body = TokenRequest(code: code, codeVerifier: pkce.verifier, redirectURI: callback)
/// ```
public struct TokenRequest: Sendable, Codable, Equatable {
    /// `authorization_code`.
    public var grantType: String
    public var code: String
    public var codeVerifier: String
    public var redirectURI: String?

    public init(code: String, codeVerifier: String, redirectURI: String?, grantType: String = "authorization_code") {
        (self.grantType, self.code, self.codeVerifier, self.redirectURI) = (grantType, code, codeVerifier, redirectURI)
    }

    enum CodingKeys: String, CodingKey {
        case code
        case grantType = "grant_type", codeVerifier = "code_verifier", redirectURI = "redirect_uri"
    }
}
