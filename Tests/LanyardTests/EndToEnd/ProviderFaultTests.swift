import Foundation
import LanyardEmulator
import LanyardSupport
import Testing

/// Apple's key endpoint down, slow or answering garbage (reference section 8), with a real key server the test
/// breaks, and sign-in verified through the production path.
@Suite struct ProviderFaultTests {
    static func configure(_ fake: FakeKeyServer) -> (inout LanyardConfiguration) -> Void {
        { configuration in
            configuration.devMode = false
            configuration.appleClientIDs = [EmulatedProvider.apple.defaultClientID]
            configuration.appleJWKSURL = fake.url
            // The test servers' fetch timeout (10 s) stays: a fetch the endpoint answers never times out on a busy
            // machine, and a hanging one is given up all the same (how fast is timed below, on a server of its own).
        }
    }

    static func timedSignIn(_ server: TestServer, sub: String) async throws -> (TestResponse, Duration) {
        let start = ContinuousClock.now
        let answer = try await server.post("/v1/auth/signin/apple", ["id_token": try server.idToken(.apple, sub: sub)])
        return (answer, ContinuousClock.now - start)
    }

    @Test func cachedKeysKeepSignInWorkingWhileTheEndpointHangsOrAnswersGarbage() async throws {
        let fake = try await FakeKeyServer(keys: TestServer.sharedKeys)
        try await TestServer.with(.sqlite, configure: Self.configure(fake)) { server async throws in
            #expect(try await Self.timedSignIn(server, sub: "a").0.status == 200)
            for mode in [FakeKeyServer.Mode.hanging, .garbage, .failing] {
                fake.set(mode)
                server.clock.advance(by: 31)  // past the keys' max-age and the stale-refetch interval
                // (That the answer does not wait for the refetch is shown without timing, in
                // `JWKSCacheTests.aStaleKeyIsAnsweredWithoutWaitingForItsRefetch`.)
                #expect(try await Self.timedSignIn(server, sub: "a").0.status == 200, "\(mode)")
            }
            // The endpoint was asked again in the background (a hanging fetch is still one until its timeout).
            #expect(fake.fetchCount >= 2)
        }
        await fake.stop()
    }

