import Foundation

/// One limit's counter: when its window began, how many mails in it, and the last.
public struct EmailLimitCounter: Sendable, Equatable {
    public var windowStart: Date
    public var count: Int
    public var lastAt: Date

    public init(windowStart: Date, count: Int, lastAt: Date) {
        (self.windowStart, self.count, self.lastAt) = (windowStart, count, lastAt)
    }
}

/// `email_limits`: counters keyed `address:…`, `ip:…`, `all` and `wrong:…` (wrong codes per address), read locked and written back in the start's
/// transaction (SQLite's writes are serialized; PostgreSQL locks the row), so racing starts count one by one.
public struct EmailLimitStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// The counter, locked until the transaction ends (created empty when new).
    public func lock(key: String) async throws -> EmailLimitCounter {
        try await connection.query("""
            INSERT INTO email_limits (key, window_start, count, last_at) VALUES ($1, 0, 0, 0) ON CONFLICT (key) DO NOTHING
            """, [.text(key)])
        guard let row = try await connection.first("SELECT * FROM email_limits WHERE key = $1\(connection.dialect.forUpdate)",
                                                   [.text(key)]) else { throw StoreError.unexpectedValue(column: "key") }
        return EmailLimitCounter(windowStart: try row.date("window_start"), count: Int(try row.integer("count")),
                                 lastAt: try row.date("last_at"))
    }

    /// The counter as it stands, without locking it; nil when it was never counted.
    public func find(key: String) async throws -> EmailLimitCounter? {
        try await connection.first("SELECT * FROM email_limits WHERE key = $1", [.text(key)]).map { row in
            EmailLimitCounter(windowStart: try row.date("window_start"), count: Int(try row.integer("count")),
                              lastAt: try row.date("last_at"))
        }
    }

    public func save(key: String, _ counter: EmailLimitCounter) async throws {
        try await connection.query("UPDATE email_limits SET window_start = $2, count = $3, last_at = $4 WHERE key = $1",
                                   [.text(key), .date(counter.windowStart), .integer(Int64(counter.count)),
                                    .date(counter.lastAt)])
    }

    /// Counters untouched since `date` are forgotten.
    public func deleteIdle(before date: Date) async throws {
        try await connection.query("DELETE FROM email_limits WHERE last_at < $1", [.date(date)])
    }
}
