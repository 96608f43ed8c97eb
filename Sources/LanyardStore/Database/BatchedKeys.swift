/// The `IN (…)` list of a batched read (`ReadBatcher`). A list has one place or `maximum` places, so a batched
/// read has two statement texts whatever its size (each prepared once per connection); the unused places of
/// a full list repeat a key, which `IN` ignores.
public enum BatchedKeys {
    /// At most this many keys are read by one batched query.
    public static let maximum = 16

    /// Batches of one read sent at once, each on a connection of its own: two keep PostgreSQL busy and the
    /// batches full (1, 4 and 8 were measured too, BENCHMARKS.md step 33).
    static let batchesInFlight = 2

    /// A batched read's two statements: `query` given the list for one key, and given the list for `maximum`.
    public struct Statements: Sendable {
        let one: String
        let many: String

        public init(_ query: (_ list: String) -> String) {
            one = query("$1")
            many = query((1...BatchedKeys.maximum).map { "$\($0)" }.joined(separator: ", "))
        }

        /// The statement and its binds for `keys` (1 to `maximum`).
        func binding(_ keys: [String]) -> (sql: String, binds: [SQLValue]) {
            precondition(!keys.isEmpty && keys.count <= BatchedKeys.maximum, "1 to \(BatchedKeys.maximum) keys")
            guard keys.count > 1 else { return (one, [.text(keys[0])]) }
            return (many, (0..<BatchedKeys.maximum).map { .text(keys[min($0, keys.count - 1)]) })
        }
    }

    /// Runs a batched read and groups its rows by the key in `column`, each group in the result's order.
    static func rows(_ statements: Statements, keys: [String], column: String,
                     on connection: any DatabaseConnection) async throws -> [String: [SQLRow]] {
        let (sql, binds) = statements.binding(keys)
        var rowsByKey: [String: [SQLRow]] = [:]
        for row in try await connection.query(sql, binds) { rowsByKey[try row.string(column), default: []].append(row) }
        return rowsByKey
    }
}
