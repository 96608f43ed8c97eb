import Hummingbird
import LanyardCore
import LanyardWire

/// `/v1/users/me` and `/v1/sessions`.
struct UserRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        router.group().add(middleware: BearerAuthentication(api, .requiredReadingAccount)).get("v1/users/me", use: me)
        let signedIn = router.group().add(middleware: BearerAuthentication(api, .required))
        signedIn.patch("v1/users/me", use: updateMe)
        signedIn.delete("v1/users/me", use: deleteMe)
        signedIn.get("v1/sessions", use: sessions)
        signedIn.delete("v1/sessions/:id", use: revokeSession)
    }

    @Sendable func me(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        guard let account = context.account else { throw LanyardError.unauthorized }
        let legacy = context.caller?.account?.user.legacy
        return JSONResponse.make(AccountResponse(user: account, legacyID: legacy?.id, legacySource: legacy?.source))
    }

    @Sendable func updateMe(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(ProfileUpdate.self, from: request)
        guard body.changesDisplayName else {
            throw LanyardError.invalidRequest(field: "display_name", "display_name is required")
        }
        return JSONResponse.make(try await Profile(api.dependencies).setDisplayName(body.displayName, caller: caller))
    }

    @Sendable func deleteMe(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await AccountDeletion(api.dependencies).delete(caller, client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func sessions(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return try JSONResponse.make(SessionList(sessions: try await SessionManagement(api.dependencies).list(for: caller)))
    }

    @Sendable func revokeSession(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await SessionManagement(api.dependencies).revoke(
            sessionID: try context.identifier("id"), caller: caller, client: api.client(request, context))
        return JSONResponse.noContent()
    }
}
