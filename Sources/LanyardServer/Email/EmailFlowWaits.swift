import Synchronization

/// The devices waiting in `POST /v1/auth/email/complete` (a long-poll), by flow: woken as soon as the flow's link
/// is confirmed on this instance, or on another when `ChangeNotifier` says so, the way change streams are woken.
/// A wait also ends at its timeout: the caller reads the flow again either way, so a lost wake-up only delays.
final class EmailFlowWaits: Sendable {
    private struct State {
        var waiting: [String: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        /// Waits cancelled before their continuation was registered.
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    func wake(_ flowIDs: [String]) {
        let woken = state.withLock { state in
            flowIDs.flatMap { state.waiting.removeValue(forKey: $0).map { Array($0.values) } ?? [] }
        }
        for continuation in woken { continuation.resume() }
    }

    func wait(for flowID: String, upTo timeout: Duration) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let resumeNow = self.state.withLock { state in
                            if state.cancelled.remove(id) != nil { return true }
                            state.waiting[flowID, default: [:]][id] = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                } onCancel: {
                    let continuation = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                        if let continuation = state.waiting[flowID]?.removeValue(forKey: id) {
                            if state.waiting[flowID]?.isEmpty == true { state.waiting[flowID] = nil }
                            return continuation
                        }
                        state.cancelled.insert(id)
                        return nil
                    }
                    continuation?.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}
