import AsyncHTTPClient
import Foundation
import LanyardCore
import LanyardStore
import LanyardSupport
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Delivers the outbox to `LANYARD_WEBHOOK_URL` (reference section 7), in every instance: each poll leases the due
/// events (each the oldest pending event of its account, so an account's events arrive in order), sends them
/// signed per Standard Webhooks, and records the outcome: 2xx delivered; anything else or no answer within 15 s
/// retried on `WebhookSchedule`, honouring `Retry-After`, then failed. Runs beside the API and never in a
/// request: a slow or failing receiver slows no API call.
struct WebhookDelivery: Service {
    /// Longer than an attempt, so a lease never ends while its attempt can still succeed.
    var lease: TimeInterval { max(30, attemptTimeout * 2) }
    static let batchSize = 16

    let url: String
    let secret: String
    let database: any Database
    let client: HTTPClient
    let clock: any LanyardClock
    let random: any RandomSource
    let pollInterval: Duration
    /// How long a receiver has to answer (`LanyardConfiguration.webhookTimeout`).
    let attemptTimeout: TimeInterval
    let metrics: ServerMetrics
    let logger: Logger

    func run() async throws {
        await repeatUntilShutdown(every: pollInterval, logger: logger, failure: "webhook delivery could not read the outbox") {
            try await deliverDue()
        }
    }

    /// One poll: lease what is due and attempt it, the batch's attempts at once.
    func deliverDue() async throws {
        let now = clock.now()
        let due = try await database.transaction { connection in
            try await WebhookStore(connection).claimDue(now: now, leaseEnd: now.addingTimeInterval(lease),
                                                        limit: Self.batchSize)
        }
        await withTaskGroup(of: Void.self) { group in
            for event in due { group.addTask { await attempt(event) } }
        }
        metrics.setPendingWebhooks(try await database.read { try await WebhookStore($0).pendingCount() })
    }

    private func attempt(_ event: WebhookEventRecord) async {
        let sentAt = clock.now()
        let start = ContinuousClock.now
        let (status, retryAfter, failure) = await send(event, at: sentAt)
        metrics.recordWebhookAttempt(duration: ContinuousClock.now - start)
        let delivered = status.map { (200..<300).contains($0) } ?? false
        // Counted from when the attempt was made, however long recording it takes.
        let retryAt = delivered ? nil : WebhookSchedule.nextAttempt(after: event.attempts + 1, at: sentAt,
                                                                   retryAfter: retryAfter, jitter: random.unitInterval())
        metrics.recordWebhookOutcome(delivered ? "delivered" : (retryAt == nil ? "failed" : "retry"))
        if !delivered {
            logger.notice("webhook attempt failed", metadata: [
                "webhook_id": "\(event.eventID)", "type": "\(event.type)", "attempt": "\(event.attempts + 1)",
                "status": "\(status.map(String.init) ?? "none")", "error": "\(failure ?? "")",
                "next_attempt": "\(retryAt.map(Timestamps.format) ?? "none: failed")"])
        }
        do {
            try await database.transaction { connection in
                try await WebhookStore(connection).recordAttempt(
                    id: event.id, at: sentAt, delivered: delivered, httpStatus: status,
                    error: delivered ? nil : (failure ?? status.map { "HTTP \($0)" }), retryAt: retryAt)
            }
        } catch {
            // The lease runs out and the event is attempted again: at least once.
            logger.warning("could not record a webhook attempt", metadata: ["webhook_id": "\(event.eventID)"])
        }
    }

    /// The receiver's status and `Retry-After` (seconds), or why there was none.
    private func send(_ event: WebhookEventRecord, at date: Date) async -> (Int?, TimeInterval?, String?) {
        let timestamp = date.unixSeconds
        guard let signature = WebhookSignature.sign(id: event.eventID, timestamp: timestamp, body: event.payload,
                                                    secret: secret) else { return (nil, nil, "the secret is not base64") }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Lanyard-Webhooks")
        request.headers.add(name: "webhook-id", value: event.eventID)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(name: "webhook-signature", value: signature)
        request.body = .bytes(ByteBuffer(string: event.payload))
        do {
            let response = try await client.execute(request, timeout: .milliseconds(Int64(attemptTimeout * 1000)))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            let retryAfter = response.headers.first(name: "Retry-After").flatMap { TimeInterval($0) }
            if (300..<400).contains(response.status.code) {
                // Signed deliveries go exactly where they were configured (the HTTP client follows no redirect).
                let target = response.headers.first(name: "Location") ?? "(no Location)"
                return (Int(response.status.code), retryAfter,
                        "HTTP \(response.status.code): a redirect is not followed; set LANYARD_WEBHOOK_URL to \(target.prefix(150))")
            }
            return (Int(response.status.code), retryAfter, nil)
        } catch {
            return (nil, nil, String(describing: error).prefix(200).description)
        }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension WebhookDelivery: CustomStringConvertible {
    var description: String { "WebhookDelivery" }
}
