import Foundation

/// What the provider's SDK gave the app, for `link(_:)` and `reauthenticate(_:)`.
///
/// ```swift
/// try await client.link(.google(idToken: googleUser.idToken!.tokenString))
/// try await client.reauthenticate(.apple(idToken: token, rawNonce: nonce.raw))
/// ```
public struct ProviderCredential: Sendable, Equatable {
    /// Which provider issued the token.
    public var provider: Provider
    /// The provider's ID token (a JWT).
    public var idToken: String
    /// The raw nonce the app generated, if any (Lanyard accepts it raw or as Apple's SHA-256 hex).
    public var nonce: String?
    /// Apple's single-use authorization code, when the app has one; sent so that a server that redeems codes
    /// can revoke the Apple tokens when the account is deleted.
    public var authorizationCode: String?

    /// A credential of any provider the server offers, such as an OpenID Connect provider's ID token.
    ///
    /// ```swift
    /// try await client.link(ProviderCredential(provider: .microsoft, idToken: result.idToken, nonce: nonce))
    /// ```
    public init(provider: Provider, idToken: String, nonce: String? = nil) {
        self.init(provider: provider, idToken: idToken, nonce: nonce, authorizationCode: nil)
    }

    init(provider: Provider, idToken: String, nonce: String?, authorizationCode: String?) {
        self.provider = provider
        self.idToken = idToken
        self.nonce = nonce
        self.authorizationCode = authorizationCode
    }

    /// An Apple credential from `ASAuthorizationAppleIDCredential`.
    ///
    /// ```swift
    /// let credential = ProviderCredential.apple(
    ///     idToken: String(decoding: appleCredential.identityToken!, as: UTF8.self), rawNonce: nonce.raw)
    /// ```
    public static func apple(idToken: String, rawNonce: String? = nil, authorizationCode: String? = nil)
        -> ProviderCredential {
        ProviderCredential(provider: .apple, idToken: idToken, nonce: rawNonce, authorizationCode: authorizationCode)
    }

    /// A Google credential from Google Sign-In.
    ///
    /// ```swift
    /// let credential = ProviderCredential.google(idToken: result.user.idToken!.tokenString)
    /// ```
    public static func google(idToken: String, nonce: String? = nil) -> ProviderCredential {
        ProviderCredential(provider: .google, idToken: idToken, nonce: nonce, authorizationCode: nil)
    }
}
