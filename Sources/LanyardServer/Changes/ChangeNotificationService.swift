import Logging
import ServiceLifecycle

/// `ChangeNotifier`'s sending and listening as a service of the server's `ServiceGroup`: both end at graceful
/// shutdown (what is pending then is sent first).
struct ChangeNotificationService: Service {
    let notifier: ChangeNotifier
    let logger: Logger

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await notifier.sendPending(logger: logger) }
            group.addTask { await cancelWhenGracefulShutdown { await notifier.listen() } }
            try? await gracefulShutdown()
            notifier.finish()
        }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension ChangeNotificationService: CustomStringConvertible {
    var description: String { "ChangeNotificationService" }
}
