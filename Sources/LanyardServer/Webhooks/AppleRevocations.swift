import LanyardCore
import Logging
import ServiceLifecycle

/// Sends the Apple token revocations that account deletions and Apple unlinks owe (DESIGN section 10), in every
/// instance, until Apple answers 200.
struct AppleRevocations: Service {
    let lifecycle: AppleLifecycle
    let pollInterval: Duration
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await lifecycle.revokeDue()
                } catch {
                    logger.warning("could not send Apple revocations", metadata: ["error": "\(String(describing: type(of: error)))"])
                }
                try await Task.sleep(for: pollInterval)
            }
        }
    }
}
