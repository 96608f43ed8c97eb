import LanyardCore
import Logging
import ServiceLifecycle

/// Forgets, once an hour, the versions merges kept after 30 days and the challenges long expired
/// (`AccountMerges.forgetExpired`), and email flows a day past their end, idle mail-limit counters and mail
/// records older than 30 days (`EmailOutbox.forgetEnded`), as a service of the server's `ServiceGroup`.
struct MergeRetention: Service {
    let dependencies: CoreDependencies
    let logger: Logger

    func run() async throws {
        await repeatUntilShutdown(every: .seconds(3600), logger: logger, failure: "could not forget old merge and email data") {
            try await AccountMerges(dependencies).forgetExpired()
            try await EmailOutbox(dependencies).forgetEnded()
        }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension MergeRetention: CustomStringConvertible {
    var description: String { "MergeRetention" }
}
