import Hummingbird
import LanyardCore
import LanyardWire
import LanyardSupport

/// `/v1/data/{collection}/{id}` (reference section 7).
struct DataRoutes {
    let api: APIContext
    /// A 256 KiB record plus its envelope.
    static let bodyLimit = DataRecords.maximumRecordBytes + 4 * 1024

    func register(on router: Router<LanyardRequestContext>) {
        let data = router.group("v1/data").add(middleware: BearerAuthentication(api, .required))
        data.put(":collection/:id", use: put)
        data.get(":collection/:id", use: get)
        data.delete(":collection/:id", use: delete)
        data.get(":collection", use: changes)
    }

    @Sendable func put(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(DataRecordBody<JSONValue>.self, from: request, limit: Self.bodyLimit,
                                             statedLimit: DataRecords.maximumRecordBytes)
        let record = try await DataRecords(api.dependencies).put(
            collection: try context.parameters.require("collection"), id: try context.parameters.require("id"),
            data: body.data, expectedVersion: try Self.ifMatch(request), caller: caller)
        return JSONResponse.make(record, headers: [.eTag: "\"\(record.version)\""])
    }

    @Sendable func get(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let record = try await DataRecords(api.dependencies).get(
            collection: try context.parameters.require("collection"), id: try context.parameters.require("id"), caller: caller)
        return JSONResponse.make(record, headers: [.eTag: "\"\(record.version)\""])
    }

    @Sendable func delete(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let tombstone = try await DataRecords(api.dependencies).delete(
            collection: try context.parameters.require("collection"), id: try context.parameters.require("id"),
            expectedVersion: try Self.ifMatch(request), caller: caller)
        return JSONResponse.make(tombstone)
    }

    @Sendable func changes(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return JSONResponse.make(try await DataRecords(api.dependencies).changes(
            collection: try context.parameters.require("collection"),
            since: request.uri.queryParameters["since"].map(String.init), limit: try Self.limit(request), caller: caller))
    }

    /// `?limit=N`, when given.
    static func limit(_ request: Request) throws -> Int? {
        guard let text = request.uri.queryParameters["limit"] else { return nil }
        guard let limit = Int(String(text)) else {
            throw LanyardError.invalidRequest(field: "limit", "limit must be a whole number")
        }
        return limit
    }

    /// `If-Match: "3"` (quotes optional).
    static func ifMatch(_ request: Request) throws -> Int64? {
        guard let header = request.headers[.ifMatch] else { return nil }
        let trimmed = header.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\"", with: "")
        guard let version = Int64(trimmed) else {
            throw LanyardError.invalidRequest(field: "If-Match", "If-Match must be a record version such as \"3\"")
        }
        return version
    }
}
