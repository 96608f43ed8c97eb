import Synchronization

/// What the PostgreSQL layer works out from a statement's text (whether it is a plain read, what a write
/// touches, how a batch of writes becomes one statement), remembered per text: Lanyard runs a few fixed
/// statements over and over, and working these out again on every request cost a tenth of a sign-in.
/// Bounded like `PreparedStatements`; past the bound they are worked out each time.
///
/// What remembering buys (paired against working them out every time, 3 rounds, c=64, PostgreSQL fsync on,
/// 2026-11-26): new sign-ins 2,036 a second against 1,372 with rate limits off (488 against 974 µs of server
/// CPU each) and 1,458 against 1,037 with them on; repeat sign-ins 2,547 against 2,147 and 1,903 against
/// 1,429; refreshes, a single fixed statement, within the noise.
final class StatementShapes: Sendable {
    static let capacity = 1024

    private struct Memory {
        var plainReads: [String: Bool] = [:]
        var targets: [String: WriteBatch.Target?] = [:]
        var batches: [WriteBatch.Shape: WriteBatch.Combined] = [:]
    }

    private let memory = Mutex(Memory())

    /// A `SELECT` that takes no row locks: the same before `BEGIN` as after it, at read committed.
    func isPlainRead(_ sql: String) -> Bool {
        remembered(\.plainReads, sql) { sql in
            let text = sql.uppercased()
            return text.drop(while: \.isWhitespace).hasPrefix("SELECT")
                && !text.contains(" FOR UPDATE") && !text.contains(" FOR SHARE")
                && !text.contains(" FOR NO KEY UPDATE") && !text.contains(" FOR KEY SHARE")
        }
    }

    func target(of sql: String) -> WriteBatch.Target? {
        remembered(\.targets, sql, WriteBatch.target(of:))
    }

    func statement(for batch: WriteBatch) -> (sql: String, binds: [SQLValue]) {
        guard batch.count > 1 else { return batch.statement() }
        return batch.statement(remembered(\.batches, batch.shape, WriteBatch.combine))
    }

    private func remembered<Key: Hashable & Sendable, Value: Sendable>(_ table: WritableKeyPath<Memory, [Key: Value]>, _ key: Key,
                                                  _ work: (Key) -> Value) -> Value {
        if let known = memory.withLock({ $0[keyPath: table][key] }) { return known }
        let value = work(key)
        memory.withLock { memory in
            if memory[keyPath: table].count < Self.capacity { memory[keyPath: table][key] = value }
        }
        return value
    }
}
