import Foundation
import Synchronization

/// Access tokens whose signature was already checked, keyed by the SHA-256 of the token, each kept only until
/// the token expires. Only the signature work is saved: the session is still looked up on every request, so
/// revocation takes effect at once. Bounded: when full, expired entries go, and if none had, everything does.
final class VerifiedTokenCache: Sendable {
    static let capacity = 50_000

    private let entries = Mutex<[[UInt8]: AccessTokenClaims]>([:])

    func claims(for key: [UInt8], now: Int64) -> AccessTokenClaims? {
        entries.withLock { entries in
            guard let claims = entries[key] else { return nil }
            guard claims.exp > now else {
                entries[key] = nil
                return nil
            }
            return claims
        }
    }

    func insert(_ claims: AccessTokenClaims, for key: [UInt8], now: Int64) {
        entries.withLock { entries in
            if entries.count >= Self.capacity {
                entries = entries.filter { $0.value.exp > now }
                if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = claims
        }
    }
}
