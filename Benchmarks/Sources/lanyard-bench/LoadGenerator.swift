import Foundation
import NIOHTTP1

/// One request of a scenario, and whether its answer counts as a success.
struct BenchRequest: Sendable {
    var method: HTTPMethod
    var path: String
    var headers: [(String, String)] = []
    var body: [UInt8]?
}

/// A scenario hands each worker its next request and learns from each answer (e.g. a refresh chain).
/// The load generator calls it from its one thread.
protocol Scenario {
    var name: String { get }
    /// The request for `iteration` (global, 0-based) on `worker`; `nil` when the scenario has run out.
    func request(worker: Int, iteration: Int) -> BenchRequest?
    /// Called with every answer; returns whether it is a success.
    func record(worker: Int, status: UInt, body: [UInt8]) -> Bool
}

struct PhaseResult: Codable, Sendable {
    var scenario: String
    var target: String
    var database: String
    var concurrency: Int
    var sent: Int
    var ok: Int
    var errors: Int
    var elapsedSeconds: Double
    var requestsPerSecond: Double
    var p50Milliseconds: Double
    var p99Milliseconds: Double
    var p999Milliseconds: Double
    var maxMilliseconds: Double
    var serverPeakRSSMegabytes: Double?
    /// CPU the load generator itself spent per request: it shares the machine's two cores with the server.
    var clientCPUMicrosecondsPerRequest: Double?
    var firstErrors: [String]

    var line: String {
        let rss = serverPeakRSSMegabytes.map { String(format: "%.1f MB", $0) } ?? "n/a"
        let client = clientCPUMicrosecondsPerRequest.map { String(format: "%.0f µs", $0) } ?? "n/a"
        return String(format: "%@ %@ %@ c=%d: %.0f req/s  p50 %.2f ms  p99 %.2f ms  p99.9 %.2f ms  ok %d/%d  errors %d  peak RSS %@  client CPU/req %@",
                      target, scenario, database, concurrency, requestsPerSecond, p50Milliseconds, p99Milliseconds,
                      p999Milliseconds, ok, sent, errors, rss, client)
    }
}

/// A closed loop: `concurrency` workers each send a request, wait for the answer, and send the next, until
/// `count` requests were sent or `maxSeconds` passed. Each worker is one keep-alive connection (reopened
/// when the server closes it); one thread drives them all with `poll`, so the generator takes as little as
/// possible of the CPU it shares with the server. Only loopback targets are allowed.
struct LoadGenerator {
    let host: String
    let port: UInt16
    let concurrency: Int
    let count: Int
    let maxSeconds: Double
    let serverPIDs: [Int32]

    func run(_ scenario: some Scenario & Sendable) async -> PhaseResult {
        let sampler = RSSSampler(pids: serverPIDs)
        let sampling = Task { await sampler.run() }
        let cpuBefore = Self.processCPUSeconds()
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<PollDriver.Outcome, Never>) in
            let thread = Thread { [self] in
                let driver = PollDriver(host: host, port: port, concurrency: concurrency, count: count, maxSeconds: maxSeconds)
                continuation.resume(returning: driver.run(scenario))
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        let clientCPU = Self.processCPUSeconds() - cpuBefore
        sampling.cancel()
        let peak = await sampling.value
        let latencies = outcome.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            let index = min(latencies.count - 1, max(0, Int((p / 100 * Double(latencies.count)).rounded(.up)) - 1))
            return latencies[index]
        }
        let sent = outcome.ok + outcome.errors
        return PhaseResult(
            scenario: scenario.name, target: "", database: "", concurrency: concurrency,
            sent: sent, ok: outcome.ok, errors: outcome.errors, elapsedSeconds: outcome.elapsedSeconds,
            requestsPerSecond: Double(outcome.ok) / outcome.elapsedSeconds, p50Milliseconds: percentile(50),
            p99Milliseconds: percentile(99), p999Milliseconds: percentile(99.9), maxMilliseconds: latencies.last ?? .nan,
            serverPeakRSSMegabytes: peak,
            clientCPUMicrosecondsPerRequest: sent > 0 ? clientCPU * 1e6 / Double(sent) : nil,
            firstErrors: outcome.firstErrors)
    }
}

extension LoadGenerator {
    /// User plus system CPU of this process so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}

/// Samples the resident memory of the server's processes (and their children) every 50 ms.
actor RSSSampler {
    let pids: [Int32]
    var peak: Double?

    init(pids: [Int32]) {
        self.pids = pids
    }

    func run() async -> Double? {
        while !Task.isCancelled {
            sample()
            try? await Task.sleep(for: .milliseconds(50))
        }
        sample()
        return peak
    }

    private func sample() {
        guard !pids.isEmpty else { return }
        var total = 0.0
        for pid in pids + pids.flatMap(Self.children) {
            total += Self.residentMegabytes(pid) ?? 0
        }
        peak = max(peak ?? 0, total)
    }

    static func residentMegabytes(_ pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kilobytes / 1024
        }
        return nil
    }

    static func children(_ pid: Int32) -> [Int32] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return [] }
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0) }
        }
    }
}
