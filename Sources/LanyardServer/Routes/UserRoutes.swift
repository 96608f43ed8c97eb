import Hummingbird
import LanyardCore

/// `/v1/users/me` and `/v1/sessions`.
struct UserRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        router.get("v1/users/me", use: me)
        router.patch("v1/users/me", use: updateMe)
        router.delete("v1/users/me", use: deleteMe)
        router.get("v1/sessions", use: sessions)
        router.delete("v1/sessions/:id", use: revokeSession)
    }

    @Sendable func me(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let (_, account) = try await api.callerReadingAccount(request)
        return JSONResponse.make(MeResponse(user: account))
    }

    @Sendable func updateMe(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try await api.caller(request)
        let body = try await JSONBody.decode(ProfilePatchBody.self, from: request)
        guard body.hasDisplayName else {
            throw LanyardError.invalidRequest(field: "display_name", "display_name is required")
        }
        return JSONResponse.make(try await Profile(api.dependencies).setDisplayName(body.displayName, caller: caller))
    }

    @Sendable func deleteMe(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try await api.caller(request)
        try await AccountDeletion(api.dependencies).delete(caller, client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func sessions(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try await api.caller(request)
        struct Sessions: Encodable { let sessions: [SessionView] }
        return try JSONResponse.make(Sessions(sessions: try await SessionManagement(api.dependencies).list(for: caller)))
    }

    @Sendable func revokeSession(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try await api.caller(request)
        try await SessionManagement(api.dependencies).revoke(
            sessionID: context.parameters.get("id") ?? "", caller: caller, client: api.client(request, context))
        return JSONResponse.noContent()
    }
}
