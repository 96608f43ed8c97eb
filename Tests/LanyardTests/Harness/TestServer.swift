import AsyncHTTPClient
import Foundation
import Hummingbird
import LanyardCore
import LanyardEmulator
import LanyardServer
import LanyardSupport
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// A real Lanyard server on a loopback port, in dev mode (the emulator serves the provider keys), on a real
/// database, with a clock the test moves. Every request goes over HTTP.
struct TestServer: Sendable {
    let runtime: LanyardRuntime
    let baseURL: String
    let clock: ManualClock
    let minter: TokenMinter
    let dataDirectory: String

    /// The emulator keys are made once per test run (RSA key generation is slow) and shared by every server.
    static let sharedDataDirectory: String = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-test-keys-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Created here, once, before any server reads the file.
        _ = try? EmulatorKeys.loadOrCreate(directory: directory)
        return directory
    }()

    static let sharedKeys: EmulatorKeys = {
        guard let keys = try? EmulatorKeys.loadOrCreate(directory: sharedDataDirectory) else {
            fatalError("cannot create the emulator keys for tests")
        }
        return keys
    }()

    /// Starts a server, runs `body` against it, and stops it (also when `body` throws).
    static func with(
        _ database: TestDatabase,
        configure: (inout LanyardConfiguration) -> Void = { _ in },
        logger: Logger? = nil,
        _ body: (TestServer) async throws -> Void
    ) async throws {
        let (url, cleanup) = try await database.makeFresh()
        do {
            // A port picked as free can be taken by a parallel test before we bind it: then try another.
            var started = false
            for _ in 1...5 where !started {
                started = try await startAndRun(databaseURL: url, configure: configure, logger: logger, body)
            }
            await cleanup()
            if !started { throw TestSetupError("the test server did not start on any of 5 ports") }
        } catch {
            await cleanup()
            throw error
        }
    }

    /// - Returns: false when the server could not start (nothing of `body` ran).
    private static func startAndRun(
        databaseURL: String,
        configure: (inout LanyardConfiguration) -> Void,
        logger: Logger?,
        _ body: (TestServer) async throws -> Void
    ) async throws -> Bool {
        let clock = ManualClock(Date())
        guard let running = try await RunningServer.start(databaseURL: databaseURL, port: try freeLoopbackPort(),
                                                          clock: clock, configure: configure, logger: logger) else {
            return false
        }
        do {
            try await body(TestServer(running, clock: clock))
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
        return true
    }

    // MARK: Provider tokens

    /// A real, RS256-signed emulator token, verified by the server through its JWKS exactly like a real one.
    func idToken(_ provider: EmulatedProvider, sub: String, email: String? = nil, nonce: String? = nil,
                 aud: String? = nil, name: String? = nil, expiresIn: Int? = nil, issuer: String? = nil,
                 issuedAt: Date? = nil) throws -> String {
        try minter.mint(provider, MintRequest(sub: sub, email: email, nonce: nonce, aud: aud, name: name,
                                              expiresIn: expiresIn, iss: issuer, iat: issuedAt?.unixSeconds))
    }

    // MARK: HTTP

    func request(_ method: HTTPMethod, _ path: String, json: [String: Any]? = nil, rawBody: String? = nil,
                 bearer: String? = nil, headers: [String: String] = [:]) async throws -> TestResponse {
        try await TestHTTP.send(method, baseURL + path, json: json, rawBody: rawBody, bearer: bearer, headers: headers)
    }

    func post(_ path: String, _ json: [String: Any] = [:], bearer: String? = nil,
              headers: [String: String] = [:]) async throws -> TestResponse {
        try await request(.POST, path, json: json, bearer: bearer, headers: headers)
    }

    func get(_ path: String, bearer: String? = nil) async throws -> TestResponse {
        try await request(.GET, path, bearer: bearer)
    }

    func delete(_ path: String, bearer: String? = nil) async throws -> TestResponse {
        try await request(.DELETE, path, bearer: bearer)
    }

    // MARK: Flows

    /// Signs in with an emulator token and expects success.
    func signIn(_ provider: EmulatedProvider, sub: String, email: String? = nil, bearer: String? = nil,
                extra: [String: Any] = [:]) async throws -> Session {
        var body = extra
        body["id_token"] = try idToken(provider, sub: sub, email: email)
        let response = try await post("/v1/auth/signin/\(provider.rawValue)", body, bearer: bearer)
        return try Session(response)
    }

    /// Sends `count` requests at once, for races; the answers come back in the order they arrived.
    func concurrently(_ count: Int, _ send: @escaping @Sendable () async throws -> TestResponse) async throws -> [TestResponse] {
        try await withThrowingTaskGroup(of: TestResponse.self) { group in
            for _ in 0..<count { group.addTask { try await send() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Sends `count` requests at once and, among them after the first `deletingAfter`, the deletion of
    /// `deleter`'s account; the deletion's answer and the requests' answers, in the order they arrived.
    func racingDeletion(by deleter: Session, count: Int, deletingAfter: Int,
                        _ send: @escaping @Sendable (Int) async throws -> TestResponse) async throws
        -> (deletion: TestResponse?, answers: [TestResponse]) {
        try await withThrowingTaskGroup(of: (isDeletion: Bool, TestResponse).self) { group in
            for index in 0..<count {
                group.addTask { (false, try await send(index)) }
                if index == deletingAfter {
                    group.addTask { (true, try await self.delete("/v1/users/me", bearer: deleter.accessToken)) }
                }
            }
            return try await group.reduce(into: (TestResponse?.none, [TestResponse]())) { result, answer in
                if answer.isDeletion { result.0 = answer.1 } else { result.1.append(answer.1) }
            }
        }
    }

    func anonymous() async throws -> Session {
        try Session(try await post("/v1/auth/anonymous"))
    }

    func refresh(_ token: String) async throws -> TestResponse {
        try await post("/v1/auth/refresh", ["refresh_token": token])
    }
}

extension TestServer {
    init(_ running: RunningServer, clock: ManualClock) {
        self.init(runtime: running.runtime, baseURL: running.baseURL, clock: clock,
                  minter: TokenMinter(keys: Self.sharedKeys, clock: clock), dataDirectory: Self.sharedDataDirectory)
    }
}

/// Requests as a client sends them, to any Lanyard (in this process or another).
enum TestHTTP {
    /// Past the test servers' own database timeout (30 s, `RunningServer`): a request queued on a starved machine
    /// gets the server's answer (a 503 included), never the client's deadline; only a hang reaches it.
    static let timeout: TimeAmount = .seconds(90)

    /// A client that hands a 3xx back as it is, as a test of redirects reads it.
    static let notFollowing = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                                         configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    static func send(_ method: HTTPMethod, _ url: String, json: [String: Any]? = nil, rawBody: String? = nil,
                     form: [(String, String)]? = nil, bearer: String? = nil, headers: [String: String] = [:],
                     followingRedirects: Bool = true, timeout: TimeAmount = TestHTTP.timeout) async throws -> TestResponse {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        } else if let rawBody {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: rawBody))
        } else if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: formEncoded(form)))
        }
        let client = followingRedirects ? HTTPClient.shared : notFollowing
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 4 << 20)
        return TestResponse(status: Int(response.status.code), headers: response.headers,
                            body: Data(body.readableBytesView))
    }
}

