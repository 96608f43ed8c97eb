import Foundation
import LanyardEmulator
import LanyardSupport
import Testing

/// Apple's key endpoint down, slow or answering garbage (DESIGN section 8), with a real key server the test
/// breaks, and sign-in verified through the production path.
@Suite struct ProviderFaultTests {
    static func configure(_ fake: FakeKeyServer) -> (inout LanyardConfiguration) -> Void {
        { configuration in
            configuration.devMode = false
            configuration.appleClientIDs = [EmulatedProvider.apple.defaultClientID]
            configuration.appleJWKSURL = fake.url
            configuration.providerKeyFetchTimeout = LanyardConfiguration().providerKeyFetchTimeout
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

    @Test func withoutUsableKeysSignInIsAFast503AndRecoversWithoutARestart() async throws {
        let fake = try await FakeKeyServer(keys: TestServer.sharedKeys)
        fake.set(.hanging)
        try await TestServer.with(.sqlite, configure: Self.configure(fake)) { server in
            let (hung, took) = try await Self.timedSignIn(server, sub: "a")
            #expect(hung.status == 503)
            #expect(hung.errorCode == "PROVIDER_UNAVAILABLE")
            #expect(took < .seconds(5), "\(took)")
            // Until the next attempt, refused at once rather than after another timeout.
            let (again, quickly) = try await Self.timedSignIn(server, sub: "a")
            #expect(again.errorCode == "PROVIDER_UNAVAILABLE")
            #expect(quickly < .seconds(2), "\(quickly)")

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
}
