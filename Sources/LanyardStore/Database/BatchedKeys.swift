/// The statements of a batched read (`BatchedRead`): the single-key query, and 2, 4, 8 or `maximum` copies of
/// it joined by `UNION ALL`, so a batched read has five statement texts whatever its size (each prepared once
/// per connection). A batch takes the smallest that holds it; its unused places hold an empty key, which
/// matches nothing.
///
/// Copies, not one `IN (…)` list: PostgreSQL plans each copy exactly like the single-key query. A plan for
/// `IN` with sixteen keys, cached while the tables were new, read them whole as they grew, until autovacuum
/// analyzed them again, where the single-key query kept its index lookups (step 35 in the history of BENCHMARKS.md).
public enum BatchedKeys {
    /// At most this many keys are read by one batched query.
    public static let maximum = 16

    /// Batches of one read sent at once, each on a connection of its own: two keep PostgreSQL busy and the
    /// batches full (1, 4 and 8 were measured too, step 33 in the history of BENCHMARKS.md).
    static let batchesInFlight = 2

    /// A batcher of these sizes where a round trip costs far more than the rows it carries (PostgreSQL); `nil`
    /// where statements run in-process (SQLite), and waiting for company would only add latency.
    static func batcher<Key, Value>(on database: any Database,
                                    _ run: @escaping RequestBatcher<Key, Value>.Run) -> RequestBatcher<Key, Value>? {
        switch database.dialect {
        case .sqlite: nil
        case .postgres: RequestBatcher(maximumBatch: maximum, maximumInFlight: batchesInFlight, run: run)
        }
    }

    /// A batched read's statements, by how many keys each holds.
    public struct Statements: Sendable {
        private let bySize: [(keys: Int, sql: String)]
        private let shared: Int

        /// `query` reads one key, the placeholder it is given; its rows come in the order `orderBy` gives, a
        /// column of its select list. `$1` to `$shared` are values the whole batch shares (every copy reads
        /// them); the keys' placeholders follow them.
        public init(orderBy: String, shared: Int = 0, _ query: (_ key: String) -> String) {
            var sizes = [1]
            while sizes.last! < BatchedKeys.maximum { sizes.append(min(sizes.last! * 2, BatchedKeys.maximum)) }
            bySize = sizes.map { size in
                guard size > 1 else { return (1, "\(query("$\(shared + 1)")) ORDER BY \(orderBy)") }
                let copies = (1...size).map { query("$\(shared + $0)") }.joined(separator: "\nUNION ALL\n")
                return (size, "SELECT * FROM (\(copies)) AS batch ORDER BY \(orderBy)")
            }
            self.shared = shared
        }

        /// The statement and its binds for `keys` (1 to `maximum`) and the values they share.
        func binding(_ keys: [String], shared values: [SQLValue] = []) -> (sql: String, binds: [SQLValue]) {
            precondition(!keys.isEmpty && keys.count <= BatchedKeys.maximum, "1 to \(BatchedKeys.maximum) keys")
            precondition(values.count == shared, "\(shared) shared values")
            let statement = bySize.first { $0.keys >= keys.count }!
            return (statement.sql, values + (0..<statement.keys).map { .text($0 < keys.count ? keys[$0] : "") })
        }
    }

    /// Runs a batched read and groups its rows by the key in `column`, each group in the result's order.
    static func rows(_ statements: Statements, keys: [String], shared: [SQLValue] = [], column: String,
                     on connection: any DatabaseConnection) async throws -> [String: [SQLRow]] {
        let (sql, binds) = statements.binding(keys, shared: shared)
        var rowsByKey: [String: [SQLRow]] = [:]
        for row in try await connection.query(sql, binds) { rowsByKey[try row.string(column), default: []].append(row) }
        return rowsByKey
    }
}
