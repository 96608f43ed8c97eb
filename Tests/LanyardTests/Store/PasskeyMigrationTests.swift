import Foundation
import LanyardStore
import LanyardSupport
import Logging
import Testing

/// Migration 14 (passkeys) on a database that already holds accounts: SQLite rebuilds `identities` and the two
/// tables that reference it, PostgreSQL drops a constraint. Nothing is lost, references still cascade, and the
/// new rule holds: several passkeys per account, still one identity of any other provider.
@Suite struct PasskeyMigrationTests {
    @Test(arguments: TestDatabase.available)
    func accountsAndAppleTokensSurviveAndAccountsMayHoldSeveralPasskeys(database kind: TestDatabase) async throws {
        let (url, cleanup) = try await kind.makeFresh()
        defer { Task { await cleanup() } }
        let location = try #require(DatabaseLocation(url: url))
        let logger = Logger(label: "migration-test")
        let database = try await DatabaseFactory.open(location, poolSize: 2, logger: logger)
        let migrator = Migrator(database: database, logger: logger)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try await migrator.migrate(now: now, through: 13)
        try await database.transaction { connection in
            try await connection.query("""
                INSERT INTO users (id, created_at, updated_at, last_active_at, is_anonymous) VALUES ('u1', $1, $1, $1, 0)
                """, [.date(now)])
            for (id, provider, position) in [("i1", "apple", 1), ("i2", "google", 2)] {
                try await connection.query("""
                    INSERT INTO identities (id, user_id, provider, provider_user_id, email_verified, is_private_email,
                                            linked_at, link_position)
                    VALUES ($1, 'u1', $2, $3, 0, 0, $4, $5)
                    """, [.text(id), .text(provider), .text("sub-" + provider), .date(now), .integer(Int64(position))])
            }
            try await connection.query("""
                INSERT INTO apple_tokens (identity_id, client_id, sealed_token, updated_at) VALUES ('i1', 'app', $1, $2)
                """, [.blob([1, 2, 3]), .date(now)])
            try await connection.query("INSERT INTO apple_identity_state (identity_id, email_forwarding) VALUES ('i1', 'on')")
        }
        #expect(try await migrator.migrate(now: now) == Array(14...Migrations.all.count))

        try await database.transaction { connection in
            #expect(try await connection.query("SELECT id FROM identities ORDER BY id").map { try $0.string("id") } == ["i1", "i2"])
            #expect(try await connection.first("SELECT client_id FROM apple_tokens WHERE identity_id = 'i1'")?.string("client_id") == "app")
            for (id, position) in [("p1", 3), ("p2", 4)] {
                try await connection.query("""
                    INSERT INTO identities (id, user_id, provider, provider_user_id, email_verified, is_private_email,
                                            linked_at, link_position)
                    VALUES ($1, 'u1', 'passkey', $1, 0, 0, $2, $3)
                    """, [.text(id), .date(now), .integer(Int64(position))])
            }
        }
        // A second Google identity on the account is still refused.
        await #expect(throws: StoreError.self) {
            try await database.transaction { connection in
                try await connection.query("""
                    INSERT INTO identities (id, user_id, provider, provider_user_id, email_verified, is_private_email,
                                            linked_at, link_position)
                    VALUES ('i3', 'u1', 'google', 'other', 0, 0, $1, 5)
                    """, [.date(now)])
            }
        }
        // The Apple identity's rows still follow it.
        try await database.transaction { connection in
            try await connection.query("DELETE FROM identities WHERE id = 'i1'")
            #expect(try await connection.first("SELECT identity_id FROM apple_tokens") == nil)
            #expect(try await connection.first("SELECT identity_id FROM apple_identity_state") == nil)
            #expect(try await connection.query("SELECT id FROM identities WHERE provider = 'passkey'").count == 2)
        }
        await database.close()
    }
}
