import NIOCore
import Synchronization

/// Runs a task's jobs on one NIO event loop: the loop that owns a PostgreSQL connection. A transaction's
/// body runs there while it holds the connection, so each answer from PostgreSQL resumes it on the thread
/// that read the answer, instead of waking a thread of Swift's pool for it (and the loop again to send
/// the next statement): two thread switches per round trip saved.
///
/// A transaction takes its connection only when it first sends a statement of its own (`ConnectionLease`),
/// so its executor learns the loop then (`bind`); until then, and after the connection goes back, its jobs
/// run on Swift's global executor.
final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: Mutex<(any EventLoop)?>

    init(_ eventLoop: (any EventLoop)? = nil) {
        self.eventLoop = Mutex(eventLoop)
    }

    /// Runs the jobs from now on on `eventLoop`, or on the global executor when `nil`.
    func bind(_ eventLoop: (any EventLoop)?) {
        self.eventLoop.withLock { $0 = eventLoop }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        guard let eventLoop = eventLoop.withLock({ $0 }) else {
            globalConcurrentExecutor.enqueue(job)
            return
        }
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
