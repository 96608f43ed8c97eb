import Hummingbird
import LanyardCore

/// `/v1/auth/*`: sign-in, guests, refresh, sign-out, linking and re-authentication.
struct AuthRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        let group = router.group("v1/auth")
        group.post("signin/:provider", use: signIn)
        group.post("anonymous", use: anonymous)
        group.post("refresh", use: refresh)
        group.post("signout", use: signOut)
        group.post("link/:provider", use: link)
        group.delete("link/:provider", use: unlink)
        group.post("reauthenticate/:provider", use: reauthenticate)
    }

    @Sendable func signIn(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let providerName = context.parameters.get("provider") ?? ""
        do {
            let provider = try api.provider(context)
            let received = try await JSONBody.decode(SignInBody.self, from: request)
            let body = try received.validated()
            // An invalid bearer is refused rather than ignored: the app believes it holds a guest session.
            var guest: Caller?
            if let token = try api.bearerToken(request) {
                guest = try await Authenticator(api.dependencies).authenticateAllowingMerged(bearer: token)
            }
            let response = try await SignIn(api.dependencies).signIn(provider: provider, request: body, guest: guest,
                                                                     client: api.client(request, context))
            api.metrics.recordSignIn(provider: provider.rawValue, outcome: "success")
            api.redeemAppleCode(received.authorizationCode, provider: provider, idToken: body.idToken, nonce: body.nonce,
                                logger: context.logger)
            return JSONResponse.make(response)
        } catch let error as LanyardError {
            api.metrics.recordSignIn(provider: providerName == "apple" || providerName == "google" ? providerName : "other",
                                     outcome: error.code.rawValue)
            throw error
        }
    }

    @Sendable func anonymous(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        _ = try await JSONBody.decode(EmptyBody.self, from: request)
        return JSONResponse.make(try await AnonymousAccounts(api.dependencies).create(client: api.client(request, context)))
    }

    @Sendable func refresh(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(RefreshBody.self, from: request)
        return JSONResponse.make(try await Refresh(api.dependencies).refresh(
            token: body.refreshToken, client: api.client(request, context)))
    }

    @Sendable func signOut(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try await api.caller(request)
        let scope = try await JSONBody.decode(SignOutBody.self, from: request).validatedScope()
        try await SessionManagement(api.dependencies).signOut(caller, scope: scope, client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func link(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try await api.caller(request)
        let provider = try api.provider(context)
        let body = try await JSONBody.decode(ProviderTokenBody.self, from: request)
        let linked = try await Linking(api.dependencies).link(
            provider: provider, idToken: try body.validatedToken(), nonce: try body.validatedNonce(), caller: caller,
            client: api.client(request, context))
        api.redeemAppleCode(body.authorizationCode, provider: provider, idToken: body.idToken, nonce: body.nonce,
                            logger: context.logger)
        return JSONResponse.make(linked)
    }

    @Sendable func unlink(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try await api.caller(request)
        let provider = try api.provider(context)
        return JSONResponse.make(try await Linking(api.dependencies).unlink(
            provider: provider, caller: caller, client: api.client(request, context)))
    }

    @Sendable func reauthenticate(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try await api.caller(request)
        let provider = try api.provider(context)
        let body = try await JSONBody.decode(ProviderTokenBody.self, from: request)
        let session = try await Reauthentication(api.dependencies).reauthenticate(
            provider: provider, idToken: try body.validatedToken(), nonce: try body.validatedNonce(), caller: caller,
            client: api.client(request, context))
        api.redeemAppleCode(body.authorizationCode, provider: provider, idToken: body.idToken, nonce: body.nonce,
                            logger: context.logger)
        return JSONResponse.make(session)
    }
}
