import Foundation
import Lanyard
import LanyardEmulator
import Synchronization
import Testing

/// The database failing under a running Lanyard (reference section 8), as an operator would see it: `lanyard serve`
/// in a process of its own, PostgreSQL stopped and started again while requests are in flight, SQLite's file
/// refused further growth.
@Suite struct DatabaseFaultTests {
    /// One request of the load, and what became of it.
    struct Outcome: Sendable {
        let sub: String
        let status: Int
        let code: String?
        let took: Duration
    }

    /// Sign-ins of new people, from `workers` clients at once, until `running` turns false.
    static func signInLoad(_ server: ServerProcess, workers: Int, running: Flag) async -> [Outcome] {
        await withTaskGroup(of: [Outcome].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var outcomes: [Outcome] = []
                    var index = 0
                    while running.isSet {
                        index += 1
                        let sub = "load-\(worker)-\(index)"
                        let start = ContinuousClock.now
                        guard let answer = try? await server.signIn(apple: sub) else { continue }
                        outcomes.append(Outcome(sub: sub, status: answer.status, code: answer.errorCode,
                                                took: ContinuousClock.now - start))
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                    return outcomes
                }
            }
            var all: [Outcome] = []
            for await outcomes in group { all += outcomes }
            return all
        }
    }

    final class Flag: Sendable {
        private let value = Mutex(true)
        var isSet: Bool { value.withLock { $0 } }
        func clear() { value.withLock { $0 = false } }
    }

    @Test(.requiresPostgres) func postgresStoppedAndStartedWhileRequestsAreInFlight() async throws {
        let postgres = try DisposablePostgres.start()
        defer { postgres.remove() }
        let server = try await ServerProcess.start(databaseURL: postgres.url, environment: ["LANYARD_DATABASE_TIMEOUT": "2"])
        defer { server.stop() }

        let alice = try Session(try await server.signIn(apple: "alice"))
        let saved = try await server.request(.PUT, "/v1/data/notes/kept", json: ["data": ["text": "before"]], bearer: alice.accessToken)
        #expect(saved.status == 200)

        // An app on the SDK, signed in before the fault.
        let app = LanyardClient(url: URL(string: server.baseURL)!, storage: MemorySessionStore())
        _ = try await app.signInWithApple(idToken: try ServerProcess.minter.mint(.apple, MintRequest(sub: "bob")))

        let running = Flag()
        async let load = Self.signInLoad(server, workers: 3, running: running)
        try await Task.sleep(for: .milliseconds(500))
        try postgres.stop()
        let stopped = ContinuousClock.now

        // Down: /readyz says so within 2 s of the stop (the pool learns it from its closed connections and its
        // first refused reconnect), each answer within a second by the server's clock. A probe counts from when
        // it was sent, as a load balancer's does: how long this busy test process then takes to read the answer
        // is not the server's.
        var notReadyAfter: Duration?
        while ContinuousClock.now - stopped < .seconds(20) {
            let sent = ContinuousClock.now
            if try await server.request(.GET, "/readyz").status == 503 {
                notReadyAfter = sent - stopped
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(notReadyAfter != nil && notReadyAfter! < .seconds(2), "\(String(describing: notReadyAfter))")

        // Every request that needs the database is a prompt 503 in the one shape; the rest still answer.
        let me = try await server.request(.GET, "/v1/users/me", bearer: alice.accessToken)
        #expect(me.status == 503)
        #expect(me.errorCode == "SERVICE_UNAVAILABLE")
        #expect(me.headers.first(name: "Retry-After") != nil)
        let write = try await server.request(.PUT, "/v1/data/notes/lost", json: ["data": ["text": "during"]], bearer: alice.accessToken)
        #expect(write.status == 503)
        #expect(try await server.request(.GET, "/healthz").status == 200)
        let metrics = try await server.request(.GET, "/metrics").text
        #expect(MetricsText.allAnswered(in: metrics, method: "GET", route: "/readyz", within: "1.0"))
        #expect(MetricsText.allAnswered(in: metrics, method: "GET", route: "/v1/users/me", within: "2.5"))
        #expect(MetricsText.allAnswered(in: metrics, method: "PUT", route: "/v1/data/{collection}/{id}", within: "2.5"))
        #expect(metrics.contains("lanyard_database_reachable 0"))
        #expect(metrics.contains("lanyard_unavailable_responses_total{cause=\"database\"}"))
        // The SDK surfaces it as its own error, and keeps the session (the fault is not the user's).
        do {
            _ = try await app.refreshUser()
            Issue.record("refreshUser succeeded while the database was down")
        } catch let error as Lanyard.LanyardError {
            guard case .serviceUnavailable(let retryAfter) = error else {
                Issue.record("expected serviceUnavailable, got \(error)")
                return
            }
            #expect(retryAfter == 2)
        }
        #expect(app.user != nil)
        // The JWKS needs no database: backends keep verifying tokens.
        #expect(try await server.request(.GET, "/.well-known/jwks.json").status == 200)

        try postgres.restart()
        let back = ContinuousClock.now
        var recovered: Duration?
        while ContinuousClock.now - back < .seconds(10) {
            if try await server.request(.GET, "/v1/users/me", bearer: alice.accessToken).status == 200 {
                recovered = ContinuousClock.now - back
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(recovered != nil && recovered! < .seconds(5), "\(String(describing: recovered))")
        try await Task.sleep(for: .milliseconds(300))
        running.clear()
        let outcomes = await load

        // Never a 500 or a hang; each answer came within the database timeout (and a margin), by the server's clock.
        #expect(outcomes.allSatisfy { [200, 503].contains($0.status) }, "\(outcomes.filter { ![200, 503].contains($0.status) })")
        #expect(outcomes.contains { $0.status == 503 } && outcomes.contains { $0.status == 200 })
        #expect(outcomes.allSatisfy { $0.status != 503 || $0.code == "SERVICE_UNAVAILABLE" })
        let afterwards = try await server.request(.GET, "/metrics").text
        #expect(MetricsText.allAnswered(in: afterwards, method: "POST", route: "/v1/auth/signin/{provider}", within: "2.5"))
        #expect((outcomes.map(\.took).max() ?? .zero) < .seconds(20), "a sign-in hung")

        // A sign-in answered 2xx made its account, one answered 503 did not: signing in again tells which.
        for outcome in outcomes {
            let again = try await server.signIn(apple: outcome.sub)
            #expect(again.status == 200)
            #expect(again.json["is_new_user"] as? Bool == (outcome.status == 503), "\(outcome.sub) was \(outcome.status)")
        }
        #expect(try await server.request(.GET, "/v1/data/notes/kept", bearer: alice.accessToken).status == 200)
        #expect(try await server.request(.GET, "/v1/data/notes/lost", bearer: alice.accessToken).status == 404)
        #expect(try await server.request(.GET, "/readyz").status == 200)
        #expect(try await app.refreshUser().linkedProviders.map(\.provider) == [.apple])
        #expect(try await server.request(.GET, "/metrics").text.contains("lanyard_database_reachable 1"))
        // The operator's log says what happened, once each way.
        #expect(server.logText.contains("database unreachable"))
        #expect(server.logText.contains("database reachable again"))
        // The background services warn once per outage, not once per poll.
        for failure in ["could not read the signing keys", "could not send Apple revocations"] {
            let warnings = server.logText.split(separator: "\n").filter { $0.contains(" warning ") && $0.contains(failure) }
            #expect(warnings.count <= 1, "\(warnings)")
        }
    }

    /// The SQLite file cannot grow (a full disk, as a file-size limit the test raises again): a write is a 503
    /// that changed nothing and a log line, the server keeps running, and writes succeed once there is room.
    @Test func sqliteWritesThatCannotBeStoredAre503sAndRecoverWithoutARestart() async throws {
        let (url, cleanup) = try await TestDatabase.sqlite.makeFresh()
        defer { Task { await cleanup() } }
        let server = try await ServerProcess.start(databaseURL: url, launcher: ["/usr/bin/prlimit", "--fsize=2000000:unlimited", "--"])
        defer { server.stop() }
        let alice = try Session(try await server.signIn(apple: "alice"))
        let text = String(repeating: "0123456789abcdef", count: 4000)  // 64 KB
        var stored: [Int] = []
        var refused: TestResponse?
        var refusedIndex = 0
        for index in 0..<200 {
            let answer = try await server.request(.PUT, "/v1/data/notes/n\(index)", json: ["data": ["text": "\(index)" + text]],
                                                  bearer: alice.accessToken)
            guard answer.status == 200 else {
                refused = answer
                refusedIndex = index
                break
            }
            stored.append(index)
        }
        let failed = try #require(refused)
        #expect(failed.status == 503)
        #expect(failed.errorCode == "SERVICE_UNAVAILABLE")
        #expect(server.process.isRunning)
        #expect(try await server.request(.GET, "/healthz").status == 200)
        #expect(server.logText.contains("database unavailable"))
        #expect(try await server.request(.GET, "/v1/data/notes/n\(refusedIndex)", bearer: alice.accessToken).status == 404)
        for index in stored {
            let kept = try await server.request(.GET, "/v1/data/notes/n\(index)", bearer: alice.accessToken)
            #expect(kept.status == 200, "n\(index)")
        }

        // Room again: the same write succeeds, without a restart.
        let raised = try ChildProcess(executable: "/usr/bin/prlimit", arguments: ["--pid", String(server.process.pid), "--fsize=unlimited:unlimited"],
                                      environment: [:])
        while raised.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        try #require(raised.terminationStatus == 0)
        let retried = try await server.request(.PUT, "/v1/data/notes/n\(refusedIndex)", json: ["data": ["text": text]],
                                               bearer: alice.accessToken)
        #expect(retried.status == 200, "\(server.logText.suffix(2000))")
    }
}
