import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct RefreshRotationRuleTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aFreshTokenRotates() {
        #expect(RefreshTokens.decide(rotatedAt: nil, now: now, grace: 10) == .rotate)
    }

    @Test func aJustRotatedTokenIsAnsweredAgainWithinTheGrace() {
        #expect(RefreshTokens.decide(rotatedAt: now.addingTimeInterval(-10), now: now, grace: 10) == .repeatWithinGrace)
    }

    @Test func aRotatedTokenAfterTheGraceIsReuse() {
        #expect(RefreshTokens.decide(rotatedAt: now.addingTimeInterval(-10.5), now: now, grace: 10) == .reuse)
    }

    let session = "019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5f"

    @Test func theSuccessorIsStableAndUnrelatedToTheToken() {
        let key = Array(repeating: UInt8(1), count: 32)
        let token = RefreshTokens.generate(session: session, SystemRandomSource())
        #expect(RefreshTokens.isWellFormed(token))
        let successor = RefreshTokens.successor(of: token, session: session, key: key)
        #expect(successor == RefreshTokens.successor(of: token, session: session, key: key))
        #expect(successor != token)
        #expect(RefreshTokens.isWellFormed(successor))
        #expect(RefreshTokens.successor(of: token, session: session, key: Array(repeating: 2, count: 32)) != successor)
    }

    /// A token is found by its session's id, then checked by its hash: a session's tokens sit together.
    @Test func aTokenIsStoredUnderItsSessionAndItsHash() throws {
        let token = RefreshTokens.generate(session: session, SystemRandomSource())
        #expect(token.utf8.count == 64)
        #expect(RefreshTokens.storageKey(token) == session + "." + Hashing.sha256Hex(token))
        let successor = RefreshTokens.successor(of: token, session: session, key: Array(repeating: 1, count: 32))
        #expect(RefreshTokens.storageKey(successor) == session + "." + Hashing.sha256Hex(successor))
        // Another session's id in front of the same secret is another key, which no stored token has.
        var raw = try #require(Base64URL.decode(token))
        raw[15] ^= 1
        let moved = Base64URL.encode(raw)
        #expect(RefreshTokens.isWellFormed(moved))
        #expect(RefreshTokens.storageKey(moved).hasPrefix("019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5e."))
        #expect(RefreshTokens.storageKey(moved).hasSuffix(Hashing.sha256Hex(moved)))
    }

    /// Tokens issued before session ids were part of them: the 256 random bits alone, under their hash alone.
    @Test func anEarlierTokenIsStoredUnderItsHashAlone() {
        let earlier = Base64URL.encode(SystemRandomSource().bytes(32))
        #expect(earlier.utf8.count == 43)
        #expect(RefreshTokens.isWellFormed(earlier))
        #expect(RefreshTokens.storageKey(earlier) == Hashing.sha256Hex(earlier))
    }

    @Test(arguments: ["", "short", String(repeating: "a", count: 44), String(repeating: "!", count: 43),
                      String(repeating: "a", count: 63), String(repeating: "a", count: 65),
                      String(repeating: "a", count: 63) + "=", String(repeating: "a", count: 63) + "!"])
    func malformedRefreshTokensAreRefusedUpFront(token: String) {
        #expect(!RefreshTokens.isWellFormed(token))
    }
}
