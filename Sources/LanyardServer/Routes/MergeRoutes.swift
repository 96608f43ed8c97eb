import HTTPTypes
import Hummingbird
import LanyardCore
import LanyardSupport

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

    struct MergeBody: RequestBody {
        let request: AccountMerges.Request

        init(_ fields: BodyFields) throws {
            guard case .object(let proof) = try fields.value("proof") else {
                throw LanyardError.invalidRequest(field: "proof", "proof must be {\"provider\", \"id_token\"}")
            }
            guard let provider = proof["provider"]?.stringValue, !provider.isEmpty else {
                throw LanyardError.invalidRequest(field: "proof.provider", "proof.provider is required")
            }
            guard let token = proof["id_token"]?.stringValue, !token.isEmpty, !token.containsNUL else {
                throw LanyardError.invalidRequest(field: "proof.id_token", "proof.id_token is required")
            }
            let keep = try fields.optionalString("keep").map { text in
                guard let keep = MergeKeep(rawValue: text) else {
                    throw LanyardError.invalidRequest(field: "keep", "keep must be current or other")
                }
                return keep
            } ?? .current
            let rule = try fields.optionalString("on_conflict").map { text in
                guard let rule = MergeConflictRule(rawValue: text) else {
                    throw LanyardError.invalidRequest(field: "on_conflict", "on_conflict must be newer, current or other")
                }
                return rule
            } ?? .newer
            var release: [String] = []
            if fields.contains("release") {
                guard case .array(let values) = try fields.value("release"),
                      let names = Optional(values.compactMap(\.stringValue)), names.count == values.count else {
                    throw LanyardError.invalidRequest(field: "release", "release must be a list of providers, such as [\"apple\"]")
                }
                release = names
            }
            request = AccountMerges.Request(provider: provider, idToken: token, keep: keep, onConflict: rule,
                                            release: release, dryRun: try fields.optionalBool("dry_run") ?? false)
        }
    }

    @Sendable func challenge(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        JSONResponse.make(try await MergeChallenges(api.dependencies).issue(caller: try context.requireCaller()))
    }

    @Sendable func merge(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        guard let caller = context.caller else { throw LanyardError.unauthorized }
        var body = try await JSONBody.decode(MergeBody.self, from: request).request
        if let key = request.headers[.idempotencyKey] {
            guard !key.isEmpty, key.utf8.count <= 255 else {
                throw LanyardError.invalidRequest(field: "Idempotency-Key", "Idempotency-Key must be 1 to 255 characters")
            }
            body.idempotencyKey = key
        }
        return JSONResponse.make(try await AccountMerges(api.dependencies).merge(body, caller: caller,
                                                                                client: api.client(request, context)))
    }

    @Sendable func details(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        JSONResponse.make(try await AccountMerges(api.dependencies).details(mergeID: context.identifier("id"),
                                                                          caller: try context.requireCaller()))
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
}
