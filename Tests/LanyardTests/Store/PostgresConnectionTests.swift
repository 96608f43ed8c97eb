import Foundation
import Logging
import Testing
@testable import LanyardStore
import LanyardSupport

/// Reaching PostgreSQL: over TCP, or through the Unix-domain socket of a server on the same machine
/// (`?host=/directory`, as libpq spells it). Skipped without `LANYARD_TEST_POSTGRES_URL`; the socket test
/// also needs `LANYARD_TEST_POSTGRES_DATA` (the socket directory `scripts/start-test-postgres` prints).
@Suite struct PostgresConnectionTests {
    @Test func aServerOnThisMachineIsReachedThroughItsSocketDirectory() async throws {
        guard TestDatabase.postgresURL != nil,
              let directory = ProcessInfo.processInfo.environment["LANYARD_TEST_POSTGRES_DATA"] else { return }
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
}
