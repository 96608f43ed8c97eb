import Foundation
import LanyardSupport
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// PostgreSQL through a connection pool; several Lanyard instances may share one server.
public final class PostgresDatabase: Database {
    public let dialect = SQLDialect.postgres
    private let pool: PostgresPool
    /// The pool's maintenance, when the database runs it itself (`BackgroundWork.ownTask`).
    private let maintenance: Task<Void, Never>?
    private let logger: Logger
    /// Statement names, or `nil` when the URL says `prepared_statements=off`.
    private let statements: PreparedStatements?
    private let shapes = StatementShapes()
    private let groupCommit: GroupCommit
    /// The connection `ping` asks on, outside the pool; opened when first needed, replaced once closed, and
    /// none once the database is closed.
    private let probe = Mutex(Probe())

    private struct Probe {
        var connection: PostgresConnection?
        var closed = false
    }

    /// - Parameters:
    ///   - connections: the pool's fixed size; every connection is opened at start and kept (`PostgresPool`).
    ///   - timeout: how long a request waits for a connection before it is answered `SERVICE_UNAVAILABLE`
    ///     (`LANYARD_DATABASE_TIMEOUT`).
    ///   - background: who runs the pool's maintenance (`runBackgroundWork()`).
    public static func connect(_ location: DatabaseLocation.PostgresLocation, connections: Int, timeout: Duration = .seconds(2),
                               background: BackgroundWork = .ownTask, logger serverLogger: Logger) async throws -> PostgresDatabase {
        // PostgresNIO's trace prints the protocol's messages (the connection's cancel key, rows of personal data):
        // what it is given logs at debug at most, whatever the server's level.
        var logger = serverLogger
        if logger.logLevel < .debug { logger.logLevel = .debug }
        let configuration: PostgresConnection.Configuration
        if let directory = location.socketDirectory {
            configuration = PostgresConnection.Configuration(unixSocketPath: "\(directory)/.s.PGSQL.\(location.port)",
                                                             username: location.username, password: location.password,
                                                             database: location.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS = switch location.tlsMode {
            case "disable": .disable
            case "require": .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            default: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = PostgresConnection.Configuration(host: location.host, port: location.port, username: location.username,
                                                             password: location.password, database: location.database, tls: tls)
        }
        let pool = PostgresPool(configuration: configuration,
                                settings: .init(size: connections, timeout: timeout, connectTimeout: .seconds(10)), logger: logger)
        do {
            try await pool.open()
        } catch {
            throw StoreError.unavailable("cannot reach \(location.socketDirectory ?? location.host):\(location.port): "
                                         + PostgresPool.reason(error))
        }
        return PostgresDatabase(pool: pool, logger: logger, statements: location.preparedStatements ? .shared : nil,
                                background: background)
    }

    private init(pool: PostgresPool, logger: Logger, statements: PreparedStatements?, background: BackgroundWork) {
        self.statements = statements
        self.pool = pool
        self.logger = logger
        groupCommit = GroupCommit(shapes: shapes) { [shapes] body in
            try await Self.read(pool: pool, logger: logger, statements: statements, shapes: shapes, body)
        }
        maintenance = switch background {
        case .ownTask: Task { await pool.maintain() }
        case .runByOwner: nil
        }
    }

    /// `BEGIN` is sent only when the transaction first locks or writes: Lanyard's transactions run at read
    /// committed (said in each `BEGIN`, whatever the server's default), where each statement reads the latest
    /// committed rows whether or not a transaction is open, so plain reads before the first write mean the
    /// same outside one. With writes held back (`enqueueWrite`), a sign-in is then one atomic statement: no
    /// `BEGIN`, no `COMMIT`, committed with other transactions' (`GroupCommit`) after its connection went back
    /// to the pool (`ConnectionLease`).
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await Self.mappingErrors {
            let lease = try await ConnectionLease(from: pool)
            defer { lease.release() }
            let handle = Handle(lease: lease, logger: logger, statements: statements, shapes: shapes, groupCommit: groupCommit)
            do {
                let result = try await body(handle)
                try await handle.commit()
                return result
            } catch {
                await handle.rollback()
                throw error
            }
        }
    }

    /// A pool connection outside any transaction: PostgreSQL commits the statement on its own.
    public func autocommit<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await Self.read(pool: pool, logger: logger, statements: statements, shapes: shapes, body)
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await Self.read(pool: pool, logger: logger, statements: statements, shapes: shapes, body)
    }

