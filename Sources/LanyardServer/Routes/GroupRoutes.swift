import Hummingbird
import LanyardCore
import LanyardSupport
import LanyardWire

/// `/v1/groups` and `/v1/invites` (reference section 14): groups, members, invites and transfers. Group data has
/// `GroupDataRoutes`.
struct GroupRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        let groups = router.group("v1/groups").add(middleware: BearerAuthentication(api, .required))
        groups.post(use: create)
        groups.get(use: list)
        groups.get(":gid", use: get)
        groups.patch(":gid", use: update)
        groups.delete(":gid", use: dissolve)
        groups.post(":gid/invites", use: createInvite)
        groups.get(":gid/invites", use: listInvites)
        groups.delete(":gid/invites/:id", use: revokeInvite)
        groups.patch(":gid/members/:uid", use: updateMember)
        groups.delete(":gid/members/:uid", use: removeMember)
        groups.post(":gid/leave", use: leave)
        groups.post(":gid/transfer", use: transfer)
        let invites = router.group("v1/invites").add(middleware: BearerAuthentication(api, .required))
        invites.get(":code", use: preview)
        invites.post(":code/accept", use: accept)
    }

    @Sendable func create(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(GroupSettingsBody.self, from: request)
        let group = try await Groups(api.dependencies).create(body, caller: caller, client: api.client(request, context))
        return try JSONResponse.make(group, status: .created)
    }

    @Sendable func list(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await Groups(api.dependencies).list(caller: try context.requireCaller()))
    }

    @Sendable func get(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await Groups(api.dependencies).get(try context.identifier("gid"), caller: try context.requireCaller()))
    }

    @Sendable func update(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(GroupSettingsBody.self, from: request)
        return try JSONResponse.make(try await Groups(api.dependencies).update(
            try context.identifier("gid"), body, caller: caller, client: api.client(request, context)))
    }

    @Sendable func dissolve(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await Groups(api.dependencies).dissolve(try context.identifier("gid"), caller: caller,
                                                    client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func createInvite(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(InviteBody.self, from: request)
        return try JSONResponse.make(try await GroupInvites(api.dependencies).create(
            try context.identifier("gid"), body, caller: caller), status: .created)
    }

    @Sendable func listInvites(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await GroupInvites(api.dependencies).list(try context.identifier("gid"),
                                                                        caller: try context.requireCaller()))
    }

    @Sendable func revokeInvite(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try await GroupInvites(api.dependencies).revoke(try context.identifier("gid"), inviteID: try context.identifier("id"),
                                                        caller: try context.requireCaller())
        return JSONResponse.noContent()
    }

    /// `PATCH .../members/me` sets `share_email`; `PATCH .../members/{user_id}` (the owner) sets `role`.
    @Sendable func updateMember(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(MemberBody.self, from: request)
        let (groupID, target) = (try context.identifier("gid"), try context.identifier("uid"))
        let members = GroupMembers(api.dependencies)
        if target == "me" {
            guard let share = body.shareEmail else {
                throw LanyardError.invalidRequest(field: "share_email", "share_email is required")
            }
            return try JSONResponse.make(try await members.setShareEmail(groupID, share: share, caller: caller))
        }
        guard let role = body.role else { throw LanyardError.invalidRequest(field: "role", "role is required") }
        return try JSONResponse.make(try await members.setRole(groupID, userID: target, role: role, caller: caller,
                                                           client: api.client(request, context)))
    }

    @Sendable func removeMember(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await GroupMembers(api.dependencies).remove(try context.identifier("gid"), userID: try context.identifier("uid"),
                                                        caller: caller, client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func leave(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await GroupMembers(api.dependencies).leave(try context.identifier("gid"), caller: caller,
                                                       client: api.client(request, context))
        return JSONResponse.noContent()
    }

    @Sendable func transfer(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(TransferBody.self, from: request)
        return try JSONResponse.make(try await GroupMembers(api.dependencies).transfer(
            try context.identifier("gid"), to: body.userID.rawValue, caller: caller, client: api.client(request, context)))
    }

    @Sendable func preview(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return try JSONResponse.make(try await GroupInvites(api.dependencies).preview(
            code: try context.parameters.require("code"), caller: caller, client: api.client(request, context)))
    }

    @Sendable func accept(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return try JSONResponse.make(try await GroupInvites(api.dependencies).accept(
            code: try context.parameters.require("code"), caller: caller, client: api.client(request, context)))
    }
}
