import ArgumentParser
import AsyncHTTPClient
import Foundation
import LanyardBenchKit
import NIOCore
import Synchronization

/// The change stream's costs (BENCHMARKS.md, "Live changes"): commit-to-event latency, the server's memory per idle
/// stream, and write throughput with streams open against none. Writes go through `--base`; the watched stream is
/// on `--stream-base` (another instance on the same PostgreSQL for the cross-instance figure).
struct Streams: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change streams: latency, memory per stream, writes with streams open.")

    @Option(help: "The instance that takes the writes") var base: String = "http://127.0.0.1:8711"
    @Option(help: "The instance the watched stream reads (default: --base)") var streamBase: String?
    @Option(help: "A label for the results, e.g. sqlite or postgres") var database: String = "sqlite"
    @Option(help: "Pid of the server whose memory is measured (the one holding the idle streams)") var serverPid: Int32
    @Option(help: "Idle streams to open, each on an account of its own") var idle: Int = 1000
    @Option(help: "Latency samples") var samples: Int = 300
    @Option(help: "Seconds of writes in each throughput phase") var writeSeconds: Double = 10
    @Option(help: "Concurrent writers") var writers: Int = 16
    @Option(help: "The fake IdP's keys folder (apple.pem, google.pem)") var keysDirectory: String
    @Option(help: "The fake IdP, for the kids of its keys") var idp: String = "http://127.0.0.1:8702"
    @Option(help: "Append results here as JSON lines") var json: String?

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = idle + 256
        configuration.timeout.connect = .seconds(30)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        defer { _ = client.shutdown() }
        let (google, apple) = try await TokenFactory.fakeProviders(keysDirectory: keysDirectory, idp: idp, client: client)
        let setup = Setup(client: client, base: base, target: .lanyard, apple: apple, google: google)
        let run = String(UUID().uuidString.prefix(8)).lowercased()

        // The accounts of the idle streams, and the memory before they open.
        let accounts = try await setup.signInMany(google, count: idle, concurrency: 64) { "stream-\(run)-\($0)" }
        try await Task.sleep(for: .seconds(1))
        let before = ProcFS.residentMegabytes(serverPid) ?? 0
        let streams = StreamSet(client: client)
        try await streams.open(base: base, tokens: accounts)
        try await Task.sleep(for: .seconds(2))
        let after = ProcFS.residentMegabytes(serverPid) ?? 0
        let kibPerStream = (after - before) * 1024 / Double(max(idle, 1))
        print(String(format: "%d idle streams: server %.1f → %.1f MB, %.1f KiB per stream", idle, before, after, kibPerStream))

        // Commit-to-event latency: a write through --base, the event on a stream at --stream-base.
        let latencies = try await latency(setup: setup, google: google, run: run, client: client)
        let p50 = percentile(latencies, 0.50), p99 = percentile(latencies, 0.99)
        print(String(format: "commit-to-event (%@ → %@): p50 %.1f ms, p99 %.1f ms over %d writes", base, streamBase ?? base,
                     p50, p99, latencies.count))

        // Writes to the streams' own accounts (each wakes its stream, which reads and sends the change), then the
        // same with every stream closed.
        let (withStreams, cpuWith) = try await writes(client: client, tokens: accounts)
        let delivered = streams.changesReceived
        await streams.closeAll()
        try await Task.sleep(for: .seconds(2))
        let (withoutStreams, cpuWithout) = try await writes(client: client, tokens: accounts)
        print(String(format: "writes: %.0f/s with %d streams open (%d changes delivered; server %.0f µs CPU per write), "
                     + "%.0f/s with none (%.0f µs)", withStreams, idle, delivered, cpuWith, withoutStreams, cpuWithout))
        if let json {
            let line: [String: Any] = [
                "kind": "streams", "database": database, "idle_streams": idle, "server_rss_before_mb": before,
                "server_rss_after_mb": after, "kib_per_idle_stream": kibPerStream, "cross_instance": streamBase != nil,
                "latency_p50_ms": p50, "latency_p99_ms": p99, "latency_samples": latencies.count,
                "writes_per_second_with_streams": withStreams, "writes_per_second_without": withoutStreams,
                "changes_delivered": delivered, "server_cpu_us_per_write_with_streams": cpuWith,
                "server_cpu_us_per_write_without": cpuWithout,
            ]
            try appendLine(try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), to: json)
        }
    }

    private func latency(setup: Setup, google: TokenFactory, run: String, client: HTTPClient) async throws -> [Double] {
        let sub = "watched-\(run)"
        guard let writer = Target.lanyard.sessionToken(from: try await setup.signIn(google, sub: sub)),
              let reader = Target.lanyard.sessionToken(from: try await setup.signIn(google, sub: sub)) else {
            throw BenchError("no session token")
        }
        let watched = StreamSet(client: client)
        try await watched.open(base: streamBase ?? base, tokens: [reader])
        var latencies: [Double] = []
        for sample in 0..<samples {
            let seen = watched.changesReceived
            let start = ContinuousClock.now
            try await put(client: client, token: writer, id: "latency", value: sample)
            while watched.changesReceived == seen {
                guard ContinuousClock.now - start < .seconds(10) else { throw BenchError("no event within 10 s") }
                try await Task.sleep(for: .microseconds(200))
            }
            latencies.append(Double((ContinuousClock.now - start).components.attoseconds) / 1e15
                             + Double((ContinuousClock.now - start).components.seconds) * 1000)
        }
        await watched.closeAll()
        return latencies
    }

    /// Writes per second by `writers` concurrent writers for `writeSeconds`, each to the next account of `tokens`,
    /// and the server's CPU per write (its own process: the stream work counts, the load generator's does not).
    private func writes(client: HTTPClient, tokens: [String]) async throws -> (Double, Double) {
        let cpuBefore = ProcFS.cpuTimes(of: [serverPid])
        let deadline = ContinuousClock.now + .milliseconds(Int64(writeSeconds * 1000))
        let start = ContinuousClock.now
        let count = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<writers {
                group.addTask {
                    var done = 0
                    var index = worker
                    while ContinuousClock.now < deadline {
                        try await put(client: client, token: tokens[index % tokens.count], id: "w", value: done)
                        done += 1
                        index += writers
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - start
        let cpu = ProcFS.cpuSeconds(from: cpuBefore, to: ProcFS.cpuTimes(of: [serverPid])) ?? 0
        return (Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18),
                cpu * 1e6 / Double(max(count, 1)))
    }

    private func put(client: HTTPClient, token: String, id: String, value: Int) async throws {
        var request = HTTPClientRequest(url: base + "/v1/data/bench/\(id)")
        request.method = .PUT
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"data":{"n":\#(value),"text":"a record of a typical size for a list item"}}"#))
        let response = try await client.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw BenchError("write failed: \(response.status)") }
    }

    private func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
    }
}

