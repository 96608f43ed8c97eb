import LanyardCore
import Logging
import ServiceLifecycle

/// Reads the signing keys again every few seconds, so a rotation made elsewhere (`lanyard keys rotate`, another
/// instance) is known here well before its publish delay ends and every instance switches keys at the same moment.
struct SigningKeyRefresher: Service {
    let keyRing: SigningKeyRing
    let interval: Duration
    let logger: Logger

    /// A tenth of the publish delay, between 1 and 10 seconds.
    static func interval(publishDelay: Double) -> Duration {
        .milliseconds(Int64(min(10, max(1, publishDelay / 10)) * 1000))
    }

    func run() async throws {
        await repeatUntilShutdown(every: interval, logger: logger, failure: "could not read the signing keys") {
            try await keyRing.reload()
        }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension SigningKeyRefresher: CustomStringConvertible {
    var description: String { "SigningKeyRefresher" }
}
