import Foundation

/// One value bound into, or read out of, a SQL statement. The schema uses only these four storage kinds
/// (times are integer milliseconds, booleans 0/1) so that the same SQL runs on SQLite and PostgreSQL.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    public static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
    public static func date(_ value: Date) -> SQLValue { .integer(value.unixMilliseconds) }
    public static func optionalText(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
    public static func optionalDate(_ value: Date?) -> SQLValue { value.map(SQLValue.date) ?? .null }
}

extension SQLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

/// The column names of one result, shared by all its rows (and, on SQLite, by every result of a statement).
public final class SQLColumns: Sendable {
    public let names: [String]
    private let positions: [String: Int]

    public init(_ names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        // Like a row read into a dictionary: of two columns with one name, the later one is read.
        for (position, name) in names.enumerated() { positions[name] = position }
        self.positions = positions
    }

    func position(of name: String) -> Int? { positions[name] }
}

/// A result row, read by column name.
public struct SQLRow: Sendable {
    public let columns: SQLColumns
    public let cells: [SQLValue]

    public init(columns: SQLColumns, cells: [SQLValue]) {
        self.columns = columns
        self.cells = cells
    }

    /// The value in this column, or `nil` when the result has no such column.
    public subscript(column: String) -> SQLValue? {
        columns.position(of: column).map { cells[$0] }
    }

    public func string(_ column: String) throws -> String {
        guard case .text(let value) = self[column] else { throw StoreError.unexpectedValue(column: column) }
        return value
    }

    public func optionalString(_ column: String) throws -> String? {
        switch self[column] {
        case .text(let value): value
        case .null, nil: nil
        default: throw StoreError.unexpectedValue(column: column)
        }
    }

    public func integer(_ column: String) throws -> Int64 {
        guard case .integer(let value) = self[column] else { throw StoreError.unexpectedValue(column: column) }
        return value
    }

    public func optionalInteger(_ column: String) throws -> Int64? {
        switch self[column] {
        case .integer(let value): value
        case .null, nil: nil
        default: throw StoreError.unexpectedValue(column: column)
        }
    }

    public func bool(_ column: String) throws -> Bool { try integer(column) != 0 }

    public func date(_ column: String) throws -> Date { Date(unixMilliseconds: try integer(column)) }

    public func optionalDate(_ column: String) throws -> Date? {
        try optionalInteger(column).map(Date.init(unixMilliseconds:))
    }

    public func bytes(_ column: String) throws -> [UInt8] {
        guard case .blob(let value) = self[column] else { throw StoreError.unexpectedValue(column: column) }
        return value
    }
}
