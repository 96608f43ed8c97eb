import Foundation
import LanyardSupport
import Testing

/// Two `lanyard serve` processes on one PostgreSQL, as behind a load balancer, with requests sent to both and a
/// key rotation made by `lanyard keys rotate` from a third process (reference section 8). `MultiInstanceTests` holds
/// the same rules with a clock the test moves; here the clock is the machine's.
@Suite struct InstanceProcessTests {
    static let environment = [
        "LANYARD_ISSUER": "https://auth.example.test",
        "LANYARD_KEY_PUBLISH_DELAY": "6",
        "LANYARD_REFRESH_REUSE_GRACE": "1",
        // Guests limited to three per address, counted in the database; the rest never in the way.
        "LANYARD_RATE_LIMITS": "on",
        "LANYARD_RATE_LIMIT_ANONYMOUS": "3/3600",
        "LANYARD_RATE_LIMIT_SIGNIN": "10000/60",
        "LANYARD_RATE_LIMIT_LINK": "10000/60",
    ]

    @Test(.requiresPostgres) func twoProcessesOnOnePostgresAgreeOnKeysRefreshesSignOutsLinksAndRateLimits() async throws {
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        let a = try await ServerProcess.start(databaseURL: url, environment: Self.environment)
        defer { a.stop() }
        let b = try await ServerProcess.start(databaseURL: url, environment: Self.environment)
        defer { b.stop() }

        // The same refresh token at both at once: one successor, both answered; reuse after the grace revokes.
        let session = try Session(try await a.signIn(apple: "ada"))
        async let fromA = a.request(.POST, "/v1/auth/refresh", json: ["refresh_token": session.refreshToken])
        async let fromB = b.request(.POST, "/v1/auth/refresh", json: ["refresh_token": session.refreshToken])
        let (answerA, answerB) = try await (fromA, fromB)
        #expect(answerA.status == 200 && answerB.status == 200, "\(answerA.text) \(answerB.text)")
        let successor = answerA.json["refresh_token"] as? String
        #expect(successor == answerB.json["refresh_token"] as? String)
        try await Task.sleep(for: .seconds(1.5))
        #expect(try await b.request(.POST, "/v1/auth/refresh", json: ["refresh_token": session.refreshToken]).errorCode
                == "REFRESH_TOKEN_REUSED")
        #expect(try await a.request(.POST, "/v1/auth/refresh", json: ["refresh_token": successor ?? ""]).errorCode
                == "INVALID_REFRESH_TOKEN")

        // Signed out at one, refused at the other.
        let grace = try Session(try await b.signIn(apple: "grace"))
        #expect(try await a.request(.POST, "/v1/auth/signout", json: ["scope": "global"], bearer: grace.accessToken).status == 204)
        #expect(try await b.request(.GET, "/v1/users/me", bearer: grace.accessToken).status == 401)

        // One Google account linked to two accounts at once, through both: one wins, the other conflicts.
        let first = try Session(try await a.signIn(apple: "one")), second = try Session(try await b.signIn(apple: "two"))
        let google = try ServerProcess.minter.mint(.google, .init(sub: "contested"))
        async let linkA = a.request(.POST, "/v1/auth/link/google", json: ["id_token": google], bearer: first.accessToken)
        async let linkB = b.request(.POST, "/v1/auth/link/google", json: ["id_token": google], bearer: second.accessToken)
        #expect(try await [linkA.status, linkB.status].sorted() == [200, 409])

        // Rate limits count across both.
        var statuses: [Int] = []
        for server in [a, b, a, b] { statuses.append(try await server.request(.POST, "/v1/auth/anonymous", json: [:]).status) }
        #expect(statuses == [200, 200, 200, 429])

        // A rotation by the command: published by both at once, signing on both after the delay.
        let before = try Session(try await a.signIn(apple: "ada"))
        let old = try #require(MultiInstanceTests.kid(before.accessToken))
        let rotate = try CommandTests.launch(["keys", "rotate"], environment: Self.environment.merging([
            "LANYARD_DATABASE_URL": url, "LANYARD_MASTER_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
        ]) { $1 })
        #expect(await CommandTests.waitForExit(rotate, seconds: 20))
        #expect(rotate.terminationStatus == 0)
        let rotatedAt = Date()
        var published = false
        // Published at once: each instance reads the keys again for a JWKS request more than a second after its last.
        while !published, Date().timeIntervalSince(rotatedAt) < 30 {
            published = try await [a, b].asyncAllSatisfy { try await Self.publishedKIDs($0).count == 2 }
        }
        #expect(published, "both instances publish the new key")
        // Well before the delay (measured from after the command ended, so later than the rotation itself).
        if Date().timeIntervalSince(rotatedAt) < 2.5 {
            #expect(MultiInstanceTests.kid(try Session(try await b.signIn(apple: "ada")).accessToken) == old)
        }
        try await Task.sleep(for: .seconds(max(0, 6.5 - Date().timeIntervalSince(rotatedAt))))
        let fromEachAfter = [try Session(try await a.signIn(apple: "ada")), try Session(try await b.signIn(apple: "ada"))]
        let new = try #require(MultiInstanceTests.kid(fromEachAfter[0].accessToken))
        #expect(new != old)
        #expect(MultiInstanceTests.kid(fromEachAfter[1].accessToken) == new)
        // The token the old key signed still verifies at both.
        for server in [a, b] {
            #expect(try await server.request(.GET, "/v1/users/me", bearer: before.accessToken).status == 200)
        }
        a.stop()
        b.stop()
        await cleanup()
    }

    static func publishedKIDs(_ server: ServerProcess) async throws -> Set<String> {
        let keys = try await server.request(.GET, "/.well-known/jwks.json").json["keys"] as? [[String: Any]] ?? []
        return Set(keys.compactMap { $0["kid"] as? String })
    }
}

extension Array where Element: Sendable {
    func asyncAllSatisfy(_ predicate: (Element) async throws -> Bool) async rethrows -> Bool {
        for element in self where try await !predicate(element) { return false }
        return true
    }
}
