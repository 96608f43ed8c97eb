import Synchronization

/// Coalesces concurrent keyed requests into batches: the request that finds fewer than `maximumInFlight`
/// batches running sends at once, with every key waiting at that moment; requests that arrive while the
/// batches are full wait for the next one, which is sent as soon as one returns. Alone, a request is sent at
/// once and waits for nothing; under load, one statement answers many requests.
///
/// This is group commit, for point reads (`BatchedRead`) and for idempotent writes (`RefreshRotations`). On
/// PostgreSQL every statement costs a round trip, two thread wake-ups on our side and executor start-up on the
/// server's, whatever it does; a batch pays them once. A batch is sent after every request in it arrived, so a
/// batched read is as fresh as the same read sent alone.
///
/// Deadlines and cancellation: a batch waits for a connection like any request (`LANYARD_DATABASE_TIMEOUT`) and
/// each request in it gets the batch's outcome, so a request waits at most for the batches ahead of it and its
/// own. A request cancelled while it waits for a place leaves at once with `CancellationError`, and is not sent;
/// once its batch is sent it waits for the answer, as a statement already sent does (`PostgresPool`).
public final class RequestBatcher<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    public typealias Run = @Sendable ([Key]) async throws -> [Key: Value]

    private struct Waiter {
        let id: Int
        let key: Key
        let continuation: CheckedContinuation<Value?, any Error>
    }

    private struct State {
        var waiting: [Waiter] = []
        var inFlight = 0
    }

    public let maximumBatch: Int
    public let maximumInFlight: Int
    private let runBatch: Run
    private let state = Mutex(State())
    private let waiterIDs = Atomic<Int>(0)

    /// `run` answers a batch of distinct keys (at most `maximumBatch`); a key it leaves out is answered `nil`.
    public init(maximumBatch: Int, maximumInFlight: Int, run: @escaping Run) {
        precondition(maximumBatch > 0 && maximumInFlight > 0, "a batch and the batches in flight hold at least one")
        self.maximumBatch = maximumBatch
        self.maximumInFlight = maximumInFlight
        self.runBatch = run
    }

    /// The answer for `key`, run in a batch with whatever else is waiting.
    public func run(_ key: Key) async throws -> Value? {
        let id = waiterIDs.add(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let leads = state.withLock { state -> Bool? in
                    // Checked under the lock the cancellation handler takes: either it finds this waiter, or the
                    // waiter is never added.
                    guard !Task.isCancelled else { return nil }
                    state.waiting.append(Waiter(id: id, key: key, continuation: continuation))
                    guard state.inFlight < maximumInFlight else { return false }
                    state.inFlight += 1
                    return true
                }
                switch leads {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: Task { await self.lead() }
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Requests waiting for a place in a batch (for tests).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Sends batches until nobody is waiting, then gives its place in flight back.
    private func lead() async {
        while true {
            let batch = state.withLock { state -> [Waiter] in
                let batch = takeBatch(from: &state.waiting)
                if batch.isEmpty { state.inFlight -= 1 }
                return batch
            }
            if batch.isEmpty { return }
            await send(batch)
        }
    }

    /// The oldest waiters whose keys fit in one batch; waiters for a key already in it ride along.
    private func takeBatch(from waiting: inout [Waiter]) -> [Waiter] {
        var keys = Set<Key>()
        var taken: [Waiter] = []
        var left: [Waiter] = []
        for waiter in waiting {
            if keys.contains(waiter.key) || keys.count < maximumBatch {
                keys.insert(waiter.key)
                taken.append(waiter)
            } else {
                left.append(waiter)
            }
        }
        waiting = left
        return taken
    }

    private func send(_ batch: [Waiter]) async {
        var keys: [Key] = []
        var seen = Set<Key>()
        for waiter in batch where seen.insert(waiter.key).inserted { keys.append(waiter.key) }
        do {
            let values = try await runBatch(keys)
            for waiter in batch { waiter.continuation.resume(returning: values[waiter.key]) }
        } catch {
            for waiter in batch { waiter.continuation.resume(throwing: error) }
        }
    }
}
