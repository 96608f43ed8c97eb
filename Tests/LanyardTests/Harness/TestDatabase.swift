import Foundation
import Testing
import LanyardStore
import LanyardSupport
import Logging

/// The databases the suite runs against: a real SQLite file always, and a real PostgreSQL server when
/// `LANYARD_TEST_POSTGRES_URL` is set (each test gets a database of its own).
enum TestDatabase: String, CustomTestStringConvertible, Sendable, CaseIterable {
    case sqlite
    case postgres

    static let postgresURL: String? = {
        let value = ProcessInfo.processInfo.environment["LANYARD_TEST_POSTGRES_URL"]
        return value?.isEmpty == false ? value : nil
    }()

    /// SQLite always; PostgreSQL only when configured (see `PostgresAvailabilityTests` for the skip notice).
    static var available: [TestDatabase] {
        postgresURL == nil ? [.sqlite] : [.sqlite, .postgres]
    }

    var testDescription: String { rawValue }

    /// A fresh, empty database URL for one test, and how to clean it up.
    func makeFresh() async throws -> (url: String, cleanup: @Sendable () async -> Void) {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("lanyard-test-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return ("sqlite:\(directory.appendingPathComponent("lanyard.sqlite").path)",
                    { try? FileManager.default.removeItem(at: directory) })
        case .postgres:
            guard let adminURL = Self.postgresURL, case .postgres(let admin) = DatabaseLocation(url: adminURL) else {
                throw TestSetupError("LANYARD_TEST_POSTGRES_URL is not a postgres:// URL")
            }
            let name = "lanyard_test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
            let logger = Logger(label: "test.postgres")
            let database = try await PostgresDatabase.connect(admin, connections: 1, logger: logger)
            _ = try await database.read { try await $0.query("CREATE DATABASE \(name)", []) }
            await database.close()
            var url = URLComponents(string: adminURL)!
            url.path = "/\(name)"
            return (url.string!, {
                if let database = try? await PostgresDatabase.connect(admin, connections: 1, logger: logger) {
                    _ = try? await database.read { try await $0.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", []) }
                    await database.close()
                }
            })
        }
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Trait where Self == ConditionTrait {
    /// A test that needs a PostgreSQL server: shown as skipped, not passed, when `LANYARD_TEST_POSTGRES_URL` is unset.
    static var requiresPostgres: Self {
        .enabled(if: TestDatabase.postgresURL != nil, "needs PostgreSQL (LANYARD_TEST_POSTGRES_URL)")
    }
}
