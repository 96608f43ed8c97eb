/// Reading `/metrics` (Prometheus's text format) in tests.
enum MetricsText {
    /// The value of the sample named exactly `name` (labels included), if `metrics` has it.
    static func value(in metrics: String, _ name: String) -> Int? {
        metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }
    }
}
