import ArgumentParser
import Foundation
import LanyardStore
import LanyardSupport

/// `lanyard webhooks list|retry`: the outbox, on the configured database directly.
struct Webhooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Webhook deliveries (the outbox).",
                                                    subcommands: [List.self, Retry.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Events, newest first, with their delivery state.")
        @Flag(help: "Only events whose delivery failed for good") var failed = false
        @Option(help: "How many") var limit = 50
        @Flag(help: "Print JSON lines") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let events = try await runtime.database.read { try await WebhookStore($0).list(failedOnly: failed, limit: limit) }
                if json {
                    for event in events { try Output.jsonLine(WebhookLine(event)) }
                    return
                }
                Output.table(["WEBHOOK ID", "TYPE", "ACCOUNT", "CREATED", "STATUS", "ATTEMPTS", "LAST"], events.map { event in
                    [event.eventID, event.type, event.userID ?? "", Output.time(event.createdAt), event.status.rawValue,
                     String(event.attempts), event.lastError ?? event.lastStatus.map { "HTTP \($0)" } ?? ""]
                }, empty: failed ? "No failed deliveries." : "No webhook events.")
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Deliver a failed event again (now, then on the schedule).")
        @Argument(help: "The event's webhook id (msg_…)") var id: String

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let now = runtime.dependencies.clock.now()
                guard try await runtime.database.transaction({ try await WebhookStore($0).retry(eventID: id, at: now) }) else {
                    throw ValidationError("No delivered or failed event \(id).")
                }
                print("\(id) is pending again; a running instance delivers it within a second.")
            }
        }
    }

    struct WebhookLine: Encodable {
        let webhookID: String, type: String, userID: String?, createdAt: Date, status: String, attempts: Int
        let lastError: String?, lastStatus: Int?, deliveredAt: Date?, payload: String

        init(_ event: WebhookEventRecord) {
            (webhookID, type, userID, createdAt, status, attempts) =
                (event.eventID, event.type, event.userID, event.createdAt, event.status.rawValue, event.attempts)
            (lastError, lastStatus, deliveredAt, payload) = (event.lastError, event.lastStatus, event.deliveredAt, event.payload)
        }

        enum CodingKeys: String, CodingKey {
            case type, status, attempts, payload
            case webhookID = "webhook_id", userID = "user_id", createdAt = "created_at", lastError = "last_error"
            case lastStatus = "last_status", deliveredAt = "delivered_at"
        }
    }
}
