import Foundation
import Logging
import Testing
@testable import LanyardStore
import LanyardSupport

/// Reaching PostgreSQL: over TCP, or through the Unix-domain socket of a server on the same machine
/// (`?host=/directory`, as libpq spells it). Skipped without `LANYARD_TEST_POSTGRES_URL`; the socket test
/// also needs `LANYARD_TEST_POSTGRES_DATA` (the socket directory `scripts/start-test-postgres` prints). And
/// waiting for a connection of Lanyard's own pool.
@Suite struct PostgresConnectionTests {
    @Test(.requiresPostgres, .enabled(if: ProcessInfo.processInfo.environment["LANYARD_TEST_POSTGRES_DATA"] != nil,
                                      "needs the test server's socket directory (LANYARD_TEST_POSTGRES_DATA)"))
    func aServerOnThisMachineIsReachedThroughItsSocketDirectory() async throws {
        let directory = try #require(ProcessInfo.processInfo.environment["LANYARD_TEST_POSTGRES_DATA"])
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        guard case .postgres(let tcp) = DatabaseLocation(url: url) else { throw TestSetupError("not postgres") }
        let socketURL = "postgres://\(tcp.username)@/\(tcp.database)?host=\(directory)&port=\(tcp.port)"
        guard case .postgres(let socket) = DatabaseLocation(url: socketURL) else {
            Issue.record("\(socketURL) was not accepted")
            return
        }
        #expect(socket.socketDirectory == directory)
        for (location, overSocket) in [(tcp, false), (socket, true)] {
            let database = try await PostgresDatabase.connect(location, connections: 1, logger: Logger(label: "test"))
            // inet_server_addr() is NULL exactly when the connection came through a Unix-domain socket.
            let row = try await database.read { try await $0.first("SELECT (inet_server_addr() IS NULL)::int AS local") }
            #expect(try row?.bool("local") == overSocket)
            await database.close()
        }
        await cleanup()
    }

    @Test(.requiresPostgres) func aRequestWaitingForAConnectionLeavesWhenCancelledAndTakesNone() async throws {
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        guard case .postgres(let location) = DatabaseLocation(url: url) else { throw TestSetupError("not postgres") }
        let database = try await PostgresDatabase.connect(location, connections: 1, timeout: .seconds(60),
                                                          logger: Logger(label: "test"))
        // The pool's one connection, held until `release` finishes.
        let (held, release) = AsyncStream<Void>.makeStream()
        let (taken, tookIt) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await database.read { _ in
                tookIt.yield()
                for await _ in held {}
            }
        }
        for await _ in taken { break }
        let waiter = Task { try await database.read { try await $0.query("SELECT 1") } }
        try await Task.sleep(for: .milliseconds(200))
        waiter.cancel()
        // Without cancellation reaching the pool, the waiter would get the connection once it is free, and succeed.
        let freeLater = Task {
            try await Task.sleep(for: .seconds(5))
            release.finish()
        }
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        release.finish()
        freeLater.cancel()
        try await holder.value
        // The connection went back to the pool, not to the cancelled waiter.
        let row = try await database.read { try await $0.first("SELECT 2 AS two") }
        #expect(try row?.integer("two") == 2)
        await database.close()
        await cleanup()
    }
}
