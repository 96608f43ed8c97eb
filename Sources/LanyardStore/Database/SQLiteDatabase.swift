import Foundation
import LanyardSupport
import Logging
import NIOCore
import SQLiteNIO

/// The embedded default. One connection, used by one transaction at a time (SQLite has a single writer);
/// WAL journaling keeps the file readable by other processes meanwhile.
public final class SQLiteDatabase: Database {
    public let dialect = SQLDialect.sqlite
    private let connection: SQLiteConnection
    private let lock = AsyncLock()

    public static func open(path: String?, logger: Logger) async throws -> SQLiteDatabase {
        let storage: SQLiteConnection.Storage
        if let path {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            storage = .file(path: path)
        } else {
            storage = .memory
        }
        let connection = try await SQLiteConnection.open(storage: storage, logger: logger)
        let database = SQLiteDatabase(connection: connection)
        let handle = Handle(connection: connection)
        if path != nil {
            try await handle.query("PRAGMA journal_mode = WAL", [])
            try await handle.query("PRAGMA synchronous = NORMAL", [])
        }
        try await handle.query("PRAGMA foreign_keys = ON", [])
        return database
    }

    private init(connection: SQLiteConnection) {
        self.connection = connection
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        let handle = Handle(connection: connection)
        return try await lock.withLock {
            try await handle.query("BEGIN IMMEDIATE", [])
            do {
                let result = try await body(handle)
                try await handle.query("COMMIT", [])
                return result
            } catch {
                _ = try? await handle.query("ROLLBACK", [])
                throw error
            }
        }
    }

    public func read<T: Sendable>(_ body: @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        let handle = Handle(connection: connection)
        return try await lock.withLock { try await body(handle) }
    }

    public func ping() async throws {
        _ = try await read { try await $0.query("SELECT 1", []) }
    }

    public func close() async {
        try? await connection.close()
    }

    struct Handle: DatabaseConnection {
        let connection: SQLiteConnection
        var dialect: SQLDialect { .sqlite }

        @discardableResult
        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            let sqliteBinds = binds.map { value -> SQLiteData in
                switch value {
                case .null: .null
                case .integer(let number): .integer(SQLiteInt64(number))
                case .text(let text): .text(text)
                case .blob(let bytes): .blob(ByteBuffer(bytes: bytes))
                }
            }
            do {
                let rows = try await connection.query(Self.sqlitePlaceholders(sql), sqliteBinds)
                return rows.map { row in
                    var values: [String: SQLValue] = [:]
                    for column in row.columns {
                        values[column.name] = switch column.data {
                        case .null: .null
                        case .integer(let number): .integer(Int64(number))
                        case .float(let number): .integer(Int64(number))
                        case .text(let text): .text(text)
                        case .blob(let buffer): .blob(Array(buffer.readableBytesView))
                        }
                    }
                    return SQLRow(values: values)
                }
            } catch let error as SQLiteError {
                switch error.reason {
                case .constraintUniqueFailed, .constraintPrimaryKeyFailed: throw StoreError.uniqueViolation
                case .busy, .locked: throw StoreError.serializationFailure
                default: throw error
                }
            }
        }

        /// `$1` → `?1`: SQLite's numbered placeholders bind by the same numbers PostgreSQL uses.
        static func sqlitePlaceholders(_ sql: String) -> String {
            var output = ""
            output.reserveCapacity(sql.utf8.count)
            var previous: Character = " "
            for character in sql {
                if previous == "$", character.isNumber {
                    output.removeLast()
                    output.append("?")
                }
                output.append(character)
                previous = character
            }
            return output
        }
    }
}
