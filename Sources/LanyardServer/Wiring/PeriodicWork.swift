import Logging
import ServiceLifecycle

/// The loop of Lanyard's background services: `work`, then a pause of `interval`, until the server shuts down
/// (which ends the pause at once). A failed round is logged, with the error's type only, and the next one runs.
func repeatUntilShutdown(every interval: Duration, logger: Logger, failure: String,
                         _ work: @escaping @Sendable () async throws -> Void) async {
    try? await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                try await work()
            } catch {
                logger.warning("\(failure)", metadata: ["error": "\(String(describing: type(of: error)))"])
            }
            try await Task.sleep(for: interval)
        }
    }
}
