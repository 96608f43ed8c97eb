import Hummingbird
import Logging
import ServiceLifecycle

/// A Hummingbird application of a test's own (a key server, a webhook receiver) on a loopback port, running
/// until `stop()`.
struct LocalApplication: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, Never>

    init(router: Router<BasicRequestContext>, port: Int, label: String) async throws {
        var logger = Logger(label: label)
        logger.logLevel = .critical
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                              onServerRunning: { _ in startedContinuation.yield() }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        self.group = group
        task = Task {
            try? await group.run()
            startedContinuation.finish()
        }
        var iterator = started.makeAsyncIterator()
        guard await iterator.next() != nil else { throw TestSetupError("\(label) did not start on port \(port)") }
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        await task.value
    }
}
