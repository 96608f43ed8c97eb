import Foundation
import LanyardCore
import LanyardServer
import LanyardSupport
import Logging
import ServiceLifecycle

/// A real Lanyard server in this process, in dev mode, on a loopback port, until `stop()`. Tests that stop and
/// start a server on the same database and port (a server going away under a client) use it directly;
/// `TestServer.with` wraps it for the rest.
struct RunningServer: Sendable {
    let runtime: LanyardRuntime
    let baseURL: String
    private let group: ServiceGroup
    private let task: Task<Void, Never>

    /// - Returns: nil when the server could not bind `port`.
    static func start(databaseURL: String, port: Int, clock: ManualClock,
                      configure: (inout LanyardConfiguration) -> Void = { _ in },
                      logger: Logger? = nil) async throws -> RunningServer? {
        var configuration = try LanyardConfiguration.load(environment: [
            "LANYARD_DATABASE_URL": databaseURL,
            "LANYARD_PORT": String(port),
            "LANYARD_DEV": "1",
            "LANYARD_RATE_LIMITS": "off",
            // Many servers run at once in the suite; a few connections each keep PostgreSQL's total low.
            "LANYARD_DATABASE_POOL_SIZE": "3",
            // Racing requests on three connections of a busy machine may wait longer than production's 2 s; the
            // timeout itself is tested in `DatabaseFaultTests`, with servers of their own.
            "LANYARD_DATABASE_TIMEOUT": "30",
            "LANYARD_MASTER_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
            "LANYARD_DATA_DIR": TestServer.sharedDataDirectory,
        ])
        // The emulator's and the test issuers' keys come from this same busy process, whose two cooperative threads a
        // whole-suite run keeps busy (CI once saw fetches pass 10 s there): give the fetch room, as the database
        // timeout above. `ProviderFaultTests` keep the production deadline.
        configuration.providerKeyFetchTimeout = 30
        configure(&configuration)
        let logger = logger ?? {
            var quiet = Logger(label: "lanyard.test")
            quiet.logLevel = .critical
            return quiet
        }()
        let runtime = try await LanyardRuntime.start(configuration: configuration, logger: logger, clock: clock)
        let (started, startedContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = runtime.application { port in startedContinuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            // Ends the start signal whatever happens, so a server that cannot bind never leaves us waiting.
            try? await group.run()
            startedContinuation.finish()
        }
        var iterator = started.makeAsyncIterator()
        guard await iterator.next() != nil else {
            await runtime.shutdown()
            return nil
        }
        return RunningServer(runtime: runtime, baseURL: LanyardRuntime.localBaseURL(configuration), group: group,
                             task: task)
    }

    /// Starts on a free port, trying another when a parallel test took the one picked first (5 tries).
    static func startOnFreePort(databaseURL: String, clock: ManualClock,
                                configure: (inout LanyardConfiguration) -> Void = { _ in }) async throws -> RunningServer {
        for _ in 1...5 {
            if let server = try await start(databaseURL: databaseURL, port: try freeLoopbackPort(), clock: clock,
                                            configure: configure) {
                return server
            }
        }
        throw TestSetupError("the server did not start on any of 5 ports")
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        await task.value
        await runtime.shutdown()
    }
}
