import LanyardCore
import Logging
import ServiceLifecycle

/// The Apple authorization codes sign-ins, links and re-authentications brought (reference section 10), redeemed
/// beside the API: the answer never waits for Apple. A bounded queue worked by this service, at most
/// `concurrency` redemptions at once: a burst of codes never piles up unowned tasks (past `capacity` waiting, a
/// code is dropped, counted and logged: the next one the app sends is tried), and graceful shutdown stops taking
/// codes and lets the redemptions under way finish.
final class AppleCodeRedemptions: Service, Sendable {
    struct Code: Sendable {
        var code: String
        var idToken: String
        var nonce: String?
    }

    static let capacity = 1000
    static let concurrency = 4

    private let lifecycle: AppleLifecycle
    private let metrics: ServerMetrics
    private let logger: Logger
    private let codes: AsyncStream<Code>
    private let waiting: AsyncStream<Code>.Continuation

    init(lifecycle: AppleLifecycle, metrics: ServerMetrics, logger: Logger) {
        (self.lifecycle, self.metrics, self.logger) = (lifecycle, metrics, logger)
        (codes, waiting) = AsyncStream.makeStream(of: Code.self, bufferingPolicy: .bufferingOldest(Self.capacity))
    }

    /// Queues a code; returns at once.
    func enqueue(_ code: Code) {
        if case .dropped = waiting.yield(code) {
            metrics.recordAppleCodeRedemption("dropped")
            logger.warning("too many Apple authorization codes waiting; one was dropped (the next one sent will be tried)")
        }
    }

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for await code in codes.cancelOnGracefulShutdown() {
                if running >= Self.concurrency {
                    await group.next()
                    running -= 1
                }
                group.addTask { await self.redeem(code) }
                running += 1
            }
            waiting.finish()
        }
    }

    private func redeem(_ code: Code) async {
        let redeemed = await lifecycle.redeem(code: code.code, idToken: code.idToken, nonce: code.nonce)
        metrics.recordAppleCodeRedemption(redeemed ? "stored" : "failed")
        if !redeemed { logger.warning("could not redeem an Apple authorization code; the next one sent will be tried") }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension AppleCodeRedemptions: CustomStringConvertible {
    var description: String { "AppleCodeRedemptions" }
}
