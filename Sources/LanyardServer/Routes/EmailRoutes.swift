import Hummingbird
import LanyardCore
import LanyardWire

/// `/v1/auth/email/*`: the email identity's flow (reference section 18). `start` is limited per address, per
/// client IP and per deployment inside the flow's own transaction; `verify`, `complete` and `recover` (an operator's
/// recovery code) by the sign-in limit.
struct EmailRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        let email = router.group("v1/auth/email").add(middleware: BearerAuthentication(api, .optionalAllowingMergedGuest))
        email.post("start", use: start)
        let finishing = email.group().add(middleware: RateLimit(api, .signIn, per: .clientIP))
        finishing.post("verify", use: verify)
        finishing.post("complete", use: complete)
        finishing.post("recover", use: recover)
    }

    @Sendable func start(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(EmailStartRequest.self, from: request)
        let started = try await EmailFlows(api.dependencies).start(body, caller: context.caller,
                                                                   client: api.client(request, context))
        return try JSONResponse.make(started, status: .accepted, headers: [.cacheControl: "no-store"])
    }

    @Sendable func verify(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(EmailVerifyRequest.self, from: request)
        return try Self.answer(try await EmailFlows(api.dependencies).verify(body, caller: context.caller,
                                                                            client: api.client(request, context)))
    }

    @Sendable func complete(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(EmailCompleteRequest.self, from: request)
        return try Self.answer(try await EmailFlows(api.dependencies).complete(body, caller: context.caller,
                                                                              client: api.client(request, context)))
    }

    @Sendable func recover(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(EmailRecoverRequest.self, from: request)
        return JSONResponse.make(try await EmailFlows(api.dependencies).recover(body, client: api.client(request, context)))
    }

    static func answer(_ outcome: EmailFlows.Outcome) throws -> Response {
        switch outcome {
        case .session(let session): JSONResponse.make(session)
        case .linked(let linked): JSONResponse.make(linked)
        }
    }
}
