import Foundation
import Testing
@testable import LanyardProviders
import LanyardSupport

/// A key server that answers from memory, counting fetches; the verifier code path is the production one.
final class CountingFetcher: JWKSFetching, @unchecked Sendable {
    private let lock = NSLock()
    private var _keys: JWKS
    private var _fetches = 0
    private var _failing = false
    let maxAge: TimeInterval?
    /// How long a fetch takes, so that callers can overlap one.
    let latency: Duration

    init(keys: JWKS, maxAge: TimeInterval? = 3600, latency: Duration = .zero) {
        self._keys = keys
        self.maxAge = maxAge
        self.latency = latency
    }

    var fetches: Int { lock.withLock { _fetches } }
    func setKeys(_ keys: JWKS) { lock.withLock { _keys = keys } }
    func setFailing(_ failing: Bool) { lock.withLock { _failing = failing } }

    func fetch(url: String) async throws -> FetchedJWKS {
        if latency > .zero { try await Task.sleep(for: latency) }
        return try lock.withLock {
            _fetches += 1
            if _failing { throw TestFetchError() }
            return FetchedJWKS(keys: _keys, maxAge: maxAge)
        }
    }

    struct TestFetchError: Error {}
}

@Suite struct GenuineAppleTokenTests {
    struct Fixture: Decodable {
        let id_token: String
        let jwks: JWKS
        let verify_at_unix: Double
        let audience: String
    }

    static func fixture() throws -> Fixture {
        // Tests/Fixtures (docs/reference.md, "Tokens": the real-world check), found from this file's place.
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let url = tests.appendingPathComponent("Fixtures/apple-genuine-identity-token.json")
        return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    func verifier(_ fixture: Fixture, at unix: Double) -> IDTokenVerifier {
        let clock = ManualClock(Date(timeIntervalSince1970: unix))
        return IDTokenVerifier(keys: JWKSCache(fetcher: CountingFetcher(keys: fixture.jwks), clock: clock), clock: clock)
    }

    func settings(_ fixture: Fixture) -> ProviderSettings {
        ProviderSettings.apple(clientIDs: [fixture.audience])
    }

    @Test func theGenuineTokenVerifiesAtItsTime() async throws {
        let fixture = try Self.fixture()
        let identity = try await verifier(fixture, at: fixture.verify_at_unix).verify(
            fixture.id_token, settings: settings(fixture), nonce: nil)
        #expect(identity.subject == "001091.22c0ca594d4243c58edf3553540380b5.2045")
        #expect(identity.emailVerified)
        #expect(identity.isPrivateEmail)
        #expect(identity.email == "ecr9pbhimu@privaterelay.appleid.com")
    }

    @Test func theGenuineTokenIsExpiredToday() async throws {
        let fixture = try Self.fixture()
        await #expect(throws: ProviderTokenError(.expired)) {
            try await verifier(fixture, at: Date().timeIntervalSince1970).verify(
                fixture.id_token, settings: settings(fixture), nonce: nil)
        }
    }

    @Test func anyChangedByteIsRefused() async throws {
        let fixture = try Self.fixture()
        var refused = 0
        let bytes = Array(fixture.id_token.utf8)
        // Flip one character in the header, the payload and the signature.
        let positions = [10, bytes.count / 2, bytes.count - 10]
        for position in positions {
            var changed = bytes
            changed[position] = changed[position] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            do {
                _ = try await verifier(fixture, at: fixture.verify_at_unix).verify(
                    String(decoding: changed, as: UTF8.self), settings: settings(fixture), nonce: nil)
            } catch is ProviderTokenError {
                refused += 1
            }
        }
        #expect(refused == positions.count)
    }

    @Test func anotherAudienceIsRefused() async throws {
        let fixture = try Self.fixture()
        var other = settings(fixture)
        other.clientIDs = ["com.someone.else"]
        await #expect(throws: ProviderTokenError(.audience)) {
            try await verifier(fixture, at: fixture.verify_at_unix).verify(fixture.id_token, settings: other, nonce: nil)
        }
    }
}

@Suite struct JWKSCacheTests {
    let url = "https://keys.example/jwks"

    func keySet(_ kids: [String]) -> JWKS {
        JWKS(keys: kids.map { JWK(kty: "RSA", kid: $0, use: "sig", alg: "RS256", n: "AQAB", e: "AQAB") })
    }

