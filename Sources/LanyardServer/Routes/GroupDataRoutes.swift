import Hummingbird
import LanyardCore
import LanyardWire
import LanyardSupport

/// `/v1/groups/{gid}/data`, `/policies` and `/shares`, and the shared collections under `/members/{user_id}/data`
/// (reference section 14): the personal data routes' shapes, headers and limits.
struct GroupDataRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        let groups = router.group("v1/groups").add(middleware: BearerAuthentication(api, .required))
        groups.put(":gid/data/:collection/:id", use: put)
        groups.get(":gid/data/:collection/:id", use: get)
        groups.delete(":gid/data/:collection/:id", use: delete)
        groups.get(":gid/data/:collection", use: changes)
        groups.put(":gid/policies/:collection", use: setPolicy)
        groups.get(":gid/policies/:collection", use: policy)
        groups.get(":gid/shares", use: shares)
        groups.put(":gid/shares/:collection", use: share)
        groups.delete(":gid/shares/:collection", use: unshare)
        groups.get(":gid/members/:uid/data/:collection/:id", use: sharedRecord)
        groups.get(":gid/members/:uid/data/:collection", use: sharedChanges)
    }

    private var data: GroupData { GroupData(api.dependencies) }
    private var groupShares: GroupShares { GroupShares(api.dependencies) }

    @Sendable func put(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(DataRecordBody<JSONValue>.self, from: request, limit: DataRoutes.bodyLimit,
                                             statedLimit: DataRecords.maximumRecordBytes)
        let record = try await data.put(try context.identifier("gid"), collection: try context.parameters.require("collection"),
                                        id: try context.parameters.require("id"), data: body.data,
                                        expectedVersion: try DataRoutes.ifMatch(request), caller: caller)
        return JSONResponse.make(record, headers: [.eTag: "\"\(record.version)\""])
    }

    @Sendable func get(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let record = try await data.get(try context.identifier("gid"), collection: try context.parameters.require("collection"),
                                        id: try context.parameters.require("id"), caller: try context.requireCaller())
        return JSONResponse.make(record, headers: [.eTag: "\"\(record.version)\""])
    }

    @Sendable func delete(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return JSONResponse.make(try await data.delete(
            try context.identifier("gid"), collection: try context.parameters.require("collection"),
            id: try context.parameters.require("id"), expectedVersion: try DataRoutes.ifMatch(request), caller: caller))
    }

    @Sendable func changes(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let query = request.uri.queryParameters
        return JSONResponse.make(try await data.changes(
            try context.identifier("gid"), collection: try context.parameters.require("collection"),
            since: query["since"].map(String.init), limit: try DataRoutes.limit(request), caller: caller))
    }

    @Sendable func setPolicy(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(PolicyBody.self, from: request)
        return try JSONResponse.make(try await data.setPolicy(
            try context.identifier("gid"), collection: try context.parameters.require("collection"), body, caller: caller))
    }

    @Sendable func policy(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await data.policy(try context.identifier("gid"),
                                                collection: try context.parameters.require("collection"),
                                                caller: try context.requireCaller()))
    }

    @Sendable func shares(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await groupShares.list(try context.identifier("gid"), caller: try context.requireCaller()))
    }

    @Sendable func share(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await groupShares.share(try context.identifier("gid"),
                                                      collection: try context.parameters.require("collection"),
                                                      caller: try context.requireCaller()))
    }

    @Sendable func unshare(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try await groupShares.unshare(try context.identifier("gid"), collection: try context.parameters.require("collection"),
                                      caller: try context.requireCaller())
        return JSONResponse.noContent()
    }

    @Sendable func sharedRecord(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let record = try await groupShares.get(try context.identifier("gid"), member: try context.identifier("uid"),
                                               collection: try context.parameters.require("collection"),
                                               id: try context.parameters.require("id"), caller: try context.requireCaller())
        return JSONResponse.make(record, headers: [.eTag: "\"\(record.version)\""])
    }

    @Sendable func sharedChanges(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return JSONResponse.make(try await groupShares.changes(
            try context.identifier("gid"), member: try context.identifier("uid"),
            collection: try context.parameters.require("collection"),
            since: request.uri.queryParameters["since"].map(String.init), limit: try DataRoutes.limit(request),
            caller: caller))
    }
}
