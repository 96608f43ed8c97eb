import Crypto
import Foundation
import LanyardSupport
import Synchronization

/// Apple's side of the account lifecycle, played by the emulator: authorization codes (single use, five minutes),
/// the refresh tokens they are redeemed for, and the revocations received (with a switch that makes the next ones
/// fail, for tests of retries). Codes carry their client, subject and expiry under an HMAC keyed by the emulator's
/// Apple key, so `lanyard emulator mint --authorization-code` makes them offline, like its ID tokens.
public final class AppleAccountEmulator: Sendable {
    /// `jti` makes each code unique, also two for one person within a second.
    struct Code: Codable { let aud: String; let sub: String; let exp: Int64; let jti: String }
    struct State {
        var used: Set<String> = []
        var issued: Set<String> = []
        var revoked: [String] = []
        var failingRevocations = 0
    }

    private let state = Mutex(State())
    private let keys: EmulatorKeys
    private let random: any RandomSource
    private let clock: any LanyardClock

    public init(keys: EmulatorKeys, random: any RandomSource = SystemRandomSource(), clock: any LanyardClock) {
        self.keys = keys
        self.random = random
        self.clock = clock
    }

    /// A code as Apple returns it beside an identity token, valid five minutes from `now`.
    public static func mintCode(keys: EmulatorKeys, clientID: String, subject: String, now: Date,
                                random: any RandomSource = SystemRandomSource()) -> String {
        let code = Code(aud: clientID, sub: subject, exp: now.unixSeconds + 300, jti: random.hexString(byteCount: 12))
        let payload = Base64URL.encode((try? JSONEncoder().encode(code)) ?? Data())
        return "c." + payload + "." + mac(payload, keys: keys)
    }

    public func mintCode(clientID: String, subject: String) -> String {
        Self.mintCode(keys: keys, clientID: clientID, subject: subject, now: clock.now(), random: random)
    }

    /// Redeems a code for a new refresh token; nil when the code is forged, used, expired or another client's.
    public func redeem(code: String, clientID: String) -> String? {
        let parts = code.split(separator: ".").map(String.init)
        guard parts.count == 3, parts[0] == "c", Self.mac(parts[1], keys: keys) == parts[2],
              let bytes = Base64URL.decode(parts[1]), let issued = try? JSONDecoder().decode(Code.self, from: Data(bytes)),
              issued.aud == clientID, issued.exp > clock.now().unixSeconds else { return nil }
        guard state.withLock({ $0.used.insert(code).inserted }) else { return nil }
        return issueRefreshToken()
    }

    /// A new refresh token, as Apple gives for a redeemed code (the web flow's codes are the authorization
    /// emulator's; their refresh tokens are Apple's, revocable here).
    public func issueRefreshToken() -> String {
        let token = "r" + random.hexString(byteCount: 24)
        state.withLock { _ = $0.issued.insert(token) }
        return token
    }

    private static func mac(_ payload: String, keys: EmulatorKeys) -> String {
        let key = SymmetricKey(data: SHA256.hash(data: Data(keys.apple.privateKey.pemRepresentation.utf8)))
        return Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(payload.utf8), using: key)))
    }

    /// Records a revocation; false while told to fail.
    public func revoke(token: String) -> Bool {
        state.withLock { state in
            if state.failingRevocations > 0 {
                state.failingRevocations -= 1
                return false
            }
            state.revoked.append(token)
            return true
        }
    }

    public var revoked: [String] { state.withLock { $0.revoked } }
    public var issued: Set<String> { state.withLock { $0.issued } }

    /// The next `count` revocations fail (as Apple being unreachable would).
    public func failNextRevocations(_ count: Int) { state.withLock { $0.failingRevocations = count } }
}
