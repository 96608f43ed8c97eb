import Hummingbird
import LanyardCore
import LanyardSupport

/// Guards `/v1/admin/*`: the bearer must be `LANYARD_ADMIN_KEY`, compared in constant time. A client IP past
/// its limit of wrong keys is refused before its key is even compared. The key is never logged.
struct AdminKeyMiddleware: RouterMiddleware {
    typealias Context = LanyardRequestContext
    let key: String
    let api: APIContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let ip = api.client(request, context).ip
        try await api.dependencies.rateLimiter.refuseIfLimited(.adminKey, key: ip)
        guard let presented = try? BearerToken.parse(request), Hashing.isSameSecret(presented, key) else {
            try await api.dependencies.rateLimiter.check(.adminKey, key: ip)
            throw LanyardError(.forbidden, "The admin key is missing or wrong")
        }
        return try await next(request, context)
    }
}
