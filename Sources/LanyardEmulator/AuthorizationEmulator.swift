import Crypto
import Foundation
import LanyardSupport
import Synchronization

/// Providers' authorization pages and token endpoints, played by the emulator in dev mode (reference section 23):
/// a person picked on the page becomes an authorization code (single use, five minutes, bound to its client and
/// redirect URI, carrying the nonce and the claims to mint), which the provider's token endpoint redeems for an ID
/// token signed like the real provider's. Lanyard's redirect sign-in thus runs its production path end to end.
public final class AuthorizationEmulator: Sendable {
    /// What a code stands for.
    public struct Grant: Codable, Sendable {
        /// `apple`, `google`, or `oidc:NAME`.
        public var provider: String
        public var clientID: String
        public var redirectURI: String
        public var claims: MintRequest
        var exp: Int64
        var jti: String
    }

    private struct State {
        var used: Set<String> = []
        var failingRedemptions = 0
    }

    private let state = Mutex(State())
    private let key: SymmetricKey
    private let random: any RandomSource
    private let clock: any LanyardClock

    public init(keys: EmulatorKeys, random: any RandomSource = SystemRandomSource(), clock: any LanyardClock) {
        key = SymmetricKey(data: SHA256.hash(data: Data(("authorize\n" + keys.google.privateKey.pemRepresentation).utf8)))
        self.random = random
        self.clock = clock
    }

    /// The code for a person picked on the provider's page.
    public func code(provider: String, clientID: String, redirectURI: String, claims: MintRequest) -> String {
        let grant = Grant(provider: provider, clientID: clientID, redirectURI: redirectURI, claims: claims,
                          exp: clock.now().unixSeconds + 300, jti: random.hexString(byteCount: 12))
        let payload = Base64URL.encode((try? JSONEncoder().encode(grant)) ?? Data())
        return "a." + payload + "." + mac(payload)
    }

    /// The web clients' secret in dev mode (Google's and the OpenID Connect providers'; Apple's is a signed JWT).
    public static let devClientSecret = "lanyard-emulator-secret"

    /// Whether `code` is one of this emulator's authorization codes (Apple's token endpoint also takes the codes of
    /// native sign-in).
    public static func isAuthorizationCode(_ code: String) -> Bool { code.hasPrefix("a.") }

    /// Why a redemption is refused, as the provider's token endpoint says it.
    public enum Refusal: Error, Equatable {
        /// The code is forged, used, expired, or another client's or redirect URI's.
        case invalidGrant
        /// Told to fail (tests of a provider whose token endpoint is down).
        case unavailable
    }

    /// Redeems a code, once: the grant it stands for.
    public func redeem(_ code: String, provider: String, clientID: String, redirectURI: String) throws(Refusal) -> Grant {
        let parts = code.split(separator: ".").map(String.init)
        guard parts.count == 3, parts[0] == "a", mac(parts[1]) == parts[2], let bytes = Base64URL.decode(parts[1]),
              let grant = try? JSONDecoder().decode(Grant.self, from: Data(bytes)) else { throw .invalidGrant }
        let failing = state.withLock { state in
            if state.failingRedemptions > 0 {
                state.failingRedemptions -= 1
                return true
            }
            return false
        }
        if failing { throw .unavailable }
        guard grant.provider == provider, grant.clientID == clientID, grant.redirectURI == redirectURI,
              grant.exp > clock.now().unixSeconds else { throw .invalidGrant }
        guard state.withLock({ $0.used.insert(code).inserted }) else { throw .invalidGrant }
        return grant
    }

    /// The next `count` redemptions answer as an unreachable token endpoint would (503).
    public func failNextRedemptions(_ count: Int) {
        state.withLock { $0.failingRedemptions = count }
    }

    private func mac(_ payload: String) -> String {
        Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(payload.utf8), using: key)))
    }
}
