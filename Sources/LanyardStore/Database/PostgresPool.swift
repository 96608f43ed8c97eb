import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// A fixed number of PostgreSQL connections, opened at start, kept, and replaced as soon as they close.
///
/// Lanyard's own rather than postgres-nio's `PostgresClient` for what an operator needs when the database fails
/// (reference section 8). That client backs off its reconnects to a minute and then trips a breaker for another,
/// and lets a caller wait for a connection for as long as it takes. Here:
/// - a caller waits for a connection at most `timeout` (`LANYARD_DATABASE_TIMEOUT`), and not at all while
///   the server is known to be unreachable: it gets `StoreError.unavailable` (a 503) at once;
/// - a closed connection is replaced every `retryInterval` at most, one probe at a time while the server is
///   down, so requests succeed again within about that long of its return.
///
/// Idle connections are not pinged: a connection the server closed is seen closed when it is next handed
/// out, and skipped. A caller cancelled while it waits for a connection leaves at once with `CancellationError`.
///
/// `close` ends every connection the pool opened before it returns: idle ones at once, lent ones as they come
/// back (or, still out after `timeout`, under their holder). A connection freed open is dropped without a word
/// to the server, and postgres-nio asserts in debug builds that none is.
final class PostgresPool: Sendable {
    struct Settings: Sendable {
        var size: Int
        /// How long a caller waits for a connection.
        var timeout: Duration
        /// How long one connection attempt may take at start-up.
        var connectTimeout: Duration = .seconds(5)
        /// How long an attempt to replace a closed connection may take: no longer than a request waits, so one
        /// probe that meets a server still coming up does not hold back the next for long (reference section 8:
        /// requests succeed again within 5 s of the database's return).
        var probeTimeout: Duration = .seconds(2)
        /// The shortest time between two attempts to reach a server that refused the last one.
        var retryInterval: Duration = .milliseconds(250)
    }

    private struct Waiter {
        let id: Int
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<PostgresConnection, any Error>
    }

    private struct State {
        var idle: [PostgresConnection] = []
        /// Connections open: idle, lent, or being opened.
        var open = 0
        /// Every connection counted in `open` that is opened, by identity: what `close` ends if it does not come back.
        var connections: [ObjectIdentifier: PostgresConnection] = [:]
        var waiters: [Waiter] = []
        /// Why the last attempt to connect failed; `nil` while the server answers.
        var unreachable: String?
        var nextAttempt = ContinuousClock.now
        var closed = false

        /// Counts out a connection that closed or is no longer the pool's.
        mutating func countOut(_ connection: PostgresConnection) {
            open -= 1
            connections[ObjectIdentifier(connection)] = nil
        }
    }

    private let settings: Settings
    private let configuration: PostgresConnection.Configuration
    /// The same, with the shorter deadline of an attempt to replace a closed connection.
    private let probeConfiguration: PostgresConnection.Configuration
    private let logger: Logger
    private let state = Mutex(State())
    private let connectionIDs = Atomic<Int>(0)
    private let waiterIDs = Atomic<Int>(0)
    /// A connection that comes back open has answered its caller's queries.
    let evidence = AnswerEvidence()

    init(configuration: PostgresConnection.Configuration, settings: Settings, logger: Logger) {
        var configuration = configuration
        configuration.options.connectTimeout = Self.timeAmount(settings.connectTimeout)
        self.configuration = configuration
        configuration.options.connectTimeout = Self.timeAmount(min(settings.probeTimeout, settings.connectTimeout))
        self.probeConfiguration = configuration
        self.settings = settings
        self.logger = logger
    }

    /// Whether the last attempt to reach the server succeeded.
    var isReachable: Bool { state.withLock { $0.unreachable == nil } }

    /// Opens the connections; throws the first one's error when the server cannot be reached, so start-up fails
    /// with the reason. Connections after the first that fail to open are left to `maintain`.
    func open() async throws {
        let first = try await connectPooled()
        state.withLock { $0.open += 1 }
        release(first)
        await withDiscardingTaskGroup { group in
            for _ in 1..<settings.size {
                state.withLock { $0.open += 1 }
                group.addTask {
                    if let connection = try? await self.connectPooled() {
                        self.release(connection)
                    } else {
                        self.state.withLock { $0.open -= 1 }
                    }
                }
            }
        }
    }

