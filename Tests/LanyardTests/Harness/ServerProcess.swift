import AsyncHTTPClient
import Foundation
import LanyardEmulator
import LanyardSupport
import NIOHTTP1

/// `lanyard serve` as an operator runs it: a process of its own, configured by `LANYARD_*` variables, its log
/// read as it is written (so a chatty server never blocks on a full pipe).
final class ServerProcess: Sendable {
    let process: ChildProcess
    let port: Int
    let baseURL: String
    private let log: LogCollector

    /// Starts `lanyard serve` on a free port with the emulator's keys (`LANYARD_DEV`), and waits until it answers.
    /// - Parameter launcher: a program and its arguments put before the `lanyard` command (`prlimit …`).
    static func start(databaseURL: String, environment: [String: String] = [:],
                      launcher: [String] = []) async throws -> ServerProcess {
        for _ in 1...5 {
            let port = try freeLoopbackPort()
            var variables = [
                "LANYARD_DATABASE_URL": databaseURL,
                "LANYARD_PORT": String(port),
                "LANYARD_DEV": "1",
                "LANYARD_RATE_LIMITS": "off",
                "LANYARD_DATABASE_POOL_SIZE": "3",
                "LANYARD_MASTER_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
                "LANYARD_DATA_DIR": TestServer.sharedDataDirectory,
                "LANYARD_LOG_LEVEL": "notice",
                "PATH": "/usr/bin:/bin",
            ]
            variables.merge(environment) { $1 }
            let command = launcher + [CommandTests.executable.path, "serve"]
            let process = try ChildProcess(executable: command[0], arguments: Array(command.dropFirst()), environment: variables)
            let server = ServerProcess(process: process, port: port)
            if try await CommandTests.waitUntilHealthy(port: port) { return server }
            server.stop()
        }
        throw TestSetupError("lanyard serve did not start on any of 5 ports")
    }

    private init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
        baseURL = "http://127.0.0.1:\(port)"
        log = LogCollector(process.standardError)
    }

    /// What the server has logged so far.
    var logText: String { log.text }

    /// A token the server's emulator keys sign, as Apple or Google would.
    static let minter = TokenMinter(keys: TestServer.sharedKeys, clock: SystemClock())

    func request(_ method: HTTPMethod, _ path: String, json: [String: Any]? = nil, bearer: String? = nil,
                 headers: [String: String] = [:]) async throws -> TestResponse {
        try await TestHTTP.send(method, baseURL + path, json: json, bearer: bearer, headers: headers)
    }

    func signIn(apple sub: String) async throws -> TestResponse {
        let token = try Self.minter.mint(.apple, MintRequest(sub: sub))
        return try await request(.POST, "/v1/auth/signin/apple", json: ["id_token": token])
    }

    /// SIGTERM, then waits up to thirty seconds for the process to end, then SIGKILL: a test never leaves a server
    /// running behind it (one still running would take the next tests' CPU). Nothing once it has ended.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard process.isRunning else { return }
        Foundation.kill(process.pid, SIGKILL)
        while process.isRunning { usleep(20_000) }
    }

    /// SIGKILL, then waits until the process is gone: nothing of it answers after this returns.
    func kill() async {
        guard process.isRunning else { return }
        Foundation.kill(process.pid, SIGKILL)
        _ = await CommandTests.waitForExit(process, seconds: 30)
    }

    /// Waits until the server has logged `text` (a bound only a hang reaches).
    func waitForLog(_ text: String) async throws -> Bool {
        try await eventually(within: 60) { logText.contains(text) }
    }

    /// Reads a pipe to its end on a thread of its own.
    private final class LogCollector: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return }
                    lock.withLock { data.append(chunk) }
                }
            }
        }

        var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
    }
}
