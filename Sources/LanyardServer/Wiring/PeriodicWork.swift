import Logging
import ServiceLifecycle

/// The loop of Lanyard's background services: `work`, then a pause of `interval`, until the server shuts down
/// (which ends the pause at once). A failed round is logged, with the error's type only, and the next one runs;
/// while rounds keep failing (the database is down, say) only the first is a warning, and the first success
/// after them says so.
func repeatUntilShutdown(every interval: Duration, logger: Logger, failure: String,
                         _ work: @escaping @Sendable () async throws -> Void) async {
    try? await cancelWhenGracefulShutdown {
        var failing = false
        while !Task.isCancelled {
            do {
                try await work()
                if failing { logger.notice("\(failure): working again") }
                failing = false
            } catch {
                logger.log(level: failing ? .debug : .warning, "\(failure)",
                           metadata: ["error": "\(String(describing: type(of: error)))"])
                failing = true
            }
            try await Task.sleep(for: interval)
        }
    }
}
