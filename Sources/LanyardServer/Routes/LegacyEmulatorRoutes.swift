import Foundation
import Hummingbird
import LanyardCore
import LanyardEmulator
import LanyardSupport
import LanyardWire

/// The emulator's Firebase, Supabase and Clerk (reference section 24), mounted only in dev mode: their key sets,
/// which dev mode points the bridge at, and their session tokens.
struct LegacyEmulatorRoutes {
    let minter: LegacyTokenMinter

    func register(on router: Router<LanyardRequestContext>) {
        for source in LegacySource.allCases {
            router.get(RouterPath(stringLiteral: String(LegacyTokenMinter.keysPath(source).dropFirst()))) { _, _ in
                try JSONResponse.make(minter.jwks(source), headers: [.cacheControl: "public, max-age=300"])
            }
            router.post(RouterPath(stringLiteral: String(LegacyTokenMinter.mintPath(source).dropFirst()))) { request, _ in
                let body = try await JSONBody.decode(LegacyMintRequest.self, from: request)
                guard !body.sub.isEmpty else { throw LanyardError.invalidRequest(field: "sub", "sub must not be empty") }
                return try JSONResponse.make([source.tokenField: try minter.mint(source, body)])
            }
        }
    }
}

extension LegacyMintRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        var identities: [String: [String]]?
        if fields.contains("identities") {
            guard case .object(let object) = try fields.value("identities") else {
                throw LanyardError.invalidRequest(field: "identities", "identities must be {\"apple.com\": [\"…\"]}")
            }
            identities = try object.mapValues { value in
                let subjects: [JSONValue] = if case .array(let subjects) = value { subjects } else { [] }
                let strings = subjects.compactMap(\.stringValue)
                guard !strings.isEmpty, strings.count == subjects.count else {
                    throw LanyardError.invalidRequest(field: "identities", "each provider names an array of subjects")
                }
                return strings
            }
        }
        self.init(sub: try fields.string("sub"), identities: identities,
                  signInProvider: try fields.optionalString("sign_in_provider"),
                  isAnonymous: try fields.optionalBool("is_anonymous"), email: try fields.optionalString("email"),
                  emailVerified: try fields.optionalBool("email_verified"), name: try fields.optionalString("name"),
                  expiresIn: try fields.optionalInteger("expires_in"), aud: try fields.optionalString("aud"),
                  iss: try fields.optionalString("iss"), iat: try fields.optionalInteger("iat"),
                  role: try fields.optionalString("role"), tenant: try fields.optionalString("tenant"),
                  impersonatedBy: try fields.optionalString("impersonated_by"), pending: try fields.optionalBool("pending"),
                  alg: try fields.optionalString("alg"))
    }
}
