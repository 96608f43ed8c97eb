import Foundation
#if canImport(CryptoKit)
import CryptoKit
#endif

/// A nonce for Sign in with Apple: give `hashed` to `ASAuthorizationAppleIDRequest.nonce`, and `raw` to
/// `signInWithApple(idToken:rawNonce:)`. Lanyard checks that the token carries the hash of the raw value, so a
/// token stolen from another sign-in cannot be replayed.
///
/// ```swift
/// let nonce = AppleNonce()
/// let request = ASAuthorizationAppleIDProvider().createRequest()
/// request.requestedScopes = [.fullName, .email]
/// request.nonce = nonce.hashed
/// // … after the authorization succeeds:
/// try await client.signInWithApple(idToken: idToken, rawNonce: nonce.raw, fullName: credential.fullName)
/// ```
public struct AppleNonce: Sendable, Equatable {
    /// The random value the app keeps and sends to Lanyard.
    public let raw: String

    /// A new random nonce of `length` characters (32 by default) from the system's secure generator.
    ///
    /// ```swift
    /// let nonce = AppleNonce()
    /// ```
    public init(length: Int = 32) {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-._")
        var generator = SystemRandomNumberGenerator()
        raw = String((0..<max(length, 16)).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }

    /// A nonce from a raw value the app already has.
    ///
    /// ```swift
    /// let nonce = AppleNonce(raw: savedNonce)
    /// ```
    public init(raw: String) {
        self.raw = raw
    }

    /// The lower-case hex SHA-256 of `raw`: what Apple's request takes and its token carries.
    ///
    /// ```swift
    /// request.nonce = nonce.hashed
    /// ```
    public var hashed: String {
        #if canImport(CryptoKit)
        SHA256.hash(data: Data(raw.utf8)).map { String(format: "%02x", $0) }.joined()
        #else
        SHA256Digest.hex(of: Array(raw.utf8))
        #endif
    }
}
