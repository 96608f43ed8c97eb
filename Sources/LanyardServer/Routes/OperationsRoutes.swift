import Foundation
import Hummingbird
import LanyardStore

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.json`.
struct OperationsRoutes {
    let database: any Database
    let metrics: ServerMetrics

    func register(on router: Router<LanyardRequestContext>) {
        router.get("healthz") { _, _ in
            try JSONResponse.make(["status": "ok"])
        }
        router.get("readyz") { _, context in
            if await Readiness(database: database).isReady() { return try JSONResponse.make(["status": "ok", "database": "ok"]) }
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
}
