import Foundation

public enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// Row locking for read-modify-write in a transaction. SQLite needs none: its writes are serialized.
    public var forUpdate: String {
        switch self {
        case .sqlite: ""
        case .postgres: " FOR UPDATE"
        }
    }

    /// A row lock that waits for, and then reads the outcome of, a concurrent transaction that locked or
    /// changed the row, without blocking inserts that reference it (foreign-key checks take a weaker lock).
    public var forNoKeyUpdate: String {
        switch self {
        case .sqlite: ""
        case .postgres: " FOR NO KEY UPDATE"
        }
    }

    /// Locks the rows a worker claims and passes over those another instance is claiming (outboxes); SQLite's
    /// serialized writes need none.
    public var forUpdateSkipLocked: String {
        switch self {
        case .sqlite: ""
        case .postgres: " FOR UPDATE SKIP LOCKED"
        }
    }
}

/// A connection inside a transaction (or a plain read). SQL uses `$1, $2, …` placeholders on both databases.
public protocol DatabaseConnection: Sendable {
    var dialect: SQLDialect { get }

    @discardableResult
    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow]

    /// Runs a write whose outcome nothing in the transaction reads or catches. PostgreSQL holds it back and
    /// sends the held writes, combined into one statement where they can be (`WriteBatch`), before the
    /// transaction's next other statement or at its commit: a round trip saved per write. SQLite runs it at
    /// once. Its errors may therefore surface at the commit.
    func enqueueWrite(_ sql: String, _ binds: [SQLValue]) async throws
}

extension DatabaseConnection {
    @discardableResult
    public func query(_ sql: String) async throws -> [SQLRow] {
        try await query(sql, [])
    }

    public func first(_ sql: String, _ binds: [SQLValue] = []) async throws -> SQLRow? {
        try await query(sql, binds).first
    }

    public func enqueueWrite(_ sql: String, _ binds: [SQLValue]) async throws {
        try await query(sql, binds)
    }
}

/// SQLite or PostgreSQL, behind one interface.
public protocol Database: Sendable {
    var dialect: SQLDialect { get }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T

    /// Runs reads outside an explicit transaction.
    func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T

    /// Runs one write statement that commits by itself. On PostgreSQL it is sent alone, without `BEGIN` or
    /// `COMMIT`: one round trip, and the row locks it takes are held only while PostgreSQL runs it, never while a
    /// reply travels. On SQLite it is a transaction of the one writer.
    func autocommit<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T

    /// Throws when the database cannot be reached. Asked on a connection of its own where the database has a pool,
    /// so the answer never waits behind the pool's work.
    func ping() async throws

    /// When a query last succeeded (`nil` before the first): evidence that the database answers, read without
    /// asking it.
    var lastAnswer: ContinuousClock.Instant? { get }

    /// Whether the database answered the last attempt to reach it, known without asking it (`/readyz`, the
    /// `lanyard_database_reachable` gauge). An SQLite file is always reachable; its failures are per write.
    var isReachable: Bool { get }

    /// The database's background work, until the calling task is cancelled: PostgreSQL's pool replaces lost
    /// connections and refuses requests that waited past `LANYARD_DATABASE_TIMEOUT` (`PostgresPool.maintain`).
    /// SQLite has none to run here (its checkpointer is a thread the writer wakes) and only waits. The server runs
    /// it as a service (`DatabaseService`); a database opened with `BackgroundWork.ownTask` runs it itself.
    func runBackgroundWork() async

    func close() async
}

/// Who runs a database's `runBackgroundWork()`.
public enum BackgroundWork: Sendable {
    /// The database, in a task of its own that `close()` ends: for commands and tests, which have no service group.
    case ownTask
    /// Whoever opened it: the server, as a service of its `ServiceGroup`, stopped at graceful shutdown.
    case runByOwner
}

extension Database {
    /// Runs a transaction, retrying it when a concurrent one made it fail on a unique constraint, a row it
    /// referred to deleted since it read it (a foreign key), or a serialization conflict: the retry sees the
    /// other transaction's committed rows.
    public func transactionRetryingConflicts<T: Sendable>(
        attempts: Int = 3,
        _ body: @escaping @Sendable (any DatabaseConnection) async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await transaction(body)
            } catch let error as StoreError where error.isConflict && attempt < attempts {
                attempt += 1
            }
        }
    }
}
