import Hummingbird
import LanyardCore

/// Counts a route group's requests against one of the reference's limits before the handler runs, and answers
/// `RATE_LIMITED` past it: by client IP, or by the caller's account (after `BearerAuthentication`). Every attempt
/// counts, a malformed one too.
///
/// ```swift
/// router.group("v1/auth").add(middleware: RateLimit(api, .anonymous, per: .clientIP)).post("anonymous", use: …)
/// ```
struct RateLimit: RouterMiddleware {
    typealias Context = LanyardRequestContext

    enum Key: Sendable {
        case clientIP
        /// The account of `context.caller`.
        case caller
    }

    let api: APIContext
    let action: RateLimiter.Action
    let key: Key

    init(_ api: APIContext, _ action: RateLimiter.Action, per key: Key) {
        self.api = api
        self.action = action
        self.key = key
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let counted = switch key {
        case .clientIP: api.client(request, context).ip
        case .caller: try context.requireCaller().userID
        }
        try await api.dependencies.rateLimiter.check(action, key: counted)
        return try await next(request, context)
    }
}
