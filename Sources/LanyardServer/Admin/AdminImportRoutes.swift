import Foundation
import Hummingbird
import LanyardCore
import LanyardWire

/// `/v1/admin/imports` (reference section 24): an import for operators without a shell (Lanyard's JSON lines as the
/// body), the batches, and undo.
extension AdminRoutes {
    /// The largest body `POST /v1/admin/imports` takes: some 40,000 people a request; larger imports are several
    /// requests (each a batch) or `lanyard import`.
    static let importLimit = 32 * 1024 * 1024

    @Sendable func importLines(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let query = AdminQuery(request)
        let dryRun = try query.bool("dry_run") ?? false
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: Self.importLimit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw LanyardError.payloadTooLarge(limit: Self.importLimit)
        }
        let dependencies = api.dependencies
        let file = try ImportSource.jsonl.read(Array(body.readableBytesView), options: ImportOptions(),
                                               now: dependencies.clock.now(),
                                               providers: Set(dependencies.signInMethods.offered.map(\.provider.rawValue)))
        guard file.records.count + file.skipped.count > 0 else {
            throw LanyardError.invalidRequest(field: "body", "Send Lanyard's import lines: one JSON object a line")
        }
        let report = try await Importer(dependencies).run(file, .init(origin: "admin-api", actor: "admin", dryRun: dryRun),
                                                          client: api.client(request, context))
        return try JSONResponse.make(report, status: dryRun || report.batchID == nil ? .ok : .created)
    }

    @Sendable func importBatches(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await ImportBatches(api.dependencies).list())
    }

    @Sendable func importBatch(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await ImportBatches(api.dependencies).batch(id: try context.parameters.require("id")))
    }

    @Sendable func undoImport(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let force = try AdminQuery(request).bool("force") ?? false
        return try JSONResponse.make(try await ImportBatches(api.dependencies).undo(
            batchID: try context.parameters.require("id"), force: force, actor: "admin", client: api.client(request, context)))
    }
}
