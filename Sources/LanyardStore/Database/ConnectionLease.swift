import PostgresNIO
import Synchronization

/// A pool connection a transaction takes only when it first sends a statement of its own. A PostgreSQL
/// transaction whose only writes are held back (`enqueueWrite`) never needs one: its commit is one
/// statement, which `GroupCommit` sends with other transactions' on a connection of its own.
final class ConnectionLease: Sendable {
    private enum State {
        case none
        case leased(PostgresConnection)
        /// A connection lent by the caller for a scope it ends itself (`PostgresDatabase.read`).
        case lent(PostgresConnection)
    }

    private let pool: PostgresPool?
    private let state: Mutex<State>

    /// A lease that takes a connection from `pool` when first asked for one.
    init(pool: PostgresPool) {
        self.pool = pool
        state = Mutex(.none)
    }

    /// A lease of a connection the caller already holds.
    init(lent connection: PostgresConnection) {
        pool = nil
        state = Mutex(.lent(connection))
    }

    /// The connection, taken from the pool on the first call. Calls come one at a time (a transaction's
    /// statements are sequential).
    func connection() async throws -> PostgresConnection {
        switch state.withLock({ $0 }) {
        case .leased(let connection), .lent(let connection): return connection
        case .none: break
        }
        guard let pool else { preconditionFailure("a lent lease always holds its connection") }
        let connection = try await pool.lease()
        state.withLock { $0 = .leased(connection) }
        return connection
    }

    /// Gives a taken connection back to the pool; it must be idle (no transaction open on it).
    func release() {
        let connection = state.withLock { state -> PostgresConnection? in
            guard case .leased(let connection) = state else { return nil }
            state = .none
            return connection
        }
        guard let connection, let pool else { return }
        pool.release(connection)
    }
}
