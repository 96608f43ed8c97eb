import Foundation
import LanyardBenchKit
import Testing

/// The benchmark's load generator against a real Lanyard server: it must count what the server answered,
/// keep to its bounds, and carry a scenario's state (a refresh chain) from one answer to the next request.
@Suite struct LoadGeneratorTests {
    private func generator(_ server: TestServer, concurrency: Int, count: Int, maxSeconds: Double = 30) throws -> LoadGenerator {
        let url = try #require(URLComponents(string: server.baseURL))
        return LoadGenerator(host: try #require(url.host), port: UInt16(try #require(url.port)), concurrency: concurrency,
                             count: count, maxSeconds: maxSeconds, serverPIDs: [getpid()])
    }

    @Test(arguments: TestDatabase.available)
    func everyAnswerIsCountedAndTimed(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var requests: [BenchRequest] = []
            for worker in 0..<4 {
                let session = try await server.signIn(.google, sub: "bench-me-\(worker)")
                requests.append(Target.lanyard.meRequest(sessionToken: session.accessToken))
            }
            let result = try await generator(server, concurrency: 4, count: 200)
                .run(RepeatedRequests(name: "me", perWorker: requests))
            #expect(result.sent == 200)
            #expect(result.ok == 200)
            #expect(result.errors == 0)
            #expect(result.requestsPerSecond > 0)
            #expect(result.p50Milliseconds > 0)
            #expect(result.p50Milliseconds <= result.p99Milliseconds)
            #expect(result.p99Milliseconds <= result.maxMilliseconds)
            #expect((result.serverPeakRSSMegabytes ?? 0) > 0)
            #expect((result.serverCPUMicrosecondsPerRequest ?? 0) > 0)
        }
    }

    @Test(arguments: TestDatabase.available)
    func refusedRequestsAreErrorsWithTheServersReason(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let stale = Target.lanyard.meRequest(sessionToken: "not-a-token")
            let result = try await generator(server, concurrency: 2, count: 50)
                .run(RepeatedRequests(name: "me", perWorker: [stale]))
            #expect(result.ok == 0)
            #expect(result.errors == 50)
            #expect(result.firstErrors.count == 3)
            #expect(result.firstErrors.first?.hasPrefix("401 ") == true)
            #expect(result.firstErrors.first?.contains("\"UNAUTHORIZED\"") == true)
        }
    }

    @Test(arguments: TestDatabase.available)
    func signInsWithPreMintedTokensAllSucceed(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let requests = try (0..<40).map { index in
                Target.lanyard.signInRequest(provider: "google", token: try server.idToken(.google, sub: "bench-new-\(index)"),
                                             audience: "")
            }
            let result = try await generator(server, concurrency: 8, count: 1_000)
                .run(FixedRequests(name: "signin_new", requests: requests))
            // The scenario runs out before the count: each pre-minted token is sent once.
            #expect(result.sent == 40)
            #expect(result.ok == 40)
            let again = try await server.signIn(.google, sub: "bench-new-39")
            #expect(!again.isNewUser)
        }
    }

    @Test(arguments: TestDatabase.available)
    func refreshChainsKeepEachRotatedToken(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var tokens: [String] = []
            for worker in 0..<3 {
                tokens.append(try await server.signIn(.apple, sub: "bench-refresh-\(worker)").refreshToken)
            }
            let chains = RefreshChains(tokens: tokens)
            let result = try await generator(server, concurrency: 3, count: 30).run(chains)
            #expect(result.ok == 30)
            #expect(result.errors == 0)
            // Each chain ends on a live token, ten rotations on from where it started.
            for (index, last) in chains.tokens.enumerated() {
                #expect(last != tokens[index])
                #expect(try await server.refresh(last).status == 200)
            }
        }
    }

    @Test func aPhaseStopsAtItsTimeLimit() async throws {
        try await TestServer.with(.sqlite) { server in
            let started = ContinuousClock.now
            let result = try await generator(server, concurrency: 2, count: 100_000_000, maxSeconds: 0.3)
                .run(RepeatedRequests(name: "healthz", perWorker: [BenchRequest(method: .GET, path: "/healthz")]))
            #expect(ContinuousClock.now - started < .seconds(60), "the phase ran past its limit")
            #expect(result.ok > 0)
            #expect(result.errors == 0)
            #expect(result.sent < 100_000_000)
            #expect(result.elapsedSeconds >= 0.3)
        }
    }
}
