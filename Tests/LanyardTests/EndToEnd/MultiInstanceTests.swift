import Foundation
import LanyardSupport
import Testing

/// Two Lanyard instances (each its own runtime, pool and caches) on one database, requests sent to both
/// (reference section 8). On PostgreSQL when configured, which is what several instances run on; on one SQLite file
/// otherwise.
@Suite struct MultiInstanceTests {
    /// Two instances on one fresh database with one clock; stopped after `body`.
    static func withTwoInstances(_ configure: @escaping (inout LanyardConfiguration) -> Void = { _ in },
                                 _ body: (TestServer, TestServer) async throws -> Void) async throws {
        let database = TestDatabase.available.last!
        let (url, cleanup) = try await database.makeFresh()
        let clock = ManualClock(Date())
        // Every instance behind one load balancer has the same issuer (LANYARD_ISSUER).
        let configure: (inout LanyardConfiguration) -> Void = {
            $0.issuer = "https://auth.example.test"
            configure(&$0)
        }
        var running: [RunningServer] = []
        do {
            for _ in 0..<2 {
                running.append(try await RunningServer.startOnFreePort(databaseURL: url, clock: clock, configure: configure))
            }
            try await body(TestServer(running[0], clock: clock), TestServer(running[1], clock: clock))
        } catch {
            for instance in running { await instance.stop() }
            await cleanup()
            throw error
        }
        for instance in running { await instance.stop() }
        await cleanup()
    }

    static func kid(_ token: String) -> String? {
        guard let header = token.split(separator: ".").first, let bytes = Base64URL.decode(header) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?["kid"] as? String
    }

    static func publishedKIDs(_ server: TestServer) async throws -> Set<String> {
        Set((try await server.get("/.well-known/jwks.json").json["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String })
    }

    @Test func aRotationIsPublishedEverywhereAtOnceAndSignsEverywhereAfterThePublishDelay() async throws {
        try await Self.withTwoInstances({ $0.keyPublishDelay = 30 }) { a, b in
            let oldA = try await a.signIn(.apple, sub: "ada"), oldB = try await b.signIn(.apple, sub: "ada")
            let old = try #require(Self.kid(oldA.accessToken))
            #expect(Self.kid(oldB.accessToken) == old)

            let (new, signsFrom) = try await a.runtime.keyRing.rotate(publishDelay: 30)
            #expect(signsFrom == a.clock.now().addingTimeInterval(30))
            // Published by both at once (the other instance reads the keys again for a JWKS older than a second)…
            #expect(try await eventually { try await Self.publishedKIDs(b) == [old, new] })
            #expect(try await Self.publishedKIDs(a) == [old, new])
            // …but nobody signs with it before the delay has passed.
            #expect(Self.kid(try await b.signIn(.google, sub: "g").accessToken) == old)
            #expect(Self.kid(try await a.signIn(.google, sub: "g").accessToken) == old)

            a.clock.advance(by: 31)
            #expect(Self.kid(try await a.signIn(.apple, sub: "ada").accessToken) == new)
            #expect(Self.kid(try await b.signIn(.apple, sub: "ada").accessToken) == new)
            // Tokens of the old key verify everywhere until they expire…
            let check = try await b.get("/v1/users/me", bearer: oldA.accessToken)
            #expect(check.status == 200, "\(check.text)")
            #expect(try await a.get("/v1/users/me", bearer: oldB.accessToken).status == 200)
            // …and then the key leaves every JWKS.
            a.clock.advance(by: 900 + 61)
            #expect(try await eventually { try await Self.publishedKIDs(a) == [new] })
            #expect(try await eventually { try await Self.publishedKIDs(b) == [new] })
        }
    }

    @Test func anInstanceLearnsOfARotationByItselfBeforeTheKeySigns() async throws {
        try await Self.withTwoInstances({ $0.keyPublishDelay = 5 }) { a, b in
            let old = try #require(Self.kid(try await b.signIn(.apple, sub: "ada").accessToken))
            let (new, _) = try await a.runtime.keyRing.rotate(publishDelay: 5)
            // No JWKS request on b: its refresher (every second for a 5 s delay) reads the rotation.
            #expect(try await eventually { b.runtime.keyRing.jwks.keys.contains { $0.kid == new } })
            b.clock.advance(by: 6)
            let token = try await b.signIn(.apple, sub: "ada").accessToken
            #expect(Self.kid(token) == new)
            #expect(Self.kid(token) != old)
        }
    }

    @Test func refreshGraceReuseSignOutsAndLinksHoldAcrossInstances() async throws {
        try await Self.withTwoInstances { a, b in
            // The same refresh token at both at once: one successor, both answered.
            let session = try await a.signIn(.google, sub: "g")
            async let fromA = a.refresh(session.refreshToken)
            async let fromB = b.refresh(session.refreshToken)
            let (answerA, answerB) = try await (fromA, fromB)
            #expect(answerA.status == 200 && answerB.status == 200)
            #expect(answerA.json["refresh_token"] as? String == answerB.json["refresh_token"] as? String)
            // After the grace window, reuse at the other instance revokes the session for both.
            a.clock.advance(by: 11)
            #expect(try await b.refresh(session.refreshToken).errorCode == "REFRESH_TOKEN_REUSED")
            #expect(try await a.refresh(answerA.json["refresh_token"] as? String ?? "").errorCode == "INVALID_REFRESH_TOKEN")

            // Signed out at one, refused at the other.
            let other = try await a.signIn(.apple, sub: "ada")
            let out = try await b.post("/v1/auth/signout", ["scope": "global"], bearer: other.accessToken)
            #expect(out.status == 204, "\(out.text)")
            #expect(try await a.get("/v1/users/me", bearer: other.accessToken).status == 401)

            // One identity linked to two accounts at once through both: one wins, the other conflicts.
            let first = try await a.signIn(.apple, sub: "one"), second = try await b.signIn(.apple, sub: "two")
            let token = try a.idToken(.google, sub: "contested")
            async let linkA = a.post("/v1/auth/link/google", ["id_token": token], bearer: first.accessToken)
            async let linkB = b.post("/v1/auth/link/google", ["id_token": token], bearer: second.accessToken)
            let statuses = try await [linkA.status, linkB.status].sorted()
            #expect(statuses == [200, 409])
        }
    }

    @Test func rateLimitsCountAcrossInstances() async throws {
        try await Self.withTwoInstances({
            $0.rateLimits.enabled = true
            $0.rateLimits.anonymous = .init(limit: 3, window: 3600)
        }) { a, b in
            var statuses: [Int] = []
            for server in [a, b, a, b] { statuses.append(try await server.post("/v1/auth/anonymous").status) }
            #expect(statuses == [200, 200, 200, 429])
        }
    }
}