    /// Keys come only from where they were configured (reference section 25): a redirect to another host is not
    /// followed (nothing reaches it; sign-in is a 503 saying so on the Providers page), one on the same host is.
    @Test func keyFetchesFollowRedirectsOnlyOnTheirOwnSchemeAndHost() async throws {
        let fake = try await FakeKeyServer(keys: TestServer.sharedKeys)
        let elsewhere = try await FakeKeyServer(keys: TestServer.sharedKeys)
        let base = String(fake.url.dropLast("/auth/keys".count))
        fake.set(.redirecting(to: elsewhere.url))
        try await TestServer.with(.sqlite, configure: {
            Self.configure(fake)(&$0)
            $0.adminKey = "provider-fault-admin-key"
        }) { server async throws in
            let refused = try await Self.timedSignIn(server, sub: "a").0
            #expect(refused.status == 503 && refused.errorCode == "PROVIDER_UNAVAILABLE", "\(refused.text)")
            #expect(elsewhere.fetchCount == 0, "the redirect to another host was not followed")
            let providers = try await server.request(.GET, "/v1/admin/providers", bearer: "provider-fault-admin-key")
            let apple = try #require((providers.json["providers"] as? [[String: Any]])?.first)
            let message = (apple["last_error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("redirects elsewhere"), "\(message)")

            fake.set(.redirecting(to: base + "/auth/keys-moved"))
            server.clock.advance(by: 6)  // past the wait after a failed fetch
            #expect(try await Self.timedSignIn(server, sub: "a").0.status == 200)
            #expect(elsewhere.fetchCount == 0)
        }
        await fake.stop()
        await elsewhere.stop()
    }

    /// The statuses and the recovery, on the test's clock; how fast the 503 comes is timed below, against a server
    /// of its own.
    @Test func withoutUsableKeysSignInIs503AndRecoversWithoutARestart() async throws {
        let fake = try await FakeKeyServer(keys: TestServer.sharedKeys)
        fake.set(.hanging)
        try await TestServer.with(.sqlite, configure: Self.configure(fake)) { server in
            let (hung, _) = try await Self.timedSignIn(server, sub: "a")
            #expect(hung.status == 503)
            #expect(hung.errorCode == "PROVIDER_UNAVAILABLE")
            // Until the next attempt, refused without asking the endpoint again.
            let fetches = fake.fetchCount
            #expect(try await Self.timedSignIn(server, sub: "a").0.errorCode == "PROVIDER_UNAVAILABLE")
            #expect(fake.fetchCount == fetches)

            fake.set(.garbage)
            server.clock.advance(by: 6)
            #expect(try await Self.timedSignIn(server, sub: "a").0.errorCode == "PROVIDER_UNAVAILABLE")

            fake.set(.serving)
            server.clock.advance(by: 6)
            #expect(try await Self.timedSignIn(server, sub: "a").0.status == 200)
            let metrics = try await server.get("/metrics").text
            #expect(metrics.contains(#"lanyard_unavailable_responses_total{cause="provider"} 3"#))
        }
        await fake.stop()
    }

    /// `lanyard serve` as an operator runs it, its own process (so the suite's other tests, which share this
    /// process's threads, cannot delay its answers): a hanging key endpoint is a 503 within 5 s, the next sign-in
    /// is refused at once, and sign-in works again when the endpoint does, without a restart.
    @Test func aHangingKeyEndpointIsA503Within5SecondsForAServerOfItsOwn() async throws {
        let fake = try await FakeKeyServer(keys: TestServer.sharedKeys)
        fake.set(.hanging)
        let (url, cleanup) = try await TestDatabase.sqlite.makeFresh()
        defer { Task { await cleanup() } }
        let server = try await ServerProcess.start(databaseURL: url, environment: [
            "LANYARD_DEV": "0",
            "LANYARD_APPLE_CLIENT_IDS": EmulatedProvider.apple.defaultClientID,
            "LANYARD_APPLE_JWKS_URL": fake.url,
        ])
        defer { server.stop() }
        func timedSignIn() async throws -> (TestResponse, Duration) {
            let start = ContinuousClock.now
            let answer = try await server.signIn(apple: "a")
            return (answer, ContinuousClock.now - start)
        }

        let (hung, took) = try await timedSignIn()
        #expect(hung.errorCode == "PROVIDER_UNAVAILABLE")
        #expect(took < .seconds(20), "a sign-in hung: \(took)")
        let (again, _) = try await timedSignIn()
        #expect(again.errorCode == "PROVIDER_UNAVAILABLE")
        // At once: the second sign-in does not wait on the endpoint again (the failed fetch is remembered for 5 s
        // from its failure). Counted at the endpoint, not timed (a starved machine can delay any answer): once the
        // first fetch has reached it, one fetch in all served both sign-ins.
        _ = try await eventually(within: 10) { fake.fetchCount >= 1 }
        #expect(fake.fetchCount == 1, "the second sign-in fetched the keys again")
        let metrics = try await server.request(.GET, "/metrics").text
        let signIns = #"lanyard_http_request_duration_seconds_bucket{method="POST",route="/v1/auth/signin/{provider}","#
        #expect(MetricsText.value(in: metrics, signIns + #"le="+Inf"}"#) == 2)
        #expect(MetricsText.allAnswered(in: metrics, method: "POST", route: "/v1/auth/signin/{provider}", within: "5.0"))

        // Recovery: the next fetch after the remembered failure (5 s) serves. The bound is generous: the fake
        // endpoint answers from this process, whose threads the suite's other tests share, and an answer it is too
        // starved to give within the fetch's 2 s is a failed fetch, remembered for 5 s more.
        fake.set(.serving)
        let back = ContinuousClock.now
        var last = again
        while last.status != 200, ContinuousClock.now - back < .seconds(90) {
            last = try await timedSignIn().0
            if last.status != 200 { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(last.status == 200, "still \(last.status) \(last.text) after \(fake.fetchCount) fetches; \(server.logText.suffix(2000))")
        await fake.stop()
    }
}
