import Foundation
import LanyardStore
import LanyardSupport
import Logging
import Testing

/// The change feed across two `lanyard serve` processes on one PostgreSQL (reference section 13): a write through
/// one reaches a stream held by the other within a second, an ended session ends its stream on the other within
/// five, and a killed `LISTEN` connection loses nothing while writes go on.
@Suite struct ChangeFeedInstanceTests {
    static func put(_ server: ServerProcess, _ session: Session, _ id: String, _ n: Int) async throws {
        let answer = try await server.request(.PUT, "/v1/data/items/\(id)", json: ["data": ["n": n]], bearer: session.accessToken)
        #expect(answer.status == 200, "\(answer.text)")
    }

    static func stream(_ server: ServerProcess, _ session: Session, lastEventID: String? = nil) async throws -> EventStreamClient {
        try await EventStreamClient(server.baseURL + "/v1/changes/stream", bearer: session.accessToken,
                                    headers: lastEventID.map { ["Last-Event-ID": $0] } ?? [:])
    }

    @Test(.requiresPostgres) func aWriteOnOneInstanceReachesAStreamOnTheOtherAndASignOutEndsIt() async throws {
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        let a = try await ServerProcess.start(databaseURL: url)
        defer { a.stop() }
        let b = try await ServerProcess.start(databaseURL: url)
        defer { b.stop() }

        let phone = try Session(try await a.signIn(apple: "two-instances"))
        let tablet = try Session(try await b.signIn(apple: "two-instances"))
        let stream = try await Self.stream(b, tablet)
        _ = try await stream.events(until: "ready")
        for n in 0..<5 {
            try await Self.put(a, phone, "i\(n)", n)
            // From the commit (the write's answer) on: a wake-up, not the 30 s re-read, brings it. How fast (the
            // reference's 1 s; p99 8 ms measured) is the benchmark's to say, not a timed test's on a busy machine.
            let committed = ContinuousClock.now
            let event = try #require(try await stream.next())
            #expect(event.name == "change")
            #expect((event.json["data"] as? [String: Any])?["n"] as? Int == n)
            // Well inside the 30 s re-read, however busy the machine.
            #expect(ContinuousClock.now - committed < .seconds(25), "the change took \(ContinuousClock.now - committed)")
        }
        // The tablet's session signed out through the other instance.
        let began = ContinuousClock.now
        let signedOut = try await a.request(.POST, "/v1/auth/signout", json: ["scope": "others"], bearer: phone.accessToken)
        #expect(signedOut.status == 204)
        let end = try #require(try await stream.events(until: "end").last)
        #expect(end.json["reason"] as? String == "signed_out")
        #expect(ContinuousClock.now - began < .seconds(25), "a wake-up, not the 30 s re-read, ended it")
        await cleanup()
    }

    @Test(.requiresPostgres) func aKilledListenConnectionLosesNothing() async throws {
        guard let adminURL = TestDatabase.postgresURL, case .postgres(let admin)? = DatabaseLocation(url: adminURL) else {
            throw TestSetupError("LANYARD_TEST_POSTGRES_URL is not a PostgreSQL URL")
        }
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        let a = try await ServerProcess.start(databaseURL: url)
        defer { a.stop() }
        let b = try await ServerProcess.start(databaseURL: url)
        defer { b.stop() }
        let phone = try Session(try await a.signIn(apple: "listen-killed"))
        let tablet = try Session(try await b.signIn(apple: "listen-killed"))
        let stream = try await Self.stream(b, tablet)
        _ = try await stream.events(until: "ready")

        let database = try await PostgresDatabase.connect(admin, connections: 1, logger: Logger(label: "listen-killer"))
        let total = 120
        let writer = Task {
            var killed = 0
            for n in 0..<total {
                try await Self.put(a, phone, "k\(n % 10)", n)
                if n % 30 == 10 {
                    // Every instance's LISTEN connection, cut mid-stream of writes.
                    killed += try await database.read { try await $0.query(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%'", []) }.count
                }
            }
            return killed
        }
        var seen: [Int] = []
        while seen.last != total - 1 {
            guard let event = try await stream.next(within: 40) else { break }
            if event.name == "change" { seen.append((event.json["data"] as? [String: Any])?["n"] as? Int ?? -1) }
        }
        #expect(try await writer.value >= 4, "both instances' listeners were cut, and cut again once back")
        await database.close()
        #expect(seen == seen.sorted())
        #expect(Set(seen).count == seen.count)
        #expect(seen.last == total - 1)
        // Each record's latest value arrived.
        #expect(Set((total - 10)..<total).isSubset(of: Set(seen)))
        stream.close()
        await cleanup()
    }

    /// SIGTERM: open streams hear `end` with `shutdown` at once (their clients resume elsewhere), and the server
    /// stops without waiting for them.
    @Test func gracefulShutdownEndsStreamsAndDoesNotWaitForThem() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-stream-\(UUID().uuidString)").path
        let server = try await ServerProcess.start(databaseURL: "sqlite:\(directory)/db.sqlite")
        defer { server.stop() }
        let session = try Session(try await server.signIn(apple: "shut-down"))
        let streams = [try await Self.stream(server, session), try await Self.stream(server, session)]
        for stream in streams { _ = try await stream.events(until: "ready") }
        server.process.terminate()
        for stream in streams {
            let end = try #require(try await stream.events(until: "end").last)
            #expect(end.json["reason"] as? String == "shutdown")
        }
        // Waiting for the streams would be waiting for ever: an exit at all is the proof.
        #expect(await CommandTests.waitForExit(server.process, seconds: 30))
        #expect(server.process.terminationStatus == 0)
    }
}
