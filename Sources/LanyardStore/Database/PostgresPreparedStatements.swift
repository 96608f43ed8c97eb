import Foundation
import PostgresNIO
import Synchronization

/// Names for Lanyard's statements, so PostgreSQL parses and plans each one once per connection instead of
/// on every execution (an unnamed statement is planned every time: three times the server's CPU for the
/// short lookups Lanyard makes). Every statement Lanyard runs is a fixed string, so the set is small; it is
/// bounded anyway, and statements past the bound, and anything but plain reads and writes (migrations'
/// DDL), run unnamed.
final class PreparedStatements: Sendable {
    static let shared = PreparedStatements()
    static let capacity = 512

    /// SQL to its statement name (or to `nil` for SQL that runs unnamed), and how many names were issued.
    private let state = Mutex<(names: [String: String?], issued: Int)>(([:], 0))

    func name(for sql: String) -> String? {
        state.withLock { state in
            if let known = state.names[sql] { return known }
            guard state.names.count < Self.capacity else { return nil }
            var name: String?
            if Self.isPreparable(sql) {
                state.issued += 1
                name = "lanyard_\(state.issued)"
            }
            state.names[sql] = name
            return name
        }
    }

    /// postgres-nio remembers a failed preparation on its connection and answers every later execution of
    /// that name with the same error. A preparation fails for a reason that passes (an earlier statement
    /// of the same transaction failed) only with SQLSTATE 25P02; the statement then gets a fresh name.
    func preparationFailed(_ sql: String, sqlState: String?) {
        guard sqlState == "25P02" else { return }
        state.withLock { _ = $0.names.removeValue(forKey: sql) }
    }

    static func isPreparable(_ sql: String) -> Bool {
        let head = sql.drop(while: \.isWhitespace).prefix(6).uppercased()
        return ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains { head.hasPrefix($0) }
    }
}

/// postgres-nio prepares a statement on a connection the first time it is executed there, remembering it
/// by name, but takes the name, SQL and parameter types from static members of a type. Lanyard's SQL is
/// chosen at run time, so this one type reads them from a task-local value set around each `execute`
/// (postgres-nio reads them synchronously within that call).
struct RuntimeStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        var name: String
        var sql: String
        var types: [PostgresDataType]
    }

    @TaskLocal static var current = Text(name: "", sql: "", types: [])

    static var name: String { current.name }
    static var sql: String { current.sql }
    static var bindingDataTypes: [PostgresDataType] { current.types }

    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
