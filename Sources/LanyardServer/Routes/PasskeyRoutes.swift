import Hummingbird
import LanyardCore
import LanyardWire

/// `/v1/auth/passkeys/*` and `/v1/users/me/passkeys` (reference section 19). Ceremonies count against the
/// client IP's sign-in limit; registration also against the account's link limit.
struct PasskeyRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        let ceremonies = router.group("v1/auth/passkeys").add(middleware: RateLimit(api, .signIn, per: .clientIP))
        ceremonies.post("signin/options", use: signInOptions)
        ceremonies.group().add(middleware: BearerAuthentication(api, .optionalAllowingMergedGuest)).post("signin", use: signIn)
        let registering = ceremonies.group().add(middleware: BearerAuthentication(api, .required))
        registering.post("register/options", use: registrationOptions)
        registering.group().add(middleware: RateLimit(api, .link, per: .caller)).post("register", use: register)
        let mine = router.group("v1/users/me/passkeys").add(middleware: BearerAuthentication(api, .required))
        mine.get(use: list)
        mine.patch(":id", use: rename)
        mine.delete(":id", use: remove)
    }

    @Sendable func registrationOptions(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        _ = try await JSONBody.decode(EmptyBody.self, from: request)
        return try JSONResponse.make(try await Passkeys(api.dependencies).registrationOptions(caller: try context.requireCaller()))
    }

    @Sendable func register(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(PasskeyRegisterRequest.self, from: request)
        let registered = try await Passkeys(api.dependencies).register(body, caller: try context.requireCaller(),
                                                                      client: api.client(request, context))
        return try JSONResponse.make(registered, status: .created)
    }

    @Sendable func signInOptions(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        _ = try await JSONBody.decode(EmptyBody.self, from: request)
        return try JSONResponse.make(try await Passkeys(api.dependencies).signInOptions())
    }

    @Sendable func signIn(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(PasskeySignInRequest.self, from: request)
        return JSONResponse.make(try await Passkeys(api.dependencies).signIn(body, caller: context.caller,
                                                                            client: api.client(request, context)))
    }

    @Sendable func list(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return try JSONResponse.make(PasskeyList(passkeys: try await Passkeys(api.dependencies).list(userID: caller.userID)))
    }

    @Sendable func rename(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(PasskeyRenameRequest.self, from: request)
        return try JSONResponse.make(try await Passkeys(api.dependencies).rename(
            id: try context.identifier("id"), to: body.name, caller: try context.requireCaller(), client: api.client(request, context)))
    }

    @Sendable func remove(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return JSONResponse.make(try await Passkeys(api.dependencies).remove(
            id: try context.identifier("id"), userID: caller.userID, caller: caller, actor: nil, client: api.client(request, context)))
    }
}
