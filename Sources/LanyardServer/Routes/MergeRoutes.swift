import HTTPTypes
import Hummingbird
import LanyardCore
import LanyardSupport
import LanyardWire

/// `/v1/users/me/merge…` (reference section 15): merging two full accounts with proof of both.
struct MergeRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        let signedIn = router.group("v1/users/me").add(middleware: BearerAuthentication(api, .required))
        signedIn.post("merge/challenge", use: challenge)
        signedIn.get("merges/:id", use: details)
        // The account an earlier merge absorbed may ask again for that merge's answer (it was lost on the way).
        router.group("v1/users/me").add(middleware: BearerAuthentication(api, .optionalAllowingMerged))
            .post("merge", use: merge)
    }

    @Sendable func challenge(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await MergeChallenges(api.dependencies).issue(caller: try context.requireCaller()))
    }

    @Sendable func merge(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        guard let caller = context.caller else { throw LanyardError.unauthorized }
        let wire = try await JSONBody.decode(MergeBody.self, from: request)
        var body = AccountMerges.Request(proof: wire.proof, keep: wire.keep, onConflict: wire.onConflict,
                                         release: wire.release, dryRun: wire.dryRun)
        if let key = request.headers[.idempotencyKey] {
            guard !key.isEmpty, key.utf8.count <= 255 else {
                throw LanyardError.invalidRequest(field: "Idempotency-Key", "Idempotency-Key must be 1 to 255 characters")
            }
            body.idempotencyKey = key
        }
        return try JSONResponse.make(try await AccountMerges(api.dependencies).merge(body, caller: caller,
                                                                                client: api.client(request, context)))
    }

    @Sendable func details(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        try JSONResponse.make(try await AccountMerges(api.dependencies).details(mergeID: try context.identifier("id"),
                                                                          caller: try context.requireCaller()))
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
}
