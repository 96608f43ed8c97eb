import LanyardStore
import Synchronization

/// `/readyz`'s judgement (reference section 8): whether this instance can serve, answered within a second, and
/// never "down" for an instance that is merely busy.
///
/// Evidence first: a database the pool knows to be unreachable is down at once (so a stopped PostgreSQL is
/// reported within moments); a query that succeeded within `evidenceWindow` means it answers. Only without
/// recent evidence is the database asked, on a connection of its own (`Database.ping`), and given
/// `pingDeadline` to answer.
struct Readiness: Sendable {
    let database: any Database

    static let evidenceWindow = Duration.seconds(3)
    static let pingDeadline = Duration.milliseconds(800)

    /// What the evidence says before anyone asks the database.
    enum Verdict: Equatable, Sendable {
        case ready, down, ask
    }

    static func verdict(reachable: Bool, lastAnswer: ContinuousClock.Instant?, now: ContinuousClock.Instant) -> Verdict {
        guard reachable else { return .down }
        if let lastAnswer, now - lastAnswer < evidenceWindow { return .ready }
        return .ask
    }

    func isReady() async -> Bool {
        switch Self.verdict(reachable: database.isReachable, lastAnswer: database.lastAnswer, now: .now) {
        case .ready: true
        case .down: false
        case .ask: await Self.firstAnswer(within: Self.pingDeadline) { [database] in (try? await database.ping()) != nil }
        }
    }

    /// `probe`'s answer, or `false` once `deadline` passed. Not a task group: it would wait for a probe stuck on
    /// an unresponsive server before answering.
    static func firstAnswer(within deadline: Duration, _ probe: @escaping @Sendable () async -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let answer = FirstAnswer(continuation)
            let probing = Task { answer.give(await probe()) }
            Task {
                try? await Task.sleep(for: deadline)
                answer.give(false)
                probing.cancel()
            }
        }
    }

    /// Resumes the check with whichever of the probe and the deadline answers first.
    private final class FirstAnswer: Sendable {
        private let waiting: Mutex<CheckedContinuation<Bool, Never>?>

        init(_ continuation: CheckedContinuation<Bool, Never>) {
            waiting = Mutex(continuation)
        }

        func give(_ ready: Bool) {
            let continuation = waiting.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }
            continuation?.resume(returning: ready)
        }
    }
}
