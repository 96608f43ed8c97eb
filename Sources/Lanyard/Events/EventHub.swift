import Foundation

/// Hands every event to every open `authEvents` stream, and keeps the current user so a new stream (and the
/// synchronous `user` property) can start from it.
final class EventHub: @unchecked Sendable {
    private let lock = NSLock()
    private var user: User?
    private var listeners: [UUID: AsyncStream<AuthEvent>.Continuation] = [:]

    init(user: User?) {
        self.user = user
    }

    var currentUser: User? {
        lock.withLock { user }
    }

    func stream() -> AsyncStream<AuthEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthEvent.self, bufferingPolicy: .unbounded)
        let id = UUID()
        lock.withLock {
            continuation.yield(.restored(user))
            listeners[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { _ = self?.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sets the user the client now holds and sends `events`, in order, to every stream.
    func update(user: User?, _ events: [AuthEvent]) {
        lock.withLock {
            self.user = user
            for event in events {
                for listener in listeners.values { listener.yield(event) }
            }
        }
    }

    deinit {
        for listener in listeners.values { listener.finish() }
    }
}
