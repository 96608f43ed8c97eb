import LanyardCore

/// Request bodies of `/v1/auth/*`, exactly as DESIGN section 3 names their fields.
struct SignInBody: Decodable {
    let idToken: String
    let nonce: String?
    let givenName: String?
    let familyName: String?

    enum CodingKeys: String, CodingKey {
        case idToken = "id_token", nonce, givenName = "given_name", familyName = "family_name"
    }

    func validated() throws -> SignInRequest {
        SignInRequest(idToken: try Field.nonEmpty(idToken, "id_token"),
                      nonce: try Field.optional(nonce, "nonce"),
                      givenName: try Field.optional(givenName, "given_name", maximumLength: 200),
                      familyName: try Field.optional(familyName, "family_name", maximumLength: 200))
    }
}

struct ProviderTokenBody: Decodable {
    let idToken: String
    let nonce: String?

    enum CodingKeys: String, CodingKey {
        case idToken = "id_token", nonce
    }

    func validatedToken() throws -> String { try Field.nonEmpty(idToken, "id_token") }
    func validatedNonce() throws -> String? { try Field.optional(nonce, "nonce") }
}

struct RefreshBody: Decodable {
    let refreshToken: String

    enum CodingKeys: String, CodingKey {
        case refreshToken = "refresh_token"
    }
}

struct SignOutBody: Decodable {
    let scope: String?

    func validatedScope() throws -> SessionManagement.SignOutScope {
        guard let scope else { return .local }
        guard let parsed = SessionManagement.SignOutScope(rawValue: scope) else {
            throw LanyardError.invalidRequest(field: "scope", "scope must be local, global or others")
        }
        return parsed
    }
}

struct ProfilePatchBody: Decodable {
    let displayName: String?
    let hasDisplayName: Bool

    enum CodingKeys: String, CodingKey {
        case displayName = "display_name"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hasDisplayName = container.contains(.displayName)
        displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
    }
}
