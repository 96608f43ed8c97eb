import Foundation
import NIOHTTP1

/// One request of a scenario, and whether its answer counts as a success.
public struct BenchRequest: Sendable {
    public var method: HTTPMethod
    public var path: String
    public var headers: [(String, String)]
    public var body: [UInt8]?

    public init(method: HTTPMethod, path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// A scenario hands each worker its next request and learns from each answer (e.g. a refresh chain).
/// The load generator calls it from its one thread.
public protocol Scenario {
    var name: String { get }
    /// The request for `iteration` (global, 0-based) on `worker`; `nil` when the scenario has run out.
    func request(worker: Int, iteration: Int) -> BenchRequest?
    /// Called with every answer; returns whether it is a success.
    func record(worker: Int, status: UInt, body: [UInt8]) -> Bool
}

public struct PhaseResult: Codable, Sendable {
    public var scenario: String
    public var target: String
    public var database: String
    public var concurrency: Int
    public var sent: Int
    public var ok: Int
    public var errors: Int
    public var elapsedSeconds: Double
    public var requestsPerSecond: Double
    public var p50Milliseconds: Double
    public var p99Milliseconds: Double
    public var p999Milliseconds: Double
    public var maxMilliseconds: Double
    public var serverPeakRSSMegabytes: Double?
    /// CPU the load generator itself spent per request: it shares the machine's two cores with the server.
    public var clientCPUMicrosecondsPerRequest: Double?
    /// CPU the server's processes (with their children) spent per request sent.
    public var serverCPUMicrosecondsPerRequest: Double?
    /// CPU a separate database server's processes (PostgreSQL: the postmaster and its backends) spent per request.
    public var databaseCPUMicrosecondsPerRequest: Double?
    /// Set for the paired rounds that follow a run's sweep (`--round`); absent for the sweep's phases.
    public var round: Int?
    public var firstErrors: [String]

    public var line: String {
        let rss = serverPeakRSSMegabytes.map { String(format: "%.1f MB", $0) } ?? "n/a"
        func cpu(_ micros: Double?) -> String { micros.map { String(format: "%.0f µs", $0) } ?? "n/a" }
        var line = round.map { "round \($0): " } ?? ""
        line += String(format: "%@ %@ %@ c=%d: %.0f req/s  p50 %.2f ms  p99 %.2f ms  p99.9 %.2f ms  ok %d/%d  errors %d  peak RSS %@",
                          target, scenario, database, concurrency, requestsPerSecond, p50Milliseconds, p99Milliseconds,
                          p999Milliseconds, ok, sent, errors, rss)
        line += "  CPU/req: server \(cpu(serverCPUMicrosecondsPerRequest))"
        if databaseCPUMicrosecondsPerRequest != nil { line += ", database \(cpu(databaseCPUMicrosecondsPerRequest))" }
        return line + ", client \(cpu(clientCPUMicrosecondsPerRequest))"
    }
}

/// A closed loop: `concurrency` workers each send a request, wait for the answer, and send the next, until
/// `count` requests were sent or `maxSeconds` passed. Each worker is one keep-alive connection (reopened
/// when the server closes it); one thread drives them all with `poll`, so the generator takes as little as
/// possible of the CPU it shares with the server. Only loopback targets are allowed.
public struct LoadGenerator: Sendable {
    public let host: String
    public let port: UInt16
    public let concurrency: Int
    public let count: Int
    public let maxSeconds: Double
    public let serverPIDs: [Int32]
    public let databasePIDs: [Int32]

    public init(host: String, port: UInt16, concurrency: Int, count: Int, maxSeconds: Double,
                serverPIDs: [Int32] = [], databasePIDs: [Int32] = []) {
        self.host = host
        self.port = port
        self.concurrency = concurrency
        self.count = count
        self.maxSeconds = maxSeconds
        self.serverPIDs = serverPIDs
        self.databasePIDs = databasePIDs
    }

    public func run(_ scenario: some Scenario & Sendable) async -> PhaseResult {
        let sampler = RSSSampler(pids: serverPIDs)
        let sampling = Task { await sampler.run() }
        let cpuBefore = Self.processCPUSeconds()
        let serverBefore = ProcFS.cpuTimes(of: serverPIDs)
        let databaseBefore = ProcFS.cpuTimes(of: databasePIDs)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<PollDriver.Outcome, Never>) in
            let thread = Thread { [self] in
                let driver = PollDriver(host: host, port: port, concurrency: concurrency, count: count, maxSeconds: maxSeconds)
                continuation.resume(returning: driver.run(scenario))
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        let clientCPU = Self.processCPUSeconds() - cpuBefore
        let serverCPU = ProcFS.cpuSeconds(from: serverBefore, to: ProcFS.cpuTimes(of: serverPIDs))
        let databaseCPU = ProcFS.cpuSeconds(from: databaseBefore, to: ProcFS.cpuTimes(of: databasePIDs))
        sampling.cancel()
        let peak = await sampling.value
        let latencies = outcome.latencies.sorted()
        func percentile(_ p: Double) -> Double { Self.percentile(p, ofSorted: latencies) }
        let sent = outcome.ok + outcome.errors
        return PhaseResult(
            scenario: scenario.name, target: "", database: "", concurrency: concurrency,
            sent: sent, ok: outcome.ok, errors: outcome.errors, elapsedSeconds: outcome.elapsedSeconds,
            requestsPerSecond: Double(outcome.ok) / outcome.elapsedSeconds, p50Milliseconds: percentile(50),
            p99Milliseconds: percentile(99), p999Milliseconds: percentile(99.9), maxMilliseconds: latencies.last ?? .nan,
            serverPeakRSSMegabytes: peak,
            clientCPUMicrosecondsPerRequest: sent > 0 ? clientCPU * 1e6 / Double(sent) : nil,
            serverCPUMicrosecondsPerRequest: sent > 0 ? serverCPU.map { $0 * 1e6 / Double(sent) } : nil,
            databaseCPUMicrosecondsPerRequest: sent > 0 ? databaseCPU.map { $0 * 1e6 / Double(sent) } : nil,
            firstErrors: outcome.firstErrors)
    }
}

extension LoadGenerator {
    /// The nearest-rank percentile `p` (0–100] of ascending `values`: the smallest value that at least `p`%
    /// of them do not exceed. Not a number when there are none.
    public static func percentile(_ p: Double, ofSorted values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        // Less a hair, so that floating point's 99.9 / 100 × 1000 = 999.0000000000001 is rank 999, not 1000.
        let rank = Int((p / 100 * Double(values.count) - 1e-9).rounded(.up))
        return values[min(values.count - 1, max(0, rank - 1))]
    }

    /// User plus system CPU of this process so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
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
        let total = ProcFS.withChildren(pids).reduce(0.0) { $0 + (ProcFS.residentMegabytes($1) ?? 0) }
        peak = max(peak ?? 0, total)
    }
}

/// What `/proc` says about the processes under test (Linux).
public enum ProcFS {
    /// User plus system CPU seconds so far of each of `pids` and their children (all threads), by pid;
    /// empty when none could be read (no pids, or not on Linux).
    public static func cpuTimes(of pids: [Int32]) -> [Int32: Double] {
        var times: [Int32: Double] = [:]
        for pid in withChildren(pids) { times[pid] = cpuSeconds(of: pid) }
        return times
    }

    /// The CPU seconds spent between two readings by the processes alive at the second: all of a process's
    /// time if it started in between (a PostgreSQL autovacuum worker, say). One that ended in between is
    /// left out rather than subtracted: its time since the first reading went with it. `nil` when nothing
    /// could be read.
    public static func cpuSeconds(from before: [Int32: Double], to after: [Int32: Double]) -> Double? {
        after.isEmpty ? nil : after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
    }

    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = stat.lastIndex(of: ")") else { return nil }
        // Counted from the field after the command name (the state, field 3): utime is field 14, stime 15.
        let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    public static func residentMegabytes(_ pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kilobytes / 1024
        }
        return nil
    }

    static func withChildren(_ pids: [Int32]) -> [Int32] {
        pids + pids.flatMap(children)
    }

    static func children(_ pid: Int32) -> [Int32] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return [] }
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0) }
        }
    }
}
