import Hummingbird
import Logging

/// One structured line per request: id, method, route, status, duration. Never the body, query or headers,
/// which may carry tokens.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = LanyardRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        response.headers[.init("X-Request-Id")!] = context.requestID
        context.logger.info("request", metadata: [
            "method": .string(request.method.rawValue),
            "route": .string(context.endpointPath ?? "unknown"),
            "status": .stringConvertible(response.status.code),
            "duration_ms": .stringConvertible(Double(elapsed.components.attoseconds / 1_000_000_000_000) / 1000
                + Double(elapsed.components.seconds) * 1000),
        ])
        return response
    }
}
