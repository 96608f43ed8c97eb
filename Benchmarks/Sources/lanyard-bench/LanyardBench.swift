import ArgumentParser
import AsyncHTTPClient
import Foundation
import LanyardBenchKit
import NIOCore

@main
struct LanyardBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lanyard-bench",
        abstract: "Lanyard's benchmarks: HTTP load against Lanyard or the allauth peer (loopback only), and micro-benchmarks.",
        subcommands: [Load.self, Micro.self, Streams.self, Merges.self])
}

struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Closed-loop HTTP load, bounded in requests and time.")

    @Option(help: "lanyard or allauth") var target: String = "lanyard"
    @Option(help: "Base URL of the server under test (loopback only)") var base: String = "http://127.0.0.1:8711"
    @Option(help: "A label for the results, e.g. sqlite or postgres") var database: String = "sqlite"
    @Option(help: "signin_new,signin_existing,signin_existing_apple,signin_existing_oidc,refresh,me,link,healthz,readyz; data_write,group_write,data_read,group_read,signin_grouped")
    var scenarios: String = "signin_new,signin_existing,refresh,me,link"
    @Option(help: "Concurrency levels") var concurrency: String = "1,16,64"
    @Option(help: "At most this many requests per phase") var count: Int = 10_000
    @Option(help: "At most this many seconds per phase") var maxSeconds: Double = 10
    @Option(help: "Pids whose resident memory and CPU (with children) are measured") var serverPids: String = ""
    @Option(help: "Pids of a separate database server whose CPU (with children) is measured, e.g. PostgreSQL's postmaster")
    var databasePids: String = ""
    @Option(help: "The fake IdP's keys folder (apple.pem, google.pem)") var keysDirectory: String
    @Option(help: "The fake IdP, for the kids of its keys") var idp: String = "http://127.0.0.1:8702"
    @Option(help: "Append results here as JSON lines") var json: String?
    @Option(help: "Marks the results as this paired round (see BENCHMARKS.md), not the sweep") var round: Int?

    func run() async throws {
        for url in [base, idp] {
            let host = URLComponents(string: url)?.host ?? ""
            guard ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) else {
                throw ValidationError("benchmarks target loopback only, not \(url)")
            }
        }
        guard let target = Target(rawValue: target) else { throw ValidationError("--target is lanyard or allauth") }
        guard let components = URLComponents(string: base), let host = components.host, let port = components.port,
              components.scheme == "http" else {
            throw ValidationError("--base is http://HOST:PORT, e.g. http://127.0.0.1:8711")
        }
        let baseURL = (host: host, port: UInt16(port))
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 128
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        defer { _ = client.shutdown() }
        let (google, apple) = try await TokenFactory.fakeProviders(keysDirectory: keysDirectory, idp: idp, client: client)
        let pids = serverPids.split(separator: ",").compactMap { Int32($0) }
        let databasePIDs = databasePids.split(separator: ",").compactMap { Int32($0) }
        let run = String(UUID().uuidString.prefix(8)).lowercased()
        let setup = Setup(client: client, base: base, target: target, apple: apple, google: google)

        for scenarioName in scenarios.split(separator: ",").map(String.init) {
            for level in concurrency.split(separator: ",").compactMap({ Int($0) }) {
                let label = "\(run)-\(scenarioName)-c\(level)"
                let scenario: any Scenario & Sendable
                switch scenarioName {
                case "signin_new":
                    let tokens = try await google.mintMany(count: count) { "new-\(label)-\($0)" }
                    scenario = FixedRequests(name: scenarioName, requests: tokens.map {
                        target.signInRequest(provider: "google", token: $0, audience: google.audience)
                    })
                case "signin_existing", "signin_existing_apple", "signin_existing_oidc":
                    // Google, Apple, or an OpenID Connect provider of the configuration: one account signing in again.
                    let factory = switch scenarioName {
                    case "signin_existing_apple": apple
                    case "signin_existing_oidc": try await TokenFactory.oidc(keysDirectory: keysDirectory, idp: idp, client: client)
                    default: google
                    }
                    guard target == .lanyard || factory.provider == "google" else { continue }
                    _ = try await setup.signIn(factory, sub: "existing-\(label)")
                    let tokens = try await factory.mintMany(count: count) { _ in "existing-\(label)" }
                    scenario = FixedRequests(name: scenarioName, requests: tokens.map {
                        target.signInRequest(provider: factory.provider, token: $0, audience: factory.audience)
                    })
                case "refresh":
                    guard target == .lanyard else { continue }
                    var refreshTokens: [String] = []
                    for worker in 0..<level {
                        let body = try await setup.signIn(google, sub: "refresh-\(label)-\(worker)")
                        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
                        refreshTokens.append(object?["refresh_token"] as? String ?? "")
                    }
                    scenario = RefreshChains(tokens: refreshTokens)
                case "me":
                    var requests: [BenchRequest] = []
                    for worker in 0..<level {
                        let body = try await setup.signIn(google, sub: "me-\(label)-\(worker)")
                        guard let session = target.sessionToken(from: body) else { throw BenchError("no session token") }
                        requests.append(target.meRequest(sessionToken: session))
                    }
                    scenario = RepeatedRequests(name: scenarioName, perWorker: requests)
                case "link":
                    // Each request links a new Google identity to its own account, made beforehand with Apple.
                    let accounts = try await setup.signInMany(apple, count: count, concurrency: max(level, 16)) { "link-\(label)-\($0)" }
                    let tokens = try await google.mintMany(count: accounts.count) { "linked-\(label)-\($0)" }
                    scenario = FixedRequests(name: scenarioName, requests: zip(accounts, tokens).map { session, token in
                        target.signInRequest(provider: "google", token: token, audience: google.audience,
                                             sessionToken: session, process: "connect")
                    })
                case "healthz", "readyz":
                    // Floors: Lanyard's HTTP stack and middleware alone; and that plus one `SELECT 1`.
                    guard target == .lanyard else { continue }
                    scenario = RepeatedRequests(name: scenarioName, perWorker: [BenchRequest(method: .GET, path: "/\(scenarioName)")])
                case _ where GroupScenarios.names.contains(scenarioName):
                    guard target == .lanyard else { continue }
                    scenario = try await GroupScenarios.make(scenarioName, label: label, level: level, count: count,
                                                             setup: setup, google: google)
                default:
                    throw ValidationError("unknown scenario \(scenarioName)")
                }
                let generator = LoadGenerator(host: baseURL.host, port: baseURL.port, concurrency: level, count: count,
                                              maxSeconds: maxSeconds, serverPIDs: pids,
                                              databasePIDs: databasePIDs)
                var result = await generator.run(scenario)
                result.target = target.rawValue
                result.database = database
                result.round = round
                print(result.line)
                if !result.firstErrors.isEmpty { print("  first errors: \(result.firstErrors)") }
                if let json {
                    let encoder = JSONEncoder()
                    encoder.keyEncodingStrategy = .convertToSnakeCase
                    try appendLine(try encoder.encode(result), to: json)
                }
            }
        }
    }
}