    /// Runs `body` on a pool connection outside any transaction.
    private static func read<T: Sendable>(pool: PostgresPool, logger: Logger, statements: PreparedStatements?,
                                          shapes: StatementShapes,
                                          _ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await mappingErrors {
            try await pool.withConnection { connection in
                try await body(Handle(lease: ConnectionLease(lent: connection), logger: logger, statements: statements,
                                      shapes: shapes, groupCommit: nil))
            }
        }
    }

    public func ping() async throws {
        try await Self.mappingErrors {
            _ = try await probeConnection().query("SELECT 1", logger: logger)
        }
    }

    /// The probe connection, opened again when the server closed it. Two pings that both find it closed may both
    /// connect: the first to store its connection keeps it, the other closes its own, as does a ping that
    /// connected while the database closed.
    private func probeConnection() async throws -> PostgresConnection {
        if let open = probe.withLock({ $0.connection }), !open.isClosed { return open }
        let opened = try await pool.dedicatedConnection()
        let (kept, spare) = probe.withLock { probe -> (PostgresConnection?, PostgresConnection?) in
            if probe.closed { return (nil, opened) }
            if let existing = probe.connection, !existing.isClosed { return (existing, opened) }
            probe.connection = opened
            return (opened, nil)
        }
        if let spare { try? await spare.close() }
        guard let kept else { throw StoreError.unavailable("the database is closed") }
        return kept
    }

    public var isReachable: Bool { pool.isReachable }

    public var lastAnswer: ContinuousClock.Instant? { pool.evidence.lastAnswer }

    public func runBackgroundWork() async {
        await pool.maintain()
    }

    /// A connection of its own, outside the pool (`listen`).
    func dedicatedConnection() async throws -> PostgresConnection {
        try await pool.dedicatedConnection()
    }

    var notificationLogger: Logger { logger }

    public func close() async {
        maintenance?.cancel()
        _ = await maintenance?.value
        let connection = probe.withLock { probe in
            probe.closed = true
            defer { probe.connection = nil }
            return probe.connection
        }
        if let connection { try? await connection.close() }
        await pool.close()
    }

