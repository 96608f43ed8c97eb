/// A read of one row set by key, which PostgreSQL batches with the reads of other keys arriving meanwhile
/// (`RequestBatcher`: a round trip costs far more than the rows) and SQLite, which reads in-process, sends alone
/// (waiting for company would only add latency).
///
/// What it buys (paired against each read sent alone, 3 rounds, c=64, PostgreSQL fsync on, 2026-11-26): with rate
/// limits off, `me` 6,088 a second against 3,080 (201 against 356 µs of server CPU each), repeat sign-ins 2,921
/// against 1,960, new sign-ins 2,244 against 1,617, refreshes 2,696 against 2,083; with limits on, `me` 5,037
/// against 2,443 and repeat sign-ins 1,570 against 1,040. Deadlines and cancellation: `RequestBatcher`'s.
public struct BatchedRead<Value: Sendable>: Sendable {
    /// Reads up to `BatchedKeys.maximum` distinct keys; a key left out reads as `nil`.
    public typealias Fetch = @Sendable (any DatabaseConnection, [String]) async throws -> [String: Value]

    private let database: any Database
    private let fetch: Fetch
    private let batcher: RequestBatcher<String, Value>?

    public init(database: any Database, fetch: @escaping Fetch) {
        self.database = database
        self.fetch = fetch
        batcher = BatchedKeys.batcher(on: database) { keys in
            try await database.read { connection in try await fetch(connection, keys) }
        }
    }

    /// Whether reads are batched (on PostgreSQL).
    public var isBatched: Bool { batcher != nil }

    public func read(_ key: String) async throws -> Value? {
        if let batcher { return try await batcher.run(key) }
        let fetch = self.fetch
        return try await database.read { connection in try await fetch(connection, [key])[key] }
    }
}
