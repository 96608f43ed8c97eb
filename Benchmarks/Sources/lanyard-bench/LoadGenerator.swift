import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One request of a scenario, and whether its answer counts as a success.
struct BenchRequest: Sendable {
    var method: HTTPMethod
    var path: String
    var headers: [(String, String)] = []
    var body: [UInt8]?
}

/// A scenario hands each worker its next request and learns from each answer (e.g. a refresh chain).
protocol Scenario: Sendable {
    var name: String { get }
    /// The request for `iteration` (global, 0-based) on `worker`; `nil` when the scenario has run out.
    func request(worker: Int, iteration: Int) async -> BenchRequest?
    /// Called with every answer; returns whether it is a success.
    func record(worker: Int, status: UInt, body: ByteBuffer) async -> Bool
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
/// `count` requests were sent or `maxSeconds` passed. Only loopback targets are allowed.
struct LoadGenerator {
    let client: HTTPClient
    let baseURL: String
    let concurrency: Int
    let count: Int
    let maxSeconds: Double
    let serverPIDs: [Int32]

    final class Shared: @unchecked Sendable {
        let lock = NSLock()
        var next = 0
        var latencies: [Double] = []
        var ok = 0
        var errors = 0
        var firstErrors: [String] = []
    }

    func run(_ scenario: any Scenario) async -> (PhaseResult, Double?) {
        let shared = Shared()
        let deadline = ContinuousClock.now + .milliseconds(Int(maxSeconds * 1000))
        let sampler = RSSSampler(pids: serverPIDs)
        let sampling = Task { await sampler.run() }
        let start = ContinuousClock.now
        let cpuBefore = Self.processCPUSeconds()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    while ContinuousClock.now < deadline {
                        let iteration: Int = shared.lock.withLock {
                            defer { shared.next += 1 }
                            return shared.next
                        }
                        guard iteration < count, let spec = await scenario.request(worker: worker, iteration: iteration) else {
                            return
                        }
                        var request = HTTPClientRequest(url: baseURL + spec.path)
                        request.method = spec.method
                        for (name, value) in spec.headers { request.headers.add(name: name, value: value) }
                        if let body = spec.body {
                            request.headers.add(name: "Content-Type", value: "application/json")
                            request.body = .bytes(ByteBuffer(bytes: body))
                        }
                        let sent = ContinuousClock.now
                        do {
                            let response = try await client.execute(request, timeout: .seconds(30))
                            let body = try await response.body.collect(upTo: 1 << 20)
                            let elapsed = ContinuousClock.now - sent
                            let success = await scenario.record(worker: worker, status: response.status.code, body: body)
                            shared.lock.withLock {
                                if success {
                                    shared.ok += 1
                                    shared.latencies.append(elapsed.milliseconds)
                                } else {
                                    shared.errors += 1
                                    if shared.firstErrors.count < 3 {
                                        shared.firstErrors.append("\(response.status.code) \(String(buffer: body).prefix(200))")
                                    }
                                }
                            }
                        } catch {
                            shared.lock.withLock {
                                shared.errors += 1
                                if shared.firstErrors.count < 3 { shared.firstErrors.append("\(error)") }
                            }
                        }
                    }
                }
            }
        }
        let elapsed = (ContinuousClock.now - start).milliseconds / 1000
        let clientCPU = Self.processCPUSeconds() - cpuBefore
        sampling.cancel()
        let peak = await sampling.value
        let latencies = shared.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            let index = min(latencies.count - 1, max(0, Int((p / 100 * Double(latencies.count)).rounded(.up)) - 1))
            return latencies[index]
        }
        let result = PhaseResult(
            scenario: scenario.name, target: "", database: "", concurrency: concurrency,
            sent: shared.ok + shared.errors, ok: shared.ok, errors: shared.errors, elapsedSeconds: elapsed,
            requestsPerSecond: Double(shared.ok) / elapsed, p50Milliseconds: percentile(50),
            p99Milliseconds: percentile(99), p999Milliseconds: percentile(99.9), maxMilliseconds: latencies.last ?? .nan,
            serverPeakRSSMegabytes: peak,
            clientCPUMicrosecondsPerRequest: shared.ok + shared.errors > 0 ? clientCPU * 1e6 / Double(shared.ok + shared.errors) : nil,
            firstErrors: shared.firstErrors)
        return (result, peak)
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
