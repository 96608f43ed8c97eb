import Crypto
import Foundation
import LanyardSupport

/// The rules of refresh tokens (DESIGN section 4): 256 random bits, opaque, stored only as a SHA-256 hash;
/// each use rotates; a just-rotated token is answered again (same successor) only within the grace window.
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

    public static func generate(_ random: any RandomSource) -> String {
        Base64URL.encode(random.bytes(32))
    }

    public static func hash(_ token: String) -> String {
        Hashing.sha256Hex(token)
    }

    /// The token that replaces `token`: an HMAC under a server key, so it is as unguessable as a random one,
    /// yet the same every time `token` is presented — every concurrent refresh gets the same successor
    /// without the server ever storing a token.
    static func successor(of token: String, key: [UInt8]) -> String {
        Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: SymmetricKey(data: key)))
    }

    /// Refresh tokens are 43 base64url characters; anything else is refused without touching the database.
    public static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && Base64URL.decode(token)?.count == 32
    }
}
