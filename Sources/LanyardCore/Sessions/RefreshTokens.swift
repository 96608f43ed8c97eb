import Crypto
import Foundation
import LanyardSupport

/// The rules of refresh tokens (reference section 4): 256 random bits, opaque, stored only as a SHA-256 hash;
/// each use rotates; a just-rotated token is answered again (same successor) only within the grace window.
///
/// A token is its session's id (16 bytes) followed by its 256 random bits, base64url: 64 characters. The id is
/// what finds the token's row (a selector, as in split tokens), the random bits are the secret. A token is
/// stored under its `storageKey`: the session's id, then the SHA-256 of the whole token, so a session's tokens
/// sit together in the table's order and a new session's land at its end (a key that is only a hash put every
/// token at a random place of the table, which a large database pays for on every sign-in and refresh). Tokens
/// issued before this layout (43 characters, the random bits alone) are still accepted, under their hash alone.
public enum RefreshTokens {
    /// What presenting a refresh token leads to.
    public enum Decision: Equatable, Sendable {
        /// First use: rotate to the successor.
        case rotate
        /// Used again within the grace window (a concurrent or retried refresh): answer with the same successor.
        case repeatWithinGrace
        /// Used again after the grace window: treat as stolen and revoke the session.
        case reuse
    }

    public static func decide(rotatedAt: Date?, now: Date, grace: TimeInterval) -> Decision {
        guard let rotatedAt else { return .rotate }
        return now.timeIntervalSince(rotatedAt) <= grace ? .repeatWithinGrace : .reuse
    }

    /// A new session's first token.
    public static func generate(session: String, _ random: any RandomSource) -> String {
        token(session: session, secret: random.bytes(32))
    }

    /// The token that replaces `token` in `session`: an HMAC under a server key, so it is as unguessable as a
    /// random one, yet the same every time `token` is presented — every concurrent refresh gets the same
    /// successor without the server ever storing a token.
    static func successor(of token: String, session: String, key: [UInt8]) -> String {
        self.token(session: session,
                   secret: Array(HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: SymmetricKey(data: key))))
    }

    /// The key `token` is stored and looked up under: `{session id}.{SHA-256 of the token, hex}`, or the hash
    /// alone for a token from before session ids were part of it. The hash covers the session's id too, so a
    /// token whose id was changed finds nothing.
    public static func storageKey(_ token: String) -> String {
        let hash = Hashing.sha256Hex(token)
        guard token.utf8.count == tokenLength, let raw = Base64URL.decode(token), raw.count == 48 else { return hash }
        return UUIDText.lowercase(Array(raw[0..<16])) + "." + hash
    }

    /// Tokens are 64 base64url characters (43 for those issued before session ids were part of them); anything
    /// else is refused without touching the database.
    public static func isWellFormed(_ token: String) -> Bool {
        switch token.utf8.count {
        case tokenLength: Base64URL.decode(token)?.count == 48
        case legacyTokenLength: Base64URL.decode(token)?.count == 32
        default: false
        }
    }

    static let tokenLength = 64
    static let legacyTokenLength = 43

    private static func token(session: String, secret: [UInt8]) -> String {
        guard let id = UUIDText.bytes(session) else { preconditionFailure("session ids are UUIDs") }
        return Base64URL.encode(id + secret)
    }
}
