import Hummingbird
import LanyardCore

/// `POST /v1/providers/apple/notifications`: Apple's server-to-server notifications (reference section 10).
struct ProviderNotificationRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        router.post("v1/providers/apple/notifications", use: apple)
    }

    struct NotificationBody: RequestBody {
        let payload: String
        init(_ fields: BodyFields) throws {
            payload = try Field.nonEmpty(try fields.string("payload"), "payload")
        }
    }

    /// 200 once verified and applied (or already applied: a replay changes nothing); a forged or foreign one is
    /// refused like a bad ID token.
    @Sendable func apple(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(NotificationBody.self, from: request)
        let outcome = try await AppleNotifications(api.dependencies).handle(payload: body.payload)
        return try JSONResponse.make(["outcome": outcome.rawValue])
    }
}
