import Foundation
import Hummingbird
import LanyardCore
import LanyardWire
import Prometheus
import Synchronization

/// Prometheus metrics for `/metrics`: request counts and latencies per route, sign-in outcomes.
public final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// Collectors by label set: the registry builds and sorts label strings on every lookup.
    private let requests = Mutex<[String: (Counter, DurationHistogram)]>([:])
    private let signIns = Mutex<[String: Counter]>([:])
    private let unavailable = Mutex<[String: Counter]>([:])
    private let webhookOutcomes = Mutex<[String: Counter]>([:])
    private let appleRedemptions = Mutex<[String: Counter]>([:])
    private let emailOutcomes = Mutex<[String: Counter]>([:])
    private let emailLatency: DurationHistogram
    private let webhookLatency: DurationHistogram
    private let webhookPending: Gauge
    private let databaseReachable: Gauge
    private let streamsOpen: Gauge
    private let openStreamCount = Atomic<Int>(0)
    private let streamEvents = Mutex<[String: Counter]>([:])
    private let streamCloses = Mutex<[String: Counter]>([:])
    private let streamLatency: DurationHistogram
    static let buckets: [Duration] = [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                                      .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
                                      .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5)]

    public init() {
        webhookLatency = registry.makeDurationHistogram(
            descriptor: .init(namespace: "lanyard", metricName: "webhook_attempt_duration", unitName: "seconds",
                              helpText: "Webhook delivery attempts, until the receiver answered or the attempt failed"),
            buckets: [.milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(1),
                      .seconds(5), .seconds(15)])
        emailLatency = registry.makeDurationHistogram(
            descriptor: .init(namespace: "lanyard", metricName: "email_attempt_duration", unitName: "seconds",
                              helpText: "Mail attempts, from connecting to the SMTP server until it accepted the mail or the attempt failed"),
            buckets: [.milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                      .seconds(1), .seconds(2.5), .seconds(5), .seconds(15), .seconds(30)])
        webhookPending = registry.makeGauge(descriptor: .init(namespace: "lanyard", metricName: "webhook_events_pending", unitName: "",
                                                              helpText: "Webhook events not delivered yet"))
        databaseReachable = registry.makeGauge(descriptor: .init(namespace: "lanyard", metricName: "database_reachable", unitName: "",
                                                                 helpText: "1 when the database answered the last attempt to reach it, else 0"))
        streamsOpen = registry.makeGauge(descriptor: .init(namespace: "lanyard", metricName: "streams_open", unitName: "",
                                                           helpText: "Change streams open on this instance"))
        streamLatency = registry.makeDurationHistogram(
            descriptor: .init(namespace: "lanyard", metricName: "stream_commit_to_send", unitName: "seconds",
                              helpText: "From a record's write to its change event's send, for changes a stream received live"),
            buckets: Self.buckets)
    }

    func streamOpened() { streamsOpen.set(Double(openStreamCount.add(1, ordering: .relaxed).newValue)) }

    /// `reason` is the `end` event's, or `disconnected` when the client went away or stopped reading.
    func streamClosed(reason: StreamEndReason?) {
        streamsOpen.set(Double(openStreamCount.subtract(1, ordering: .relaxed).newValue))
        let label = reason?.rawValue ?? "disconnected"
        Self.collector(label, in: streamCloses) {
            registry.makeCounter(descriptor: .init(namespace: "lanyard", metricName: "stream_closes", unitName: "total",
                                                   helpText: "Change streams closed, by reason"),
                                 labels: [("reason", label)])
        }.increment()
    }

    /// `change`, `ready`, `token_expiring` or `end`.
    func streamEvent(_ name: String) {
        Self.collector(name, in: streamEvents) {
            registry.makeCounter(descriptor: .init(namespace: "lanyard", metricName: "stream_events", unitName: "total",
                                                   helpText: "Events sent on change streams, by event"),
                                 labels: [("event", name)])
        }.increment()
    }

    func recordStreamLatency(_ seconds: TimeInterval) {
        streamLatency.record(.milliseconds(Int64(max(0, seconds) * 1000)))
    }

    func setDatabaseReachable(_ reachable: Bool) { databaseReachable.set(Double(reachable ? 1 : 0)) }

    func recordWebhookAttempt(duration: Duration) { webhookLatency.record(duration) }

    /// `sent`, `mailbox` (dev mode), `retry` or `failed`; `duration` of an SMTP attempt.
    func recordEmailOutcome(_ outcome: String, duration: Duration?) {
        if let duration { emailLatency.record(duration) }
        Self.collector(outcome, in: emailOutcomes) {
            registry.makeCounter(descriptor: .init(namespace: "lanyard", metricName: "email_attempts", unitName: "total",
                                                   helpText: "Mail delivery attempts by outcome"),
                                 labels: [("outcome", outcome)])
        }.increment()
    }

    func setPendingWebhooks(_ count: Int) { webhookPending.set(Double(count)) }

    /// `stored` or `failed`.
    func recordAppleCodeRedemption(_ outcome: String) {
        Self.collector(outcome, in: appleRedemptions) {
            registry.makeCounter(descriptor: .init(namespace: "lanyard", metricName: "apple_code_redemptions", unitName: "total",
                                                   helpText: "Apple authorization codes redeemed for refresh tokens, by outcome"),
                                 labels: [("outcome", outcome)])
        }.increment()
    }

    /// `delivered`, `retry` (failed, to be tried again) or `failed` (given up).
    func recordWebhookOutcome(_ outcome: String) {
        Self.collector(outcome, in: webhookOutcomes) {
            registry.makeCounter(descriptor: .init(namespace: "lanyard", metricName: "webhook_attempts", unitName: "total",
                                                   helpText: "Webhook delivery attempts by outcome"),
                                 labels: [("outcome", outcome)])
        }.increment()
    }

    /// `duration` is `nil` for a long-lived request: counted, not timed.
    func recordRequest(method: String, route: String, status: Int, duration: Duration?) {
        let (counter, histogram) = Self.collector("\(method) \(route) \(status)", in: requests) {
            (registry.makeCounter(descriptor: .init(namespace: "lanyard", metricName: "http_requests", unitName: "total",
                                                    helpText: "HTTP requests by route and status"),
                                  labels: [("method", method), ("route", route), ("status", String(status))]),
             registry.makeDurationHistogram(
                descriptor: .init(namespace: "lanyard", metricName: "http_request_duration", unitName: "seconds",
                                  helpText: "HTTP request latency by route"),
                labels: [("method", method), ("route", route)], buckets: Self.buckets))
        }
        counter.increment()
        if let duration { histogram.record(duration) }
    }

    /// `outcome` is `success` or an error code such as `INVALID_PROVIDER_TOKEN`.
    func recordSignIn(provider: String, outcome: String) {
        Self.collector("\(provider) \(outcome)", in: signIns) {
            registry.makeCounter(descriptor: .init(namespace: "lanyard", metricName: "signins", unitName: "total",
                                                   helpText: "Sign-in attempts by provider and outcome"),
                                 labels: [("provider", provider), ("outcome", outcome)])
        }.increment()
    }

    /// A `503` answered because something outside Lanyard failed; `cause` is `provider` (keys unreachable)
    /// or `database`.
    func recordUnavailable(cause: String) {
        Self.collector(cause, in: unavailable) {
            registry.makeCounter(descriptor: .init(namespace: "lanyard", metricName: "unavailable_responses", unitName: "total",
                                                   helpText: "503 answers by the outside fault that caused them"),
                                 labels: [("cause", cause)])
        }.increment()
    }

    /// Records a catalogued error's effect on the metrics.
    func record(_ error: LanyardError) {
        switch error.code {
        case .providerUnavailable: recordUnavailable(cause: "provider")
        case .serviceUnavailable: recordUnavailable(cause: "database")
        default: break
        }
    }

    /// The collectors cached under `key`, made on first use.
    private static func collector<Collectors: Sendable>(_ key: String, in cache: borrowing Mutex<[String: Collectors]>,
                                                        make: () -> Collectors) -> Collectors {
        cache.withLock { cache in
            if let found = cache[key] { return found }
            let made = make()
            cache[key] = made
            return made
        }
    }

    func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}

struct MetricsMiddleware: RouterMiddleware {
    typealias Context = LanyardRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // A long-poll's time is the client's choice, not the server's latency (a stream's body is written after
        // this returns, so it is not in it either).
        let duration: Duration? = ChangeRoutes.isLongPoll(request) ? nil : ContinuousClock.now - start
        metrics.recordRequest(method: request.method.rawValue, route: context.endpointPath ?? "unknown",
                              status: response.status.code, duration: duration)
        return response
    }
}
