import Foundation
import Hummingbird
import LanyardStore
import Synchronization

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.json`.
struct OperationsRoutes {
    let database: any Database
    let metrics: ServerMetrics

    func register(on router: Router<LanyardRequestContext>) {
        router.get("healthz") { _, _ in
            try JSONResponse.make(["status": "ok"])
        }
        router.get("readyz") { _, context in
            if await isReady() { return try JSONResponse.make(["status": "ok", "database": "ok"]) }
            context.logger.warning("not ready: database unreachable")
            return try JSONResponse.make(["status": "unavailable", "database": "unreachable"], status: .serviceUnavailable)
        }
        router.get("metrics") { _, _ in
            metrics.setDatabaseReachable(database.isReachable)
            return JSONResponse.raw(metrics.exposition(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.get("openapi.json") { _, _ in
            guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
                  let data = FileManager.default.contents(atPath: url.path) else {
                throw HTTPError(.notFound)
            }
            return JSONResponse.raw(data, contentType: "application/json")
        }
    }

    /// Whether the database answers a query within `readinessDeadline`; at once `false` when the last attempt
    /// to reach it failed.
    private func isReady() async -> Bool {
        guard database.isReachable else { return false }
        // Not a task group: it would wait for a ping stuck behind a busy pool before answering.
        return await withCheckedContinuation { continuation in
            let answer = FirstAnswer(continuation)
            Task { answer.give((try? await database.ping()) != nil) }
            Task {
                try? await Task.sleep(for: Self.readinessDeadline)
                answer.give(false)
            }
        }
    }

    /// Resumes the readiness check with whichever of the ping and the deadline answers first.
    private final class FirstAnswer: Sendable {
        private let waiting: Mutex<CheckedContinuation<Bool, Never>?>

        init(_ continuation: CheckedContinuation<Bool, Never>) {
            waiting = Mutex(continuation)
        }

        func give(_ ready: Bool) {
            let continuation = waiting.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }
            continuation?.resume(returning: ready)
        }
    }

    /// `/readyz` answers within a second (reference section 8), whatever the database does.
    static let readinessDeadline = Duration.milliseconds(800)
}
