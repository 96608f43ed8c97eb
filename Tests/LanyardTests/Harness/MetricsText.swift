/// Reading `/metrics` (Prometheus's text format) in tests.
enum MetricsText {
    /// The value of the sample named exactly `name` (labels included), if `metrics` has it.
    static func value(in metrics: String, _ name: String) -> Int? {
        metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    /// Whether every answer the server gave on `route` took at most `bound` seconds by its own clock (the request
    /// duration histogram's bucket `bound` holds them all). The server's clock, not the test's: the suite's
    /// parallel tests share the machine and may delay the test's own view of an answer by more than it took.
    static func allAnswered(in metrics: String, method: String, route: String, within bound: String) -> Bool {
        let bucket = "lanyard_http_request_duration_seconds_bucket{method=\"\(method)\",route=\"\(route)\",le="
        guard let within = value(in: metrics, bucket + "\"\(bound)\"}") else { return false }
        return within == value(in: metrics, bucket + "\"+Inf\"}")
    }
}
