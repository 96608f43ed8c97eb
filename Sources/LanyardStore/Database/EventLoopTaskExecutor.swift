import NIOCore

/// Runs a task's jobs on one NIO event loop: the loop that owns a PostgreSQL connection. A transaction's
/// body runs there while it holds the connection, so each answer from PostgreSQL resumes it on the thread
/// that read the answer, instead of waking a thread of Swift's pool for it (and the loop again to send
/// the next statement): two thread switches per round trip saved.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