    private static func mappingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError {
            throw map(error)
        }
    }

    static func map(_ error: PSQLError) -> any Error {
        switch error.serverInfo?[.sqlState] {
        case "23505": StoreError.uniqueViolation
        case "23502": StoreError.notNullViolation
        case "23503": StoreError.foreignKeyViolation
        case "40001", "40P01": StoreError.serializationFailure
        // Shutting down, starting up, out of connections, or the connection broke: the server, not the request.
        case let state? where state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300":
            StoreError.unavailable(PostgresPool.reason(error))
        default:
            if error.code == .server { error } else { StoreError.unavailable(PostgresPool.reason(error)) }
        }
    }

    final class Handle: DatabaseConnection {
        let lease: ConnectionLease
        let logger: Logger
        let statements: PreparedStatements?
        let shapes: StatementShapes
        /// Where a transaction that never began commits its held writes; `nil` outside transactions.
        private let groupCommit: GroupCommit?
        private var inTransaction: Bool { groupCommit != nil }
        private let transaction = Mutex(TransactionState())
        var dialect: SQLDialect { .postgres }

        struct TransactionState {
            var begun = false
            var held = WriteBatch()
        }

        init(lease: ConnectionLease, logger: Logger, statements: PreparedStatements?, shapes: StatementShapes,
             groupCommit: GroupCommit?) {
            self.lease = lease
            self.shapes = shapes
            self.logger = logger
            self.statements = statements
            self.groupCommit = groupCommit
        }

        @discardableResult
        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            assert(Self.usesEveryBind(sql, binds), "a bind the statement does not use: \(sql)")
            if inTransaction {
                let mayRunFirst = shapes.isPlainRead(sql)
                // Held writes go first; a statement that locks or writes opens the transaction.
                let (begin, held) = transaction.withLock { state in
                    state.held.isEmpty && (state.begun || mayRunFirst) ? (false, nil) : takeHeld(&state)
                }
                try await send(begin: begin, held)
            }
            return try await run(sql, binds)
        }

        func enqueueWrite(_ sql: String, _ binds: [SQLValue]) async throws {
            guard inTransaction else {
                try await query(sql, binds)
                return
            }
            assert(Self.usesEveryBind(sql, binds), "a bind the statement does not use: \(sql)")
            let target = shapes.target(of: sql)
            // A write that depends on a held one goes in the next batch; the held ones run first, in a transaction.
            let (begin, held) = transaction.withLock { state in
                let earlier = state.held.accepts(target, binds: binds) ? (false, nil) : takeHeld(&state)
                state.held.append(sql, binds, target: target)
                return earlier
            }
            try await send(begin: begin, held)
        }

        /// PostgreSQL cannot type a parameter its statement never uses: a statement that relies on `WriteBatch`
        /// dropping one when combining fails when it is sent alone. Checked in debug builds (the tests).
        static func usesEveryBind(_ sql: String, _ binds: [SQLValue]) -> Bool {
            WriteBatch.renumber(sql, bindCount: binds.count, after: 0).used.count == binds.count
        }

        /// Sends the held writes. When no transaction was begun they are one statement, which commits
        /// atomically, with other transactions' (`GroupCommit`); the connection of any plain reads goes back first.
        func commit() async throws {
            let (begun, held) = transaction.withLock { state in
                defer { state.held = WriteBatch() }
                return (state.begun, state.held)
            }
            if !held.isEmpty, !begun, let groupCommit {
                lease.release()
                try await groupCommit.commit(held)
            } else if !held.isEmpty {
                // Still begun if this throws: `rollback` must end the transaction before the connection is reused.
                let statement = shapes.statement(for: held)
                try await run(statement.sql, statement.binds)
            }
            if begun { try await control("COMMIT") }
            transaction.withLock { $0 = TransactionState() }
        }

        func rollback() async {
            let begun = transaction.withLock { state in
                defer { state = TransactionState() }
                return state.begun
            }
            if begun { _ = try? await control("ROLLBACK") }
        }

        /// The held writes as one statement, and whether `BEGIN` must go first; the transaction counts as begun.
        private func takeHeld(_ state: inout TransactionState) -> (Bool, (sql: String, binds: [SQLValue])?) {
            let begin = !state.begun
            state.begun = true
            defer { state.held = WriteBatch() }
            return (begin, state.held.isEmpty ? nil : shapes.statement(for: state.held))
        }

        private func send(begin: Bool, _ held: (sql: String, binds: [SQLValue])?) async throws {
            if begin { try await control("BEGIN ISOLATION LEVEL READ COMMITTED") }
            if let held { try await run(held.sql, held.binds) }
        }

        @discardableResult
        private func run(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            var bindings = PostgresBindings(capacity: binds.count)
            var types: [PostgresDataType] = []
            types.reserveCapacity(binds.count)
            for value in binds {
                switch value {
                case .null: bindings.appendNull(); types.append(.null)
                case .integer(let number): bindings.append(number); types.append(.int8)
                case .text(let text): bindings.append(text); types.append(.text)
                case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes)); types.append(.bytea)
                }
            }
            do {
                var result: [SQLRow] = []
                if let statements, let name = statements.name(for: sql) {
                    let text = RuntimeStatement.Text(name: name, sql: sql, types: types)
                    do {
                        let connection = lease.connection
                        let rows = try await RuntimeStatement.$current.withValue(text) {
                            try await connection.execute(RuntimeStatement(bindings: bindings), logger: logger)
                        }
                        result = try await Self.rows(rows)
                    } catch let error as PSQLError {
                        statements.preparationFailed(sql, sqlState: error.serverInfo?[.sqlState])
                        throw error
                    }
                } else {
                    let rows = try await lease.connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
                    result = try await Self.rows(rows)
                }
                return result
            } catch let error as PSQLError {
                throw PostgresDatabase.map(error)
            }
        }

        static func rows<Rows: AsyncSequence>(_ rows: Rows) async throws -> [SQLRow] where Rows.Element == PostgresRow {
            var result: [SQLRow] = []
            var columns: SQLColumns?
            for try await row in rows {
                let names = columns ?? SQLColumns(row.map(\.columnName))
                columns = names
                result.append(SQLRow(columns: names, cells: try row.map(value(of:))))
            }
            return result
        }

        /// Transaction control: no parameters, nothing to plan, so never prepared.
        func control(_ sql: String) async throws {
            do {
                _ = try await lease.connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
            } catch let error as PSQLError {
                throw PostgresDatabase.map(error)
            }
        }

        static func value(of cell: PostgresCell) throws -> SQLValue {
            guard cell.bytes != nil else { return .null }
            switch cell.dataType {
            case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
            case .bool: return .bool(try cell.decode(Bool.self))
            case .bytea: return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
            case .float4, .float8, .numeric: return .integer(Int64(try cell.decode(Double.self)))
            default: return .text(try cell.decode(String.self))
            }
        }
    }
}
