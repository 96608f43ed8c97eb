import Foundation
#if canImport(CryptoKit)
import CryptoKit
#endif

/// A redirect sign-in started on this device and waiting for the browser to come back, kept in the client's
/// `SessionStore` under its `state` so that an app the system ended meanwhile still finishes it.
struct PendingRedirect: Codable, Sendable, Equatable {
    var provider: Provider
    /// The PKCE verifier: only its SHA-256 left the device.
    var verifier: String
    /// Sent again with the code, exactly as the flow was started with it.
    var redirectURI: String
    var intent: RedirectIntent
    var startedAt: Date

    /// Where the flows wait in the store, as one JSON object by state.
    static let storageKey = "redirect-flows"
    /// How long a started flow is worth keeping: the server's flow lives 10 minutes.
    static let lifetime: TimeInterval = 15 * 60

    enum CodingKeys: String, CodingKey {
        case provider, verifier, intent
        case redirectURI = "redirect_uri", startedAt = "started_at"
    }
}

/// What the browser brought back to the app's redirect URI: a code, or the provider's refusal, with the state.
struct RedirectAnswer: Sendable, Equatable {
    var state: String?
    var code: String?
    var error: String?
    var errorDescription: String?

    /// The answer in `url`'s query; nil when it carries neither a code nor an error.
    init?(_ url: URL) {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        (state, code, error, errorDescription) = (value("state"), value("code"), value("error"), value("error_description"))
        if code == nil && error == nil { return nil }
    }

    /// The error an OAuth `error` sent back to the app stands for (RFC 6749 4.1.2.1, as Lanyard's callback passes it
    /// on), mapped as the web and Kotlin SDKs map it.
    var refusal: LanyardError? {
        guard let error else { return nil }
        switch error {
        case "access_denied" where errorDescription?.isEmpty == false:
            // The provider's ID token was refused (another audience, another nonce): the description is the reason.
            return .invalidProviderToken(reason: errorDescription ?? "")
        case "access_denied", "user_cancelled_authorize":
            return .signInCancelled
        case "temporarily_unavailable", "server_error":
            return .providerUnavailable
        default:
            let message = errorDescription.flatMap { $0.isEmpty ? nil : $0 } ?? "The provider refused the sign-in (\(error))."
            return .invalidRequest(field: nil, message: message)
        }
    }
}

/// PKCE (RFC 7636) with S256, and the flow's state.
enum PKCE {
    /// `count` random bytes from the system's secure generator, base64url without padding: a verifier (32 bytes: 43
    /// characters) or a state.
    static func randomToken(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL(Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }))
    }

    /// The base64url SHA-256 of `verifier`: the `code_challenge` that leaves the device.
    static func challenge(for verifier: String) -> String {
        #if canImport(CryptoKit)
        base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
        #else
        base64URL(Data(SHA256Digest.digest(Array(verifier.utf8))))
        #endif
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
