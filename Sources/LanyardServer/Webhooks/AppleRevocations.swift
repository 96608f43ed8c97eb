import LanyardCore
import Logging
import ServiceLifecycle

/// Sends the Apple token revocations that account deletions and Apple unlinks owe (reference section 10), in every
/// instance, until Apple answers 200.
struct AppleRevocations: Service {
    let lifecycle: AppleLifecycle
    let pollInterval: Duration
    let logger: Logger

    func run() async throws {
        await repeatUntilShutdown(every: pollInterval, logger: logger, failure: "could not send Apple revocations") {
            try await lifecycle.revokeDue()
        }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension AppleRevocations: CustomStringConvertible {
    var description: String { "AppleRevocations" }
}
