import Foundation
import Hummingbird
@testable import LanyardCore
@testable import LanyardServer
@testable import LanyardStore
import LanyardSupport
import Logging
import Testing

/// How the store tells a database fault from a request's fault, and how long it lets a request wait: the rules
/// behind `DatabaseFaultTests`, each on its own.
@Suite struct DatabaseFaultRulesTests {
    @Test func aStoreThatCannotBeReachedIsA503ThatSaysNothingChanged() {
        let request = Request(head: .init(method: .get, scheme: "http", authority: "x", path: "/v1/users/me"),
                              body: .init(buffer: .init()))
        let catalogued = ErrorMiddleware.catalogue(StoreError.unavailable("connection refused"), request: request)
        #expect(catalogued.code == .serviceUnavailable)
        #expect(catalogued.code.httpStatus == 503)
        #expect(catalogued.retryAfter == 2)
        #expect(catalogued.message.contains("nothing was changed"))
        // Constraint conflicts are the request's business, not an outage.
        #expect(ErrorMiddleware.catalogue(StoreError.uniqueViolation, request: request).code == .internalError)
    }

    /// A full disk is refused as an outage, and SQLite rolls the write back: nothing of it is stored.
    @Test func sqliteStorageFailuresAreUnavailableAndLeaveNothingBehind() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-full-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await SQLiteDatabase.open(path: directory.appendingPathComponent("db.sqlite").path,
                                                     logger: Logger(label: "test"))
        _ = try await database.transaction { try await $0.query("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)") }
        let pages = try await database.read { try await $0.first("PRAGMA page_count")?.integer("page_count") } ?? 0
        // The writer may not grow the file by more than a few pages (SQLite's own "database or disk is full").
        _ = try await database.transaction { try await $0.query("PRAGMA max_page_count = \(pages + 2)") }
        let big = String(repeating: "x", count: 64 * 1024)
        let error = await #expect(throws: StoreError.self) {
            try await database.transaction { try await $0.query("INSERT INTO notes (text) VALUES ($1)", [.text(big)]) }
        }
        guard case .unavailable(let reason)? = error else {
            Issue.record("expected unavailable, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("full"), "\(reason)")
        #expect(try await database.read { try await $0.first("SELECT COUNT(*) AS n FROM notes")?.integer("n") } == 0)
        await database.close()
    }

    /// A caller waits for a connection at most the pool's timeout, then is answered; the connection, once back,
    /// is lent again.
    @Test(.requiresPostgres) func aRequestWaitsForAConnectionAtMostTheTimeout() async throws {
        guard let url = TestDatabase.postgresURL, case .postgres(let location) = DatabaseLocation(url: url) else {
            throw TestSetupError("LANYARD_TEST_POSTGRES_URL is not a PostgreSQL URL")
        }
        let database = try await PostgresDatabase.connect(location, connections: 1, timeout: .milliseconds(300),
                                                          logger: Logger(label: "test"))
        let (held, release) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await database.read { _ in for await _ in held {} }
        }
        try await Task.sleep(for: .milliseconds(100))
        let start = ContinuousClock.now
        await #expect(throws: StoreError.self) { try await database.read { try await $0.query("SELECT 1") } }
        let waited = ContinuousClock.now - start
        // The deadline is swept every 50 ms; a starved machine may add a little more.
        #expect(waited >= .milliseconds(250) && waited < .seconds(15), "\(waited)")
        release.finish()
        try await holder.value
        _ = try await database.read { try await $0.query("SELECT 1") }
        await database.close()
    }

    /// `/readyz`'s question: a ping never queues behind the pool's work, and every query that comes back is
    /// evidence that the database answers.
    @Test(.requiresPostgres)
    func aPingDoesNotWaitBehindABusyPool() async throws {
        guard let url = TestDatabase.postgresURL, case .postgres(let location) = DatabaseLocation(url: url) else {
            throw TestSetupError("LANYARD_TEST_POSTGRES_URL is not a PostgreSQL URL")
        }
        let database = try await PostgresDatabase.connect(location, connections: 1, timeout: .seconds(60),
                                                          logger: Logger(label: "test"))
        let (held, release) = AsyncStream<Void>.makeStream()
        let (taken, tookIt) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await database.read { _ in
                tookIt.yield()
                for await _ in held {}
            }
        }
        for await _ in taken { break }
        try await database.ping()
        let before = database.lastAnswer
        release.finish()
        try await holder.value
        let after = try #require(database.lastAnswer)
        #expect(before.map { after > $0 } ?? true)
        await database.close()
    }

    /// With nothing listening, start-up fails at once with the reason, rather than retrying forever.
    @Test func aServerThatRefusesConnectionsFailsStartUpWithTheReason() async throws {
        let port = try freeLoopbackPort()
        guard case .postgres(let location) = DatabaseLocation(url: "postgres://u@127.0.0.1:\(port)/db?sslmode=disable") else {
            throw TestSetupError("bad URL")
        }
        let start = ContinuousClock.now
        do {
            _ = try await PostgresDatabase.connect(location, connections: 2, logger: Logger(label: "test"))
            Issue.record("connected to a port nobody listens on")
        } catch let error as StoreError {
            #expect("\(error)".contains("\(port)"))
        }
        // Refused, not retried for ever (a busy machine may take a while to say so).
        #expect(ContinuousClock.now - start < .seconds(30))
    }
}
