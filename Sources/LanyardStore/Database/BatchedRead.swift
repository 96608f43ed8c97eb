/// A read of one row set by key, which PostgreSQL batches with the reads of other keys arriving meanwhile
/// (`RequestBatcher`: a round trip costs far more than the rows) and SQLite, which reads in-process, sends alone
/// (waiting for company would only add latency).
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
