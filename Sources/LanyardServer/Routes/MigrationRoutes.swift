import Hummingbird
import LanyardCore
import LanyardWire

/// `POST /v1/auth/migrate/{source}` (reference section 24): the bridge. Counted against the sign-in limit of the
/// client's IP, like every sign-in.
struct MigrationRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        router.group("v1/auth").add(middleware: RateLimit(api, .signIn, per: .clientIP)).post("migrate/:source", use: migrate)
    }

    @Sendable func migrate(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let source = try api.dependencies.signInMethods.bridge(named: try context.parameters.require("source"))
        let token: String = switch source {
        case .firebase: try await JSONBody.decode(FirebaseMigrationRequest.self, from: request).idToken
        case .supabase: try await JSONBody.decode(SupabaseMigrationRequest.self, from: request).accessToken
        case .clerk: try await JSONBody.decode(ClerkMigrationRequest.self, from: request).sessionToken
        }
        let proof = IdentityProof.legacySession(source: source, token: try Field.nonEmpty(token, source.tokenField))
        return JSONResponse.make(try await Bridge(api.dependencies).migrate(proof, client: api.client(request, context)))
    }
}

extension FirebaseMigrationRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(idToken: try fields.string("id_token"))
    }
}

extension SupabaseMigrationRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(accessToken: try fields.string("access_token"))
    }
}

extension ClerkMigrationRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(sessionToken: try fields.string("session_token"))
    }
}
