import Hummingbird
import LanyardCore
import LanyardWire

/// `/v1/auth/*`: sign-in, guests, refresh, sign-out, linking and re-authentication.
struct AuthRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        // Each group's middleware runs in the order added, before the handler.
        router.group("v1/auth").add(middleware: SignInMetrics(metrics: api.metrics,
                                                                   offered: Set(api.dependencies.signInMethods.offered.map(\.provider.rawValue))))
            .add(middleware: RateLimit(api, .signIn, per: .clientIP))
            .add(middleware: BearerAuthentication(api, .optionalAllowingMergedGuest))
            .post("signin/:provider", use: signIn)
        router.group("v1/auth").add(middleware: RateLimit(api, .anonymous, per: .clientIP)).post("anonymous", use: anonymous)
        router.group("v1/auth").add(middleware: RateLimit(api, .signIn, per: .clientIP)).post("refresh", use: refresh)
        let signedIn = router.group("v1/auth").add(middleware: BearerAuthentication(api, .required))
        signedIn.post("signout", use: signOut)
        signedIn.delete("link/:provider", use: unlink)
        signedIn.group().add(middleware: RateLimit(api, .link, per: .caller)).post("link/:provider", use: link)
        signedIn.group().add(middleware: RateLimit(api, .signIn, per: .clientIP)).post("reauthenticate/:provider", use: reauthenticate)
    }

    @Sendable func signIn(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let provider = try api.provider(context)
        let received = try await JSONBody.decode(SignInBody.self, from: request)
        let body = try received.validated()
        let response = try await SignIn(api.dependencies).signIn(provider: provider, request: body, guest: context.caller,
                                                                 client: api.client(request, context))
        api.redeemAppleCode(received.authorizationCode, provider: provider, idToken: body.idToken, nonce: body.nonce,
                            logger: context.logger)
        return JSONResponse.make(response)
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
        let caller = try context.requireCaller()
        let scope = try await JSONBody.decode(SignOutBody.self, from: request).scope ?? .local
        try await SessionManagement(api.dependencies).signOut(caller, scope: scope, client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func link(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
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
        let caller = try context.requireCaller()
        let provider = try api.method(context)
        return JSONResponse.make(try await Linking(api.dependencies).unlink(
            provider: provider, caller: caller, client: api.client(request, context)))
    }

    @Sendable func reauthenticate(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
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
