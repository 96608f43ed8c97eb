import LanyardCore

/// Request bodies of `/v1/auth/*` and `/v1/users/me`, exactly as DESIGN section 3 names their fields.
struct SignInBody: RequestBody {
    let idToken: String
    let nonce: String?
    let givenName: String?
    let familyName: String?
    /// Apple's single-use code, redeemed for the refresh token that account deletion revokes (DESIGN section 10).
    let authorizationCode: String?

    init(_ fields: BodyFields) throws {
        idToken = try fields.string("id_token")
        nonce = try fields.optionalString("nonce")
        givenName = try fields.optionalString("given_name")
        familyName = try fields.optionalString("family_name")
        authorizationCode = try Field.optional(try fields.optionalString("authorization_code"), "authorization_code")
    }

    func validated() throws -> SignInRequest {
        SignInRequest(idToken: try Field.nonEmpty(idToken, "id_token"),
                      nonce: try Field.optional(nonce, "nonce"),
                      givenName: try Field.optional(givenName, "given_name", maximumLength: 200),
                      familyName: try Field.optional(familyName, "family_name", maximumLength: 200))
    }
}

struct ProviderTokenBody: RequestBody {
    let idToken: String
    let nonce: String?
    let authorizationCode: String?

    init(_ fields: BodyFields) throws {
        idToken = try fields.string("id_token")
        nonce = try fields.optionalString("nonce")
        authorizationCode = try Field.optional(try fields.optionalString("authorization_code"), "authorization_code")
    }

    func validatedToken() throws -> String { try Field.nonEmpty(idToken, "id_token") }
    func validatedNonce() throws -> String? { try Field.optional(nonce, "nonce") }
}

struct RefreshBody: RequestBody {
    let refreshToken: String

    init(_ fields: BodyFields) throws {
        refreshToken = try fields.string("refresh_token")
    }
}

struct SignOutBody: RequestBody {
    let scope: String?

    init(_ fields: BodyFields) throws {
        scope = try fields.optionalString("scope")
    }

    func validatedScope() throws -> SessionManagement.SignOutScope {
        guard let scope else { return .local }
        guard let parsed = SessionManagement.SignOutScope(rawValue: scope) else {
            throw LanyardError.invalidRequest(field: "scope", "scope must be local, global or others")
        }
        return parsed
    }
}

/// A body that may be absent or `{}`; anything else must still be a JSON object.
struct EmptyBody: RequestBody {
    init(_ fields: BodyFields) {}
}

struct ProfilePatchBody: RequestBody {
    let displayName: String?
    /// Whether the body names `display_name` at all; `null` clears the name.
    let hasDisplayName: Bool

    init(_ fields: BodyFields) throws {
        hasDisplayName = fields.contains("display_name")
        displayName = try fields.optionalString("display_name")
    }
}
