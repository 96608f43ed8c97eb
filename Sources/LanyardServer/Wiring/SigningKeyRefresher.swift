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
        // Ends at once on graceful shutdown (a sleep would otherwise hold the shutdown for up to an interval).
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                do {
                    try await keyRing.reload()
                } catch {
                    logger.warning("could not read the signing keys", metadata: ["error": "\(String(describing: type(of: error)))"])
                }
            }
        }
    }
}
