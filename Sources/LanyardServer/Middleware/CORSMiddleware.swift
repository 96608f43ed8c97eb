import HTTPTypes
import Hummingbird

/// Lets web pages of `LANYARD_CORS_ORIGINS` call the API from the browser: preflights under `/v1`, `/auth/v1` and
/// `/.well-known` are answered here, and those paths' answers to a listed origin carry its CORS headers. Another
/// origin gets none, so its browser refuses to show it anything. Bearer tokens travel in `Authorization`, never in
/// cookies, so credentials are never allowed and no origin is ever `*`.
struct CORSMiddleware: RouterMiddleware {
    typealias Context = LanyardRequestContext

    let origins: Set<String>

    static let prefixes = ["/v1/", "/auth/v1/", "/.well-known/"]
    static let allowedMethods = "GET, POST, PUT, PATCH, DELETE"
    static let allowedHeaders = "Authorization, Content-Type, If-Match, Idempotency-Key, Last-Event-ID, apikey, "
        + "X-Client-Info, X-Supabase-Api-Version"
    static let exposedHeaders = "Retry-After, X-Request-Id, ETag"
    /// How long a browser may keep a preflight's answer.
    static let maxAge = "600"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], origins.contains(origin),
              Self.prefixes.contains(where: request.uri.path.hasPrefix)
        else { return try await next(request, context) }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            return Response(status: .noContent, headers: [
                .accessControlAllowOrigin: origin, .vary: "Origin",
                .accessControlAllowMethods: Self.allowedMethods, .accessControlAllowHeaders: Self.allowedHeaders,
                .accessControlMaxAge: Self.maxAge,
            ])
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
        response.headers[.vary] = "Origin"
        return response
    }
}