/// Open change streams, each read by a task of its own that counts the changes it sees.
final class StreamSet: Sendable {
    let client: HTTPClient
    private let counts = Mutex<(ready: Int, changes: Int)>((0, 0))
    private let readers = Mutex<[Task<Void, Never>]>([])

    init(client: HTTPClient) {
        self.client = client
    }

    var changesReceived: Int { counts.withLock { $0.changes } }

    /// Opens one stream per token, 256 at a time, and returns once each has said `ready`.
    func open(base: String, tokens: [String]) async throws {
        let target = counts.withLock { $0.ready } + tokens.count
        for start in stride(from: 0, to: tokens.count, by: 256) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for token in tokens[start..<min(start + 256, tokens.count)] {
                    group.addTask { try await self.openOne(base: base, token: token) }
                }
                try await group.waitForAll()
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while counts.withLock({ $0.ready }) < target {
            guard ContinuousClock.now < deadline else { throw BenchError("streams did not all say ready") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private func openOne(base: String, token: String) async throws {
        var request = HTTPClientRequest(url: base + "/v1/changes/stream")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response = try await client.execute(request, deadline: .distantFuture)
        guard response.status == .ok else { throw BenchError("stream refused: \(response.status)") }
        let reader = Task { [self] in
            // Counted on the bytes (the load generator shares the machine's cores with the server); a marker
            // split between two reads is found in the previous read's tail joined to the next.
            var carry: [UInt8] = []
            do {
                for try await buffer in response.body {
                    let bytes = carry + Array(buffer.readableBytesView)
                    let changes = StreamSet.count(StreamSet.changeMarker, in: bytes) - StreamSet.count(StreamSet.changeMarker, in: carry)
                    let ready = StreamSet.count(StreamSet.readyMarker, in: bytes) - StreamSet.count(StreamSet.readyMarker, in: carry)
                    carry = Array(bytes.suffix(16))
                    if changes + ready > 0 { self.counts.withLock { $0.changes += changes; $0.ready += ready } }
                }
            } catch {}
        }
        readers.withLock { $0.append(reader) }
    }

    static let changeMarker = Array("event: change".utf8)
    static let readyMarker = Array("event: ready".utf8)

    static func count(_ marker: [UInt8], in bytes: [UInt8]) -> Int {
        guard bytes.count >= marker.count else { return 0 }
        var found = 0
        var index = 0
        while index <= bytes.count - marker.count {
            if bytes[index] == marker[0], bytes[index..<index + marker.count].elementsEqual(marker) {
                found += 1
                index += marker.count
            } else {
                index += 1
            }
        }
        return found
    }

    func closeAll() async {
        let tasks = readers.withLock { readers in
            defer { readers = [] }
            return readers
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
