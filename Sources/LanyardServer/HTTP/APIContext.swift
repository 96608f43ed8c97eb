import HTTPTypes
import Hummingbird
import LanyardProviders
import LanyardCore
import LanyardSupport
import Logging

/// What every route handler shares: the core services, and how to read the client.
struct APIContext: Sendable {
    let dependencies: CoreDependencies
    let trustedProxies: [CIDR]
    let metrics: ServerMetrics
    /// Redeems Apple authorization codes, when Apple's lifecycle is configured.
    let appleCodes: AppleCodeRedemptions?
    /// Redirect sign-in (reference section 23).
    let redirectFlows: RedirectFlows

    /// Queues an Apple `authorization_code` sent with a successful sign-in, link or re-authentication for
    /// `AppleCodeRedemptions`: the answer never waits for Apple, and a failure is logged and counted, not answered.
    func redeemAppleCode(_ code: String?, provider: Provider, idToken: String, nonce: String?, logger: Logger) {
        guard let code, !code.isEmpty, case .apple? = dependencies.signInMethods.method(provider)?.lifecycle,
              let appleCodes else { return }
        appleCodes.enqueue(.init(code: code, idToken: idToken, nonce: nonce))
    }

    func client(_ request: Request, _ context: LanyardRequestContext) -> ClientInfo {
        ClientInfo(ip: ClientAddress.resolve(peer: context.peerAddress, forwardedFor: request.headers[.xForwardedFor],
                                             trustedProxies: trustedProxies),
                   userAgent: request.headers[.userAgent])
    }

    /// The caller for a route whose rules depend on the body (GoTrue's `link_identity`); elsewhere the route's
    /// group resolves it (`BearerAuthentication`).
    func caller(_ request: Request) async throws -> Caller {
        guard let token = try BearerToken.parse(request) else { throw LanyardError.unauthorized }
        return try await Authenticator(dependencies).authenticate(bearer: token)
    }

    /// The offered ID-token provider the path names.
    func provider(_ context: LanyardRequestContext) throws -> Provider {
        try dependencies.signInMethods.idTokenProvider(named: try context.parameters.require("provider"))
    }

    /// A sign-in method an account may hold, as the path names it: an offered provider, or `email` and `passkey`
    /// (removable even when no longer offered).
    func method(_ context: LanyardRequestContext) throws -> Provider {
        try dependencies.signInMethods.heldMethod(named: try context.parameters.require("provider")).provider
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
