import PostgresNIO
import Synchronization

/// A pool connection a transaction takes only when it first sends a statement of its own. A PostgreSQL
/// transaction whose only writes are held back (`enqueueWrite`) never needs one: its commit is one
/// statement, which `GroupCommit` sends with other transactions' on a connection of its own.
///
/// postgres-nio lends a connection only for the length of a closure, so the closure runs in a task of its
/// own and waits there until `release()`.
final class ConnectionLease: Sendable {
    private enum State {
        case none
        case leased(PostgresConnection, release: AsyncStream<Never>.Continuation)
        /// A connection lent by the caller for a scope it ends itself (`PostgresDatabase.read`).
        case lent(PostgresConnection)
    }

    private let client: PostgresClient?
    private let state: Mutex<State>
    /// The executor of the task that holds the lease, told which event loop to run on while it does.
    let executor: EventLoopTaskExecutor

    /// A lease that takes a connection from `client` when first asked for one.
    init(client: PostgresClient) {
        self.client = client
        state = Mutex(.none)
        executor = EventLoopTaskExecutor()
    }

    /// A lease of a connection the caller already holds.
    init(lent connection: PostgresConnection) {
        client = nil
        state = Mutex(.lent(connection))
        executor = EventLoopTaskExecutor(connection.eventLoop)
    }

    /// The connection, taken from the pool on the first call. Calls come one at a time (a transaction's
    /// statements are sequential).
    func connection() async throws -> PostgresConnection {
        switch state.withLock({ $0 }) {
        case .leased(let connection, _), .lent(let connection): return connection
        case .none: break
        }
        guard let client else { preconditionFailure("a lent lease always holds its connection") }
        let (released, release) = AsyncStream<Never>.makeStream()
        let connection: PostgresConnection = try await withCheckedThrowingContinuation { continuation in
            Task {
                var handedOver = false
                do {
                    try await client.withConnection { connection in
                        handedOver = true
                        continuation.resume(returning: connection)
                        for await _ in released {}
                    }
                } catch {
                    if !handedOver { continuation.resume(throwing: error) }
                }
            }
        }
        state.withLock { $0 = .leased(connection, release: release) }
        executor.bind(connection.eventLoop)
        return connection
    }

    /// Gives a taken connection back to the pool; it must be idle (no transaction open on it).
    func release() {
        let release = state.withLock { state -> AsyncStream<Never>.Continuation? in
            guard case .leased(_, let release) = state else { return nil }
            state = .none
            return release
        }
        guard let release else { return }
        executor.bind(nil)
        release.finish()
    }
}