    /// Replaces closed connections and gives up on waiters past their deadline, until cancelled.
    func maintain() async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                expireWaiters()
                if let attempts = attemptsDue() {
                    for _ in 0..<attempts {
                        group.addTask { await self.replaceConnection() }
                    }
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// A connection for the caller alone, until `release`.
    func lease() async throws -> PostgresConnection {
        let id = waiterIDs.add(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Step { case lend(PostgresConnection), fail(String), cancelled, wait }
                let step = state.withLock { state -> Step in
                    while let connection = state.idle.popLast() {
                        if !connection.isClosed { return .lend(connection) }
                        state.countOut(connection)
                    }
                    if state.closed { return .fail("the pool is closed") }
                    if let reason = state.unreachable { return .fail(reason) }
                    // Checked under the lock the cancellation handler takes: it finds this waiter, or none is added.
                    if Task.isCancelled { return .cancelled }
                    state.waiters.append(Waiter(id: id, deadline: .now + settings.timeout, continuation: continuation))
                    return .wait
                }
                switch step {
                case .lend(let connection): continuation.resume(returning: connection)
                case .fail(let reason): continuation.resume(throwing: StoreError.unavailable(reason))
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Takes back a connection from `lease`: handed to the longest waiter, kept idle, or, closed, counted out.
    /// Once the pool is closed it is closed, and counted out when it is (`close` waits for that).
    func release(_ connection: PostgresConnection) {
        let (waiter, close) = state.withLock { state -> (Waiter?, Bool) in
            if connection.isClosed {
                state.countOut(connection)
                return (nil, false)
            }
            if state.closed { return (nil, true) }
            if !state.waiters.isEmpty { return (state.waiters.removeFirst(), false) }
            state.idle.append(connection)
            return (nil, false)
        }
        if !connection.isClosed { evidence.record() }
        // The completion holds the connection until it is closed (postgres-nio asserts that none is freed open).
        if close { connection.close().whenComplete { _ in self.state.withLock { $0.countOut(connection) } } }
        waiter?.continuation.resume(returning: connection)
    }

    /// Runs `body` with a leased connection.
    func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await lease()
        defer { release(connection) }
        return try await body(connection)
    }

    /// Fails waiters and closes every connection: idle ones at once; lent ones, and ones being opened, as they
    /// come back (`release`), waited for at most `timeout`; then any still out, under their holders.
    func close() async {
        let (idle, waiters) = state.withLock { state in
            state.closed = true
            defer {
                for connection in state.idle { state.countOut(connection) }
                state.idle = []
                state.waiters = []
            }
            return (state.idle, state.waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: StoreError.unavailable("the pool is closed")) }
        for connection in idle { try? await connection.close() }
        let deadline = ContinuousClock.now + settings.timeout
        while state.withLock({ $0.open > 0 }), ContinuousClock.now < deadline {
            guard (try? await Task.sleep(for: .milliseconds(5))) != nil else { break }
        }
        let left = state.withLock { Array($0.connections.values) }
        if !left.isEmpty {
            logger.warning("database connections still in use at close, closed under their holders", metadata: [
                "connections": "\(left.count)"])
        }
        for connection in left { try? await connection.close() }
    }

    /// A connection outside the pool, for work that holds one for good (`LISTEN`); the caller closes it. None
    /// once the pool is closed.
    func dedicatedConnection() async throws -> PostgresConnection {
        if state.withLock({ $0.closed }) { throw StoreError.unavailable("the pool is closed") }
        return try await connect()
    }

    /// A connection of the pool's, known to `close` from the moment it is open.
    private func connectPooled(probe: Bool = false) async throws -> PostgresConnection {
        let connection = try await connect(probe: probe)
        state.withLock { $0.connections[ObjectIdentifier(connection)] = connection }
        return connection
    }

    private func connect(probe: Bool = false) async throws -> PostgresConnection {
        let id = connectionIDs.add(1, ordering: .relaxed).newValue
        return try await PostgresConnection.connect(on: PostgresConnection.defaultEventLoopGroup.next(),
                                                    configuration: probe ? probeConfiguration : configuration, id: id,
                                                    logger: logger)
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// How many connections to open now: every missing one while the server answers, one probe while it
    /// does not (and not before `retryInterval` since the last failure).
    private func attemptsDue() -> Int? {
        state.withLock { state -> Int? in
            // Closed idle connections are counted out here too, so a quiet pool is replenished.
            var kept: [PostgresConnection] = []
            for connection in state.idle {
                if connection.isClosed { state.countOut(connection) } else { kept.append(connection) }
            }
            state.idle = kept
            let missing = settings.size - state.open
            guard !state.closed, missing > 0, ContinuousClock.now >= state.nextAttempt else { return nil }
            let attempts = state.unreachable == nil ? missing : 1
            state.open += attempts
            // Attempts in flight hold the next ones back until they end.
            state.nextAttempt = .now + .seconds(3600)
            return attempts
        }
    }

    private func replaceConnection() async {
        do {
            let connection = try await connectPooled(probe: true)
            let recovered = state.withLock { state in
                defer {
                    state.unreachable = nil
                    state.nextAttempt = .now
                }
                return state.unreachable != nil
            }
            if recovered { logger.notice("database reachable again") }
            release(connection)
        } catch {
            let reason = Self.reason(error)
            let (newlyDown, waiters) = state.withLock { state in
                state.open -= 1
                state.nextAttempt = .now + settings.retryInterval
                defer {
                    state.unreachable = reason
                    // Nobody waits for a server that refuses connections.
                    state.waiters = []
                }
                return (state.unreachable == nil, state.waiters)
            }
            if newlyDown { logger.error("database unreachable", metadata: ["reason": "\(reason)"]) }
            for waiter in waiters { waiter.continuation.resume(throwing: StoreError.unavailable(reason)) }
        }
    }

    private func expireWaiters() {
        let now = ContinuousClock.now
        let expired = state.withLock { state -> [Waiter] in
            guard state.waiters.contains(where: { $0.deadline <= now }) else { return [] }
            let expired = state.waiters.filter { $0.deadline <= now }
            state.waiters.removeAll { $0.deadline <= now }
            return expired
        }
        for waiter in expired {
            waiter.continuation.resume(throwing: StoreError.unavailable("no connection free within \(settings.timeout)"))
        }
    }

    /// What went wrong, without the query or anything the server was sent.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let message = error.serverInfo?[.message] { return message }
        return error.underlying.map { String(describing: $0) } ?? "\(error.code)"
    }
}
