import Foundation
import Hummingbird
import LanyardCore
import LanyardWire
import LanyardSupport

/// `/v1/admin/*` (reference section 11), behind `AdminKeyMiddleware`; not mounted without `LANYARD_ADMIN_KEY`.
struct AdminRoutes {
    let api: APIContext
    let key: String

    func register(on router: Router<LanyardRequestContext>) {
        let group = router.group("v1/admin").add(middleware: AdminKeyMiddleware(key: key, api: api))
        group.get("users", use: users)
        group.get("users/:id", use: user)
        group.patch("users/:id", use: updateUser)
        group.delete("users/:id", use: deleteUser)
        group.post("users/:id/signout", use: signOut)
        group.post("users/:id/recovery", use: sendRecovery)
        group.get("users/:id/passkeys", use: passkeys)
        group.delete("users/:id/passkeys/:pid", use: removePasskey)
        group.get("email/deliveries", use: emailDeliveries)
        group.delete("users/:id/sessions/:session", use: revokeSession)
        group.get("groups", use: groups)
        group.get("groups/:gid", use: groupDetails)
        group.delete("groups/:gid", use: dissolveGroup)
        group.post("merges", use: merge)
        group.get("merges", use: merges)
        group.post("merges/:id/revert", use: revertMerge)
        group.post("imports", use: importLines)
        group.get("imports", use: importBatches)
        group.get("imports/:id", use: importBatch)
        group.post("imports/:id/undo", use: undoImport)
        group.get("audit", use: audit)
        group.get("stats", use: stats)
        group.get("providers") { _, _ in try JSONResponse.make(ProviderStatus(api.dependencies).list()) }
    }

    var administration: AccountAdministration { AccountAdministration(api.dependencies) }

    @Sendable func users(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let query = AdminQuery(request)
        let search = AccountAdministration.Search(
            query: query.string("query"), anonymous: try query.bool("anonymous"), disabled: try query.bool("disabled"),
            provider: query.string("provider"), legacyID: query.string("legacy_id"),
            importBatch: query.string("import_batch"), cursor: query.string("cursor"),
            limit: try query.integer("limit"))
        return try JSONResponse.make(try await administration.users(search))
    }

    @Sendable func user(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await administration.user(id: try context.identifier("id")))
    }

    @Sendable func updateUser(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(AdminUserPatchBody.self, from: request)
        guard body.displayName != nil || body.disabled != nil else {
            throw LanyardError.invalidRequest(field: "body", "Send display_name, disabled or both")
        }
        return try JSONResponse.make(try await administration.update(
            id: try context.identifier("id"), displayName: body.displayName, disabled: body.disabled,
            client: api.client(request, context)))
    }

    @Sendable func deleteUser(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try await AccountDeletion(api.dependencies).deleteByAdmin(userID: try context.identifier("id"),
                                                                  client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func signOut(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let ended = try await administration.signOut(id: try context.identifier("id"),
                                                     client: api.client(request, context))
        return try JSONResponse.make(["sessions_ended": ended])
    }

    /// An operator sends the account's email identity a recovery code (reference section 18).
    @Sendable func sendRecovery(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let flowID = try await EmailFlows(api.dependencies).sendRecovery(
            userID: try context.identifier("id"), actor: "admin", client: api.client(request, context))
        return try JSONResponse.make(["flow_id": flowID], status: .accepted)
    }

    /// A user's passkeys (reference section 19).
    @Sendable func passkeys(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(PasskeyList(passkeys: try await Passkeys(api.dependencies).list(userID: try context.identifier("id"))))
    }

    /// An operator removes a passkey (a lost phone): no recent sign-in, never the account's last way in, audited.
    @Sendable func removePasskey(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        JSONResponse.make(try await Passkeys(api.dependencies).remove(
            id: try context.identifier("pid"), userID: try context.identifier("id"), caller: nil, actor: "admin",
            client: api.client(request, context)))
    }

    @Sendable func emailDeliveries(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let query = AdminQuery(request)
        let limit = min(max(try query.integer("limit") ?? 100, 1), 500)
        return try JSONResponse.make(try await EmailOutbox(api.dependencies).deliveries(status: query.string("status"),
                                                                                      limit: limit))
    }

    @Sendable func revokeSession(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try await administration.revokeSession(userID: try context.identifier("id"),
                                               sessionID: try context.identifier("session"),
                                               client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func groups(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let query = AdminQuery(request)
        return try JSONResponse.make(try await GroupAdministration(api.dependencies).groups(
            query: query.string("query"), limit: try query.integer("limit")))
    }

    @Sendable func groupDetails(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await GroupAdministration(api.dependencies).group(id: try context.identifier("gid")))
    }

    @Sendable func dissolveGroup(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try await GroupAdministration(api.dependencies).dissolve(id: try context.identifier("gid"),
                                                                 client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func merge(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(AdminMergeBody.self, from: request)
        return try JSONResponse.make(try await MergeAdministration(api.dependencies).merge(
            into: body.into, from: body.from, client: api.client(request, context)))
    }

    @Sendable func merges(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        guard let userID = AdminQuery(request).string("user_id") else {
            throw LanyardError.invalidRequest(field: "user_id", "user_id is required")
        }
        return try JSONResponse.make(try await MergeAdministration(api.dependencies).list(userID: Identifiers.canonical(userID)))
    }

    @Sendable func revertMerge(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await MergeAdministration(api.dependencies).revert(mergeID: try context.identifier("id"),
                                                                               client: api.client(request, context)))
    }

    @Sendable func audit(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let query = AdminQuery(request)
        return try JSONResponse.make(try await administration.audit(
            userID: query.string("user_id").map(Identifiers.canonical), type: query.string("type"), before: query.string("before"),
            limit: try query.integer("limit")))
    }

    @Sendable func stats(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await AdminStatistics(api.dependencies).compute())
    }
}

/// The query string of an admin request, read by name; an empty value counts as absent.
struct AdminQuery {
    let parameters: [String: String]

    init(_ request: Request) {
        var parameters: [String: String] = [:]
        for (name, value) in request.uri.queryParameters where !value.isEmpty {
            parameters[String(name)] = String(value)
        }
        self.parameters = parameters
    }

    func string(_ name: String) -> String? { parameters[name] }

    func bool(_ name: String) throws -> Bool? {
        guard let text = parameters[name] else { return nil }
        switch text {
        case "true", "1": return true
        case "false", "0": return false
        default: throw LanyardError.invalidRequest(field: name, "\(name) must be true or false")
        }
    }

    func integer(_ name: String) throws -> Int? {
        guard let text = parameters[name] else { return nil }
        guard let value = Int(text) else { throw LanyardError.invalidRequest(field: name, "\(name) must be a whole number") }
        return value
    }
}

/// `PATCH /v1/admin/users/{id}`: `display_name` (null clears it), `disabled`.
struct AdminUserPatchBody: RequestBody {
    /// `.some(nil)` when the body sets `display_name` to null.
    let displayName: String??
    let disabled: Bool?

    init(_ fields: BodyFields) throws {
        displayName = fields.contains("display_name") ? .some(try fields.optionalString("display_name")) : .none
        disabled = try fields.optionalBool("disabled")
    }
}
