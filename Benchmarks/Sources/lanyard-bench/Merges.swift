import ArgumentParser
import AsyncHTTPClient
import Foundation
import LanyardBenchKit
import NIOCore

/// The time to merge two full accounts of 10, 1,000 and 10,000 records (a tenth of them on both), and the sign-ins
/// of other people meanwhile against a baseline without a merge (BENCHMARKS.md, "Merging two accounts").
struct Merges: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merging two full accounts: time per size, and other people's sign-ins during a merge.")

    @Option(help: "Base URL of the server under test (loopback only)") var base: String = "http://127.0.0.1:8711"
    @Option(help: "A label for the results, e.g. sqlite or postgres") var database: String = "sqlite"
    @Option(help: "Records of the merged account, comma separated") var sizes: String = "10,1000,10000"
    @Option(help: "Pids whose resident memory and CPU are measured") var serverPids: String = ""
    @Option(help: "The fake IdP's keys folder (apple.pem, google.pem)") var keysDirectory: String
    @Option(help: "The fake IdP, for the kids of its keys") var idp: String = "http://127.0.0.1:8702"
    @Option(help: "Append results here as JSON lines") var json: String?

    struct Result: Codable {
        var database: String
        var records: Int
        var clashes: Int
        var mergeSeconds: Double
        var recordsMoved: Int
        var signinBaselineP50Ms: Double
        var signinBaselineP99Ms: Double
        var signinDuringP50Ms: Double
        var signinDuringP99Ms: Double
    }

    func run() async throws {
        guard let components = URLComponents(string: base), let host = components.host, let port = components.port,
              ["127.0.0.1", "localhost"].contains(host) else { throw ValidationError("--base is http://127.0.0.1:PORT") }
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        defer { _ = client.shutdown() }
        let (google, apple) = try await TokenFactory.fakeProviders(keysDirectory: keysDirectory, idp: idp, client: client)
        let setup = Setup(client: client, base: base, target: .lanyard, apple: apple, google: google)
        let pids = serverPids.split(separator: ",").compactMap { Int32($0) }
        let run = String(UUID().uuidString.prefix(8)).lowercased()
        // Other people signing in again and again: one existing account per worker.
        let others = try await google.mintMany(count: 20_000) { "other-\(run)-\($0 % 8)" }
        for worker in 0..<8 { _ = try await setup.signIn(google, sub: "other-\(run)-\(worker)") }
        let signIns = FixedRequests(name: "signin_existing", requests: others.map {
            Target.lanyard.signInRequest(provider: "google", token: $0, audience: google.audience)
        })
        for size in sizes.split(separator: ",").compactMap({ Int($0) }) {
            let keptSub = "kept-\(run)-\(size)", absorbedSub = "absorbed-\(run)-\(size)"
            let kept = try await setup.bearer(apple, sub: keptSub)
            let absorbed = try await setup.bearer(google, sub: absorbedSub)
            let clashes = size / 10
            try await write(setup, bearer: absorbed, ids: 0..<size)
            try await write(setup, bearer: kept, ids: 0..<clashes)
            let generator = { (seconds: Double) in
                LoadGenerator(host: host, port: UInt16(port), concurrency: 8, count: 20_000, maxSeconds: seconds,
                              serverPIDs: pids, databasePIDs: [])
            }
            let baseline = await generator(3).run(signIns)
            let challenge = try await setup.send(.POST, "/v1/users/me/merge/challenge", bearer: kept, body: Array("{}".utf8))
            guard let nonce = challenge["nonce"] as? String else { throw BenchError("no challenge") }
            let proof = try google.mint(sub: absorbedSub, email: "\(absorbedSub)@example.com", nonce: nonce)
            let body = try JSONSerialization.data(withJSONObject: ["proof": ["provider": "google", "id_token": proof]])
            async let during = generator(max(3, Double(size) / 2000)).run(signIns)
            try await Task.sleep(for: .milliseconds(500))
            let started = ContinuousClock.now
            let merged = try await setup.send(.POST, "/v1/users/me/merge", bearer: kept, body: Array(body))
            let elapsed = ContinuousClock.now - started
            let loaded = await during
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let result = Result(database: database, records: size, clashes: clashes, mergeSeconds: seconds,
                                recordsMoved: merged["records_moved"] as? Int ?? -1,
                                signinBaselineP50Ms: baseline.p50Milliseconds, signinBaselineP99Ms: baseline.p99Milliseconds,
                                signinDuringP50Ms: loaded.p50Milliseconds, signinDuringP99Ms: loaded.p99Milliseconds)
            print(String(format: "merge %@ %6d records (%d clashes): %.3f s; others' sign-ins p50/p99 %.1f/%.1f ms, during %.1f/%.1f ms",
                         database, size, clashes, seconds, baseline.p50Milliseconds, baseline.p99Milliseconds,
                         loaded.p50Milliseconds, loaded.p99Milliseconds))
            if let json {
                let encoder = JSONEncoder()
                encoder.keyEncodingStrategy = .convertToSnakeCase
                try appendLine(try encoder.encode(result), to: json)
            }
        }
    }

    /// Writes records `ids` of the account, 32 at a time.
    private func write(_ setup: Setup, bearer: String, ids: Range<Int>) async throws {
        let body = Array(#"{"data":{"title":"Bench","done":false}}"#.utf8)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<32 {
                group.addTask {
                    for id in stride(from: ids.lowerBound + worker, to: ids.upperBound, by: 32) {
                        _ = try await setup.send(.PUT, "/v1/data/items/i\(id)", bearer: bearer, body: body)
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
