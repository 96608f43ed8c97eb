import Foundation
import LanyardSupport
import Synchronization

/// Apple's side of the account lifecycle, played by the emulator: authorization codes (single use, five minutes),
/// the refresh tokens they are redeemed for, and the revocations received (with a switch that makes the next ones
/// fail, for tests of retries).
public final class AppleAccountEmulator: Sendable {
    struct Code { let clientID: String; let subject: String; let expires: Date }
    struct State {
        var codes: [String: Code] = [:]
        var issued: Set<String> = []
        var revoked: [String] = []
        var failingRevocations = 0
    }

    private let state = Mutex(State())
    private let random: any RandomSource
    private let clock: any LanyardClock

    public init(random: any RandomSource = SystemRandomSource(), clock: any LanyardClock) {
        self.random = random
        self.clock = clock
    }

    /// A code as Apple returns it beside an identity token.
    public func mintCode(clientID: String, subject: String) -> String {
        let code = "c" + random.hexString(byteCount: 16)
        state.withLock { $0.codes[code] = Code(clientID: clientID, subject: subject, expires: clock.now() + 300) }
        return code
    }

    /// Redeems a code for a new refresh token; nil when the code is unknown, used, expired or another client's.
    public func redeem(code: String, clientID: String) -> String? {
        let now = clock.now()
        return state.withLock { state in
            guard let issued = state.codes.removeValue(forKey: code), issued.clientID == clientID, issued.expires > now
            else { return nil }
            let token = "r" + random.hexString(byteCount: 24)
            state.issued.insert(token)
            return token
        }
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
