import CSQLite
import Foundation
import LanyardSupport
import Logging
import Synchronization

/// The embedded default, on the system SQLite. One writer connection, used by one transaction at a time
/// (SQLite has a single writer), and, for files, a few reader connections that WAL journaling lets read
/// alongside it. Statements are prepared once per connection and run in place: a statement takes
/// microseconds, far less than handing it to another thread would.
public final class SQLiteDatabase: Database {
    public let dialect = SQLDialect.sqlite
    private let writer: Connection
    private let commits: SavepointBatch
    private let readers: ReaderPool?
    private let checkpointer: WALCheckpointer?
    private let evidence = AnswerEvidence()

    public static func open(
        path: String?, readerCount: Int = 4, checkpointing: Checkpointing = .standard, logger: Logger
    ) async throws -> SQLiteDatabase {
        if let path {
            try SecretFile.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
            try SecretFile.createEmptyIfAbsent(atPath: path)
        }
        let writer = try Connection(path: path ?? ":memory:", readOnly: false)
        if path != nil {
            try writer.execute("PRAGMA journal_mode = WAL")
            try writer.execute("PRAGMA synchronous = NORMAL")
        }
        try writer.execute("PRAGMA foreign_keys = ON")
        // Group commit gives each transaction a savepoint, so SQLite keeps the original of every page each one
        // changes, in a temporary file once past 64 KiB: kept in memory instead, it is a copy, not a write.
        try writer.execute("PRAGMA temp_store = MEMORY")
        var readers: ReaderPool?
        var checkpointer: WALCheckpointer?
        if let path {
            // An in-memory database exists only in its one connection; files get readers of their own, and a
            // thread that checkpoints the log.
            readers = ReaderPool(connections: try (0..<readerCount).map { _ in try Connection(path: path, readOnly: true) })
            let thread = try WALCheckpointer(path: path, sizes: checkpointing)
            try thread.watch(writer)
            checkpointer = thread
        }
        return SQLiteDatabase(writer: writer, readers: readers, checkpointer: checkpointer)
    }

    private init(writer: Connection, readers: ReaderPool?, checkpointer: WALCheckpointer?) {
        self.writer = writer
        self.commits = SavepointBatch(writer: writer)
        self.readers = readers
        self.checkpointer = checkpointer
    }

