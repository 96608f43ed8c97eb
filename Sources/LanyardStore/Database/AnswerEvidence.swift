import Synchronization

/// When the database last answered: a connection that came back from a query alive. `/readyz` trusts recent
/// evidence before it asks the database again, so an instance whose pool is merely busy is never reported down
/// (a ping queued behind that work would be).
final class AnswerEvidence: Sendable {
    private let origin = ContinuousClock.now
    /// Nanoseconds after `origin` of the last answer; -1 before the first.
    private let last = Atomic<Int64>(-1)

    func record() {
        let elapsed = (ContinuousClock.now - origin).components
        last.store(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000, ordering: .relaxed)
    }

    /// The last answer, or `nil` before the first.
    var lastAnswer: ContinuousClock.Instant? {
        let nanoseconds = last.load(ordering: .relaxed)
        return nanoseconds < 0 ? nil : origin + .nanoseconds(nanoseconds)
    }
}
