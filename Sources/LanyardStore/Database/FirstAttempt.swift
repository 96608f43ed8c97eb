import Synchronization

/// A value read before a transaction (batched with other requests' reads, say) for its first attempt only: a
/// retry after a conflict reads again, inside.
public final class FirstAttempt<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>

    public init(_ value: Value) {
        self.value = Mutex(value)
    }

    /// The value the first time, `nil` after.
    public func take() -> Value? {
        value.withLock { stored in
            defer { stored = nil }
            return stored
        }
    }
}
