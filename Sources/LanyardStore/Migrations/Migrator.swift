import Foundation
import LanyardSupport
import Logging

/// Applies the numbered migrations that are not yet applied, in order, in one transaction.
public struct Migrator: Sendable {
    let database: any Database
    let logger: Logger

    public init(database: any Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// - Parameter version: the last version to apply (tests of a migration start from the one before); all by default.
    /// - Returns: the versions applied by this call.
    @discardableResult
    public func migrate(now: Date = Date(), through version: Int = .max) async throws -> [Int] {
        let logger = self.logger
        return try await database.transaction { connection in
            if connection.dialect == .postgres {
                // Instances starting together take turns; the others then find nothing to do.
                try await connection.query("SELECT pg_advisory_xact_lock(7426169)")
            }
            try await connection.query(Migrations.render("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version {int} PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at {int} NOT NULL
                )
                """, for: connection.dialect)!)
            let applied = Set(try await connection.query("SELECT version FROM schema_migrations")
                .map { try $0.integer("version") })
            var newlyApplied: [Int] = []
            for migration in Migrations.all where !applied.contains(Int64(migration.version)) && migration.version <= version {
                for statement in migration.statements {
                    guard let rendered = Migrations.render(statement, for: connection.dialect) else { continue }
                    try await connection.query(rendered)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                    [.integer(Int64(migration.version)), .text(migration.name), .date(now)])
                logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                newlyApplied.append(migration.version)
            }
            return newlyApplied
        }
    }
}
