import Foundation
import Logging
import Testing
@testable import LanyardStore
import LanyardSupport

/// Lanyard's PostgreSQL statements are named and prepared once per connection; these check the cases where
/// a name could go wrong on a real server. Skipped without `LANYARD_TEST_POSTGRES_URL` (announced by
/// `PostgresAvailabilityTests`).
@Suite struct PostgresPreparedStatementTests {
    @Test func readsAndWritesAreNamedOnceAndSchemaChangesRunUnnamed() {
        let statements = PreparedStatements()
        let select = "SELECT * FROM users WHERE id = $1"
        let name = statements.name(for: select)
        #expect(name != nil)
        #expect(statements.name(for: select) == name, "the same SQL keeps its name")
        #expect(statements.name(for: "  WITH x AS (SELECT 1) SELECT * FROM x") != nil)
        #expect(statements.name(for: "UPDATE users SET display_name = $2 WHERE id = $1") != name)
        #expect(statements.name(for: "CREATE TABLE t (id TEXT)") == nil)
        #expect(statements.name(for: "SELECT pg_advisory_xact_lock(1)") != nil)
        statements.preparationFailed(select, sqlState: "23505")
        #expect(statements.name(for: select) == name, "a failure of the statement itself keeps the name")
        statements.preparationFailed(select, sqlState: "25P02")
        let renamed = statements.name(for: select)
        #expect(renamed != nil && renamed != name, "a preparation refused by a failed transaction is renamed")
    }

    @Test(.requiresPostgres) func aStatementFirstPreparedInsideAFailedTransactionWorksAfterTheRollback() async throws {
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        guard case .postgres(let location) = DatabaseLocation(url: url) else { throw TestSetupError("not postgres") }
        // One connection, so the retry below meets the very connection where the preparation failed.
        let database = try await PostgresDatabase.connect(location, connections: 1, logger: Logger(label: "test"))
        _ = try await database.read { try await $0.query("CREATE TABLE things (id TEXT PRIMARY KEY)") }
        // SQL this process has never prepared before.
        let probe = "SELECT id FROM things WHERE id = $1 AND '\(UUID().uuidString)' <> ''"

        await #expect(throws: (any Error).self) {
            try await database.transaction { connection in
                try await connection.query("INSERT INTO things (id) VALUES ($1)", ["a"])
                _ = try? await connection.query("INSERT INTO things (id) VALUES ($1)", ["a"])
                return try await connection.query(probe, ["a"]).count
            }
        }
        let rows = try await database.read { try await $0.query(probe, ["a"]) }
        #expect(rows.isEmpty, "the failed transaction was rolled back")
        _ = try await database.transaction { try await $0.query("INSERT INTO things (id) VALUES ($1)", ["b"]) }
        #expect(try await database.read { try await $0.query(probe, ["b"]).count } == 1)
        await database.close()
        await cleanup()
    }

    @Test(.requiresPostgres, arguments: [true, false])
    func statementsArePreparedOnTheServerUnlessTheURLTurnsThemOff(prepared: Bool) async throws {
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        let configured = url + (url.contains("?") ? "&" : "?") + "prepared_statements=\(prepared ? "on" : "off")"
        guard case .postgres(let location) = DatabaseLocation(url: configured) else { throw TestSetupError("not postgres") }
        #expect(location.preparedStatements == prepared)
        let database = try await PostgresDatabase.connect(location, connections: 1, logger: Logger(label: "test"))
        let probe = "SELECT $1::text AS echo, '\(UUID().uuidString)' AS marker"
        for value in ["a", "b"] {
            #expect(try await database.read { try await $0.query(probe, [.text(value)]) }.first?.string("echo") == value)
        }
        // pg_prepared_statements lists the statements prepared on this (the pool's only) connection.
        let listed = try await database.read {
            try await $0.query("SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%' || $1", [.text("AS marker")])
        }
        #expect(listed.count == (prepared ? 1 : 0))
        await database.close()
        await cleanup()
    }

    @Test(.requiresPostgres) func oneStatementRunsWithDifferentValuesAndNullsOnOneConnection() async throws {
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        guard case .postgres(let location) = DatabaseLocation(url: url) else { throw TestSetupError("not postgres") }
        let database = try await PostgresDatabase.connect(location, connections: 1, logger: Logger(label: "test"))
        _ = try await database.read { try await $0.query("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT, at BIGINT)") }
        let insert = "INSERT INTO notes (id, body, at) VALUES ($1, $2, $3)"
        _ = try await database.transaction { connection in
            try await connection.query(insert, ["n1", .null, .null])
            try await connection.query(insert, ["n2", "text", 42])
            try await connection.query(insert, ["n3", .null, 7])
        }
        let rows = try await database.read { try await $0.query("SELECT * FROM notes ORDER BY id") }
        #expect(try rows.map { try $0.string("id") } == ["n1", "n2", "n3"])
        #expect(try rows.map { try $0.optionalString("body") } == [nil, "text", nil])
        #expect(rows.map { $0["at"] } == [.null, .integer(42), .integer(7)])
        await database.close()
        await cleanup()
    }
}