    @Test func keysAreCachedForTheirMaxAge() async throws {
        let clock = ManualClock()
        let fetcher = CountingFetcher(keys: keySet(["a"]), maxAge: 600)
        let cache = JWKSCache(fetcher: fetcher, clock: clock)
        _ = try await cache.key(id: "a", url: url, provider: .apple)
        _ = try await cache.key(id: "a", url: url, provider: .apple)
        #expect(fetcher.fetches == 1)
        clock.advance(by: 601)
        // Past its max-age the cached key is answered at once and the key set is fetched again in the background.
        _ = try await cache.key(id: "a", url: url, provider: .apple)
        _ = try await eventually { fetcher.fetches >= 2 }
        #expect(fetcher.fetches == 2)
        _ = try await cache.key(id: "a", url: url, provider: .apple)
        #expect(fetcher.fetches == 2)
    }

    /// A stale key is answered while its refetch is still under way (however long the provider takes): the
    /// answer comes back with the second fetch blocked, not after it.
    @Test func aStaleKeyIsAnsweredWithoutWaitingForItsRefetch() async throws {
        let clock = ManualClock()
        let fetcher = GatedFetcher(keys: keySet(["a"]))
        let cache = JWKSCache(fetcher: fetcher, clock: clock)
        _ = try await cache.key(id: "a", url: url, provider: .apple)
        clock.advance(by: 3601)
        let key = try await cache.key(id: "a", url: url, provider: .apple)
        #expect(key.kid == "a")
        _ = try await eventually { fetcher.started >= 2 }
        #expect(fetcher.started == 2, "the refetch began in the background")
        #expect(fetcher.finished == 1, "and the answer did not wait for it")
        fetcher.release()
    }

    @Test func callersWaitingForKeysShareOneFetch() async throws {
        let fetcher = CountingFetcher(keys: keySet(["a"]), latency: .milliseconds(200))
        let cache = JWKSCache(fetcher: fetcher, clock: ManualClock())
        let kids = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<20 { group.addTask { try await cache.key(id: "a", url: url, provider: .google).kid } }
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(kids == Array(repeating: "a", count: 20))
        #expect(fetcher.fetches == 1)
    }

    @Test func anUnknownKidRefetchesAtMostOnceAMinute() async throws {
        let clock = ManualClock()
        let fetcher = CountingFetcher(keys: keySet(["a"]))
        let cache = JWKSCache(fetcher: fetcher, clock: clock)
        _ = try await cache.key(id: "a", url: url, provider: .apple)
        clock.advance(by: 61)
        for _ in 0..<5 {
            await #expect(throws: ProviderTokenError(.unknownKey)) {
                try await cache.key(id: "rotated", url: url, provider: .apple)
            }
        }
        #expect(fetcher.fetches == 2)
        fetcher.setKeys(keySet(["a", "rotated"]))
        clock.advance(by: 61)
        _ = try await cache.key(id: "rotated", url: url, provider: .apple)
        #expect(fetcher.fetches == 3)
    }

    @Test func staleKeysAreServedWhileTheProviderIsDown() async throws {
        let clock = ManualClock()
        let fetcher = CountingFetcher(keys: keySet(["a"]), maxAge: 60)
        let cache = JWKSCache(fetcher: fetcher, clock: clock)
        _ = try await cache.key(id: "a", url: url, provider: .apple)
        fetcher.setFailing(true)
        clock.advance(by: 3600)
        let key = try await cache.key(id: "a", url: url, provider: .apple)
        #expect(key.kid == "a")
    }

    @Test func noKeysAtAllIsUnavailable() async throws {
        let fetcher = CountingFetcher(keys: keySet([]))
        fetcher.setFailing(true)
        let cache = JWKSCache(fetcher: fetcher, clock: ManualClock())
        await #expect(throws: ProviderUnavailableError.self) {
            try await cache.key(id: "a", url: url, provider: .google)
        }
    }

    @Test func cacheControlMaxAgeIsRead() {
        #expect(HTTPJWKSFetcher.maxAge(fromCacheControl: "public, max-age=21005, must-revalidate") == 21005)
        #expect(HTTPJWKSFetcher.maxAge(fromCacheControl: "no-cache") == nil)
    }
}

/// The first fetch answers at once; later ones wait until `release()`.
final class GatedFetcher: JWKSFetching, @unchecked Sendable {
    private let lock = NSLock()
    private var _started = 0, _finished = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var released = false
    let keys: JWKS

    init(keys: JWKS) { self.keys = keys }

    var started: Int { lock.withLock { _started } }
    var finished: Int { lock.withLock { _finished } }

    func release() {
        let resumed = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            released = true
            defer { waiting = [] }
            return waiting
        }
        for continuation in resumed { continuation.resume() }
    }

    func fetch(url: String) async throws -> FetchedJWKS {
        let first = lock.withLock { _started += 1; return _started == 1 }
        if !first {
            await withCheckedContinuation { continuation in
                let resumeNow = lock.withLock { () -> Bool in
                    if released { return true }
                    waiting.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        lock.withLock { _finished += 1 }
        return FetchedJWKS(keys: keys, maxAge: 3600)
    }
}