/// Requests made before a timed phase (accounts, sessions); not measured.
struct Setup {
    let client: HTTPClient
    let base: String
    let target: Target
    let apple: TokenFactory
    let google: TokenFactory

    func signIn(_ factory: TokenFactory, sub: String) async throws -> ByteBuffer {
        let spec = target.signInRequest(provider: factory.provider, token: try factory.mint(sub: sub, email: "\(sub)@example.com"),
                                        audience: factory.audience)
        var request = HTTPClientRequest(url: base + spec.path)
        request.method = spec.method
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: spec.body ?? []))
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw BenchError("setup sign-in failed: \(response.status) \(String(buffer: body))") }
        return body
    }

    /// Session tokens of `count` new accounts.
    func signInMany(_ factory: TokenFactory, count: Int, concurrency: Int,
                    sub: @escaping @Sendable (Int) -> String) async throws -> [String] {
        var sessions: [String] = []
        var next = 0
        while next < count {
            let batch = next..<min(count, next + concurrency)
            let results = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in batch {
                    group.addTask {
                        let body = try await signIn(factory, sub: sub(index))
                        guard let token = target.sessionToken(from: body) else { throw BenchError("no session token") }
                        return (index, token)
                    }
                }
                return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
            }
            sessions += batch.map { results[$0]! }
            next = batch.upperBound
        }
        return sessions
    }
}

/// Appends `line` and a newline to the JSON-lines file at `path`, creating it.
func appendLine(_ line: Data, to path: String) throws {
    var line = line
    line.append(0x0A)
    if let handle = FileHandle(forWritingAtPath: path) {
        handle.seekToEndOfFile()
        handle.write(line)
        try handle.close()
    } else {
        _ = FileManager.default.createFile(atPath: path, contents: line)
    }
}