extension TestHTTP {
    /// `application/x-www-form-urlencoded`, as a browser encodes a form.
    static func formEncoded(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return fields.map { name, value in
            [name, value].map { ($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? "") }.joined(separator: "=")
        }.joined(separator: "&")
    }
}

/// A decoded response; JSON bodies are read as plain dictionaries so tests assert on the wire format.
struct TestResponse: @unchecked Sendable {
    let status: Int
    let headers: HTTPHeaders
    let body: Data

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// Where a 3xx sends the browser.
    var location: String? { headers.first(name: "location") }

    var error: [String: Any] { json["error"] as? [String: Any] ?? [:] }
    var errorCode: String? { error["code"] as? String }
    var errorMessage: String? { error["message"] as? String }
    var errorReason: String? { (error["details"] as? [String: Any])?["reason"] as? String }
    var errorDetails: [String: Any] { error["details"] as? [String: Any] ?? [:] }

    /// The account's identities: `user.identities` of a session or link answer, `identities` of `GET /v1/users/me`.
    var identities: [[String: Any]] {
        ((json["user"] as? [String: Any])?["identities"] ?? json["identities"]) as? [[String: Any]] ?? []
    }

    /// The account a session response carries, as sorted JSON text, to compare with another answer's.
    var sessionAccount: String { Self.canonical(json["user"] as? [String: Any] ?? [:]) }

    /// The account `GET /v1/users/me` answers with, without its `linked_providers`, as sorted JSON text.
    var meAccount: String { Self.canonical(json.filter { !["linked_providers", "recovery", "legacy_id", "legacy_source"].contains($0.key) }) }

    static func canonical(_ object: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys)) ?? Data(), as: UTF8.self)
    }
}

/// The session response of a successful sign-in, anonymous or refresh call.
struct Session: Sendable {
    let accessToken: String
    let refreshToken: String
    let userID: String
    let isNewUser: Bool
    let isAnonymous: Bool
    let linkedProviders: [String]
    let mergedFrom: String?

    init(_ response: TestResponse) throws {
        guard response.status == 200 else {
            throw TestSetupError("expected a session, got \(response.status): \(response.text)")
        }
        let json = response.json
        let user = json["user"] as? [String: Any] ?? [:]
        accessToken = json["access_token"] as? String ?? ""
        refreshToken = json["refresh_token"] as? String ?? ""
        userID = user["id"] as? String ?? ""
        isNewUser = json["is_new_user"] as? Bool ?? false
        isAnonymous = user["is_anonymous"] as? Bool ?? false
        linkedProviders = json["linked_providers"] as? [String] ?? []
        mergedFrom = json["merged_from"] as? String
    }

    /// The access token's claims, decoded without verification (tests verify separately).
    var claims: [String: Any] {
        let parts = accessToken.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }
}