    deinit {
        checkpointer?.stop()
    }

    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        let result = try await commits.run(body)
        evidence.record()
        return result
    }

    /// SQLite's writes are the one writer's transactions.
    public func autocommit<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await transaction(body)
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        // In memory, the writer is the only connection: reads queue with the writes.
        guard let readers else { return try await commits.run(body) }
        let connection = await readers.acquire()
        do {
            let result = try await body(connection)
            await readers.release(connection)
            evidence.record()
            return result
        } catch {
            await readers.release(connection)
            throw error
        }
    }

    public func ping() async throws {
        _ = try await read { try await $0.query("SELECT 1", []) }
    }

    public var isReachable: Bool { true }

    public var lastAnswer: ContinuousClock.Instant? { evidence.lastAnswer }

    public func runBackgroundWork() async {
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    }

    public func close() async {
        // Queued after every transaction in flight, so nothing is cut off.
        _ = try? await commits.run { _ in () }
        // The writer closes last: SQLite's last connection copies the whole log into the database file and
        // deletes it, so a database closed cleanly is one file again.
        await readers?.closeAll()
        await checkpointer?.stopAndWait()
        writer.close()
    }

    /// Group commit on SQLite (PostgreSQL's is `GroupCommit`). SQLite has one writer and a commit costs as much as
    /// a small transaction, so transactions that arrive while the writer is busy are run together: the first to
    /// find the writer free becomes the leader, runs every queued transaction inside one `BEGIN IMMEDIATE …
    /// COMMIT`, each in a SAVEPOINT of its own (one that throws is rolled back alone, exactly as if it had run by
    /// itself), then commits once and answers them all. A transaction is answered only after the commit that made
    /// it durable.
    final class SavepointBatch: Sendable {
        struct Job: Sendable {
            /// Runs the transaction's body; returns whether it succeeded (its result is kept for `finish`).
            let run: @Sendable (Connection) async -> Bool
            /// Answers the caller once the batch is committed (or, with the error, once it failed).
            let finish: @Sendable ((any Error)?) -> Void
        }

        /// Bounds a batch, so one leader never holds the writer for long.
        static let maximumBatch = 64

        private let writer: Connection
        private let state = Mutex<(queue: [Job], leading: Bool)>(([], false))

        init(writer: Connection) {
            self.writer = writer
        }

        func run<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
            let outcome = OutcomeBox<T>()
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job = Job(
                    run: { connection in
                        do {
                            outcome.set(.success(try await body(connection)))
                            return true
                        } catch {
                            outcome.set(.failure(error))
                            return false
                        }
                    },
                    finish: { batchError in
                        if let batchError, case .success = outcome.get() {
                            continuation.resume(throwing: batchError)
                        } else if let result = outcome.get() {
                            continuation.resume(with: result)
                        } else {
                            continuation.resume(throwing: batchError ?? StoreError.unavailable("transaction did not run"))
                        }
                    })
                let lead = state.withLock { state -> Bool in
                    state.queue.append(job)
                    if state.leading { return false }
                    state.leading = true
                    return true
                }
                if lead { Task { await self.lead() } }
            }
        }

        private func lead() async {
            while true {
                let batch = state.withLock { state -> [Job] in
                    let batch = Array(state.queue.prefix(Self.maximumBatch))
                    state.queue.removeFirst(batch.count)
                    if batch.isEmpty { state.leading = false }
                    return batch
                }
                if batch.isEmpty { return }
                await commit(batch)
            }
        }

        private func commit(_ batch: [Job]) async {
            do {
                try writer.control("BEGIN IMMEDIATE")
            } catch {
                for job in batch { job.finish(error) }
                return
            }
            // Jobs whose savepoint could not be opened are answered at once, and only then.
            var ran: [Job] = []
            for job in batch {
                do {
                    try writer.control("SAVEPOINT lanyard_transaction")
                } catch {
                    job.finish(error)
                    continue
                }
                ran.append(job)
                if await !job.run(writer) {
                    try? writer.control("ROLLBACK TO lanyard_transaction")
                }
                try? writer.control("RELEASE lanyard_transaction")
            }
            var commitError: (any Error)?
            do {
                try writer.control("COMMIT")
            } catch {
                commitError = error
                try? writer.control("ROLLBACK")
            }
            for job in ran { job.finish(commitError) }
        }
    }

    /// The result of one transaction's body, kept until its batch is committed.
    final class OutcomeBox<T: Sendable>: Sendable {
        private let value = Mutex<Result<T, any Error>?>(nil)
        func set(_ result: Result<T, any Error>) { value.withLock { $0 = result } }
        func get() -> Result<T, any Error>? { value.withLock { $0 } }
    }

    /// One SQLite connection with its statement cache. Not thread-safe by itself: the database hands it to one
    /// task at a time (the writer lock, the reader pool).
    final class Connection: DatabaseConnection, @unchecked Sendable {
        var dialect: SQLDialect { .sqlite }
        private var handle: OpaquePointer?
        private var statements: [String: Prepared] = [:]

        /// A statement compiled once per connection, with its result's column names read once.
        struct Prepared {
            let statement: OpaquePointer
            let columns: SQLColumns
        }

        init(path: String, readOnly: Bool) throws {
            let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
                | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
            let status = sqlite3_open_v2(path, &handle, flags, nil)
            guard status == SQLITE_OK else {
                let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "code \(status)"
                sqlite3_close(handle)
                throw StoreError.unavailable("cannot open SQLite database at \(path): \(message)")
            }
            // Another process (a `lanyard` command) may hold the write lock for a moment.
            sqlite3_busy_timeout(handle, 5000)
        }

        deinit { close() }

        func close() {
            for prepared in statements.values { sqlite3_finalize(prepared.statement) }
            statements = [:]
            if let handle { sqlite3_close(handle) }
            handle = nil
        }

        /// Replaces the hook SQLite calls after each commit with the pages in the log (SQLite's automatic
        /// checkpoints are such a hook, so this turns them off).
        func setWALHook(
            context: UnsafeMutableRawPointer,
            _ hook: @escaping @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32
        ) {
            sqlite3_wal_hook(handle, hook, context)
        }

        /// Copies what it can of the log into the database file without waiting for, or blocking, anyone.
        func checkpointPassively() {
            Self.checkpointPassively(handle)
        }

        /// The same, for a connection known only by its SQLite handle (as SQLite's log hook gives it).
        static func checkpointPassively(_ handle: OpaquePointer?) {
            sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }

        func execute(_ sql: String) throws {
            guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw error() }
        }

        /// A statement without parameters or rows that runs again and again (`BEGIN`, `SAVEPOINT`, `COMMIT`),
        /// compiled once like every other statement instead of on each run as `execute` does.
        func control(_ sql: String) throws {
            _ = try run(sql, [])
        }

        @discardableResult
        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            try run(sql, binds)
        }

        func run(_ sql: String, _ binds: [SQLValue]) throws -> [SQLRow] {
            let prepared = try prepare(sql)
            let statement = prepared.statement
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            for (index, value) in binds.enumerated() {
                let position = Int32(index + 1)
                let status: Int32 = switch value {
                case .null: sqlite3_bind_null(statement, position)
                case .integer(let number): sqlite3_bind_int64(statement, position, number)
                case .text(let text): sqlite3_bind_text(statement, position, text, -1, lanyard_sqlite_transient())
                case .blob(let bytes): bytes.withUnsafeBytes {
                    sqlite3_bind_blob(statement, position, $0.baseAddress, Int32($0.count), lanyard_sqlite_transient())
                }
                }
                guard status == SQLITE_OK else { throw error() }
            }
            var rows: [SQLRow] = []
            let columnCount = Int32(prepared.columns.names.count)
            while true {
                let status = sqlite3_step(statement)
                if status == SQLITE_DONE { break }
                guard status == SQLITE_ROW else { throw error(status) }
                var cells: [SQLValue] = []
                cells.reserveCapacity(Int(columnCount))
                for column in 0..<columnCount {
                    let cell: SQLValue = switch sqlite3_column_type(statement, column) {
                    case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                    case SQLITE_FLOAT: .integer(Int64(sqlite3_column_double(statement, column)))
                    case SQLITE_TEXT: .text(String(cString: sqlite3_column_text(statement, column)))
                    case SQLITE_BLOB: .blob(Array(UnsafeRawBufferPointer(
                        start: sqlite3_column_blob(statement, column), count: Int(sqlite3_column_bytes(statement, column)))))
                    default: .null
                    }
                    cells.append(cell)
                }
                rows.append(SQLRow(columns: prepared.columns, cells: cells))
            }
            return rows
        }

        private func prepare(_ sql: String) throws -> Prepared {
            if let prepared = statements[sql] { return prepared }
            var statement: OpaquePointer?
            guard sqlite3_prepare_v3(handle, Self.sqlitePlaceholders(sql), -1, UInt32(SQLITE_PREPARE_PERSISTENT),
                                     &statement, nil) == SQLITE_OK, let statement else { throw error() }
            let names = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
            let prepared = Prepared(statement: statement, columns: SQLColumns(names))
            statements[sql] = prepared
            return prepared
        }

        private func error(_ status: Int32? = nil) -> any Error {
            // Extended codes are C macro expressions Swift cannot import: SQLITE_CONSTRAINT_UNIQUE is
            // SQLITE_CONSTRAINT | 8 << 8, SQLITE_CONSTRAINT_PRIMARYKEY is SQLITE_CONSTRAINT | 6 << 8,
            // SQLITE_CONSTRAINT_NOTNULL is SQLITE_CONSTRAINT | 5 << 8, SQLITE_CONSTRAINT_FOREIGNKEY SQLITE_CONSTRAINT | 3 << 8.
            let code = status ?? sqlite3_extended_errcode(handle)
            switch code {
            case SQLITE_CONSTRAINT | 8 << 8, SQLITE_CONSTRAINT | 6 << 8: return StoreError.uniqueViolation
            case SQLITE_CONSTRAINT | 5 << 8: return StoreError.notNullViolation
            case SQLITE_CONSTRAINT | 3 << 8: return StoreError.foreignKeyViolation
            case _ where code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED: return StoreError.serializationFailure
            // The disk, the file or its folder failed Lanyard (full, read-only, unreadable), not the request.
            case _ where Self.storageFailures.contains(code & 0xFF):
                return StoreError.unavailable("SQLite: \(String(cString: sqlite3_errmsg(handle))) (code \(code))")
            default: return SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
            }
        }

        static let storageFailures: Set<Int32> = [SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM,
                                                   SQLITE_CORRUPT, SQLITE_NOTADB]

        /// `$1` → `?1`: SQLite's numbered placeholders bind by the same numbers PostgreSQL uses.
        static func sqlitePlaceholders(_ sql: String) -> String {
            var output = [UInt8]()
            output.reserveCapacity(sql.utf8.count)
            var previous: UInt8 = 0
            for byte in sql.utf8 {
                if previous == UInt8(ascii: "$"), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    output[output.count - 1] = UInt8(ascii: "?")
                }
                output.append(byte)
                previous = byte
            }
            return String(decoding: output, as: UTF8.self)
        }
    }

    /// Reader connections handed out one task at a time.
    actor ReaderPool {
        private var idle: [Connection]
        private var waiters: [CheckedContinuation<Connection, Never>] = []

        init(connections: [Connection]) {
            self.idle = connections
        }

        func acquire() async -> Connection {
            if let connection = idle.popLast() { return connection }
            return await withCheckedContinuation { waiters.append($0) }
        }

        func release(_ connection: Connection) {
            if waiters.isEmpty {
                idle.append(connection)
            } else {
                waiters.removeFirst().resume(returning: connection)
            }
        }

        func closeAll() {
            for connection in idle { connection.close() }
            idle = []
        }
    }
}

/// An SQLite failure the domain does not distinguish.
public struct SQLiteError: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public var description: String { "SQLite error \(code): \(message)" }
}
