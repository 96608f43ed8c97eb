import Hummingbird
import LanyardCore

/// Counts each sign-in by provider and outcome (`lanyard_signins_total`): `success`, or the catalogue code it was
/// refused with, the rate limit's and the guest bearer's included. A name the server does not offer counts as
/// `other`, so a path cannot add labels.
struct SignInMetrics: RouterMiddleware {
    typealias Context = LanyardRequestContext
    let metrics: ServerMetrics
    /// The configured providers' names.
    let offered: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let named = context.parameters.get("provider") ?? ""
        let provider = offered.contains(named) ? named : "other"
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
