import PostgresNIO
import Synchronization

/// The pool connection a PostgreSQL transaction runs its statements on. It goes back to the pool when the
/// transaction ends, or earlier, before a transaction that never began is committed by `GroupCommit` on a
/// connection of its own: a transaction holding one while it waits for that commit could leave none free.
///
/// Taken when the transaction starts. Taking it only at the transaction's first statement of its own (a
/// sign-in, whose writes are all held, would then never take one) bought nothing: paired, 3 rounds, c=64,
/// PostgreSQL fsync on, 2026-11-26, taken at the start against taken when first needed: new sign-ins 2,081
/// against 1,864 a second with rate limits off and 1,145 against 1,191 with them on, refreshes 2,584 against
/// 2,302 and 1,330 against 1,346.
final class ConnectionLease: Sendable {
    let connection: PostgresConnection
    /// Where the connection goes back; `nil` for one the caller lent and takes back itself.
    private let pool: PostgresPool?
    private let returned = Atomic(false)

    /// A connection from `pool` (waiting at most the pool's timeout).
    init(from pool: PostgresPool) async throws {
        connection = try await pool.lease()
        self.pool = pool
    }

    /// A connection the caller already holds, for a scope it ends itself (`PostgresDatabase.read`).
    init(lent connection: PostgresConnection) {
        self.connection = connection
        pool = nil
    }

    /// Gives a taken connection back to the pool, once; it must be idle (no transaction open on it).
    func release() {
        guard let pool, !returned.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pool.release(connection)
    }
}
