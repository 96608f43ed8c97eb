import Foundation
import Hummingbird
import LanyardCore
import LanyardSupport
import Logging

/// Everything under `/auth/v1` answers in GoTrue's shapes: errors of any kind become `GoTrueError`s, the API
/// version the client sent is echoed (GoTrue's current one when it sent none), and the `apikey` is checked
/// when `LANYARD_GOTRUE_ANON_KEY` is set.
struct GoTrueMiddleware: RouterMiddleware {
    typealias Context = LanyardRequestContext
    static let currentAPIVersion = "2024-01-01"
    let anonKey: String?
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let apiVersion = Self.apiVersion(request)
        do {
            if let anonKey, !Self.isPublic(request.uri.path), !Hashing.isSameSecret(request.headers[.apiKey] ?? "", anonKey) {
                throw GoTrueError.invalidAPIKey
            }
            var response = try await next(request, context)
            response.headers[.supabaseAPIVersion] = apiVersion
            return response
        } catch {
            let goTrue = goTrueError(error, request: request, logger: context.logger)
            return goTrue.response(apiVersion: apiVersion)
        }
    }

    func goTrueError(_ error: any Error, request: Request, logger: Logger) -> GoTrueError {
        if let error = error as? GoTrueError { return error }
        let catalogued = ErrorMiddleware.catalogue(error, request: request)
        metrics.record(catalogued)
        ErrorMiddleware.log(error, as: catalogued, logger: logger)
        return GoTrueError.from(catalogued, hadAuthorization: request.headers[.authorization] != nil)
    }

    /// What is read without the project's key: the JWKS and the health check (a backend, a load balancer), and the
    /// redirect sign-in's pages (a browser's navigations carry no `apikey`).
    static func isPublic(_ path: String) -> Bool {
        ["/auth/v1/.well-known/jwks.json", "/auth/v1/health", "/auth/v1/authorize", "/auth/v1/callback"].contains(path)
    }

    /// The client's `YYYY-MM-DD` version, or GoTrue's current one.
    static func apiVersion(_ request: Request) -> String {
        guard let sent = request.headers[.supabaseAPIVersion], sent.utf8.count == 10,
              sent.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }) else { return currentAPIVersion }
        return sent
    }
}
