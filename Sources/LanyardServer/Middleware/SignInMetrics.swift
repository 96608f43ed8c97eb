import Hummingbird
import LanyardCore

/// Counts each sign-in by provider and outcome (`lanyard_signins_total`): `success`, or the catalogue code it was
/// refused with, the rate limit's and the guest bearer's included.
struct SignInMetrics: RouterMiddleware {
    typealias Context = LanyardRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let named = context.parameters.get("provider") ?? ""
        let provider = named == "apple" || named == "google" ? named : "other"
        do {
            let response = try await next(request, context)
            metrics.recordSignIn(provider: provider, outcome: "success")
            return response
        } catch let error as LanyardError {
            metrics.recordSignIn(provider: provider, outcome: error.code.rawValue)
            throw error
        }
    }
}
