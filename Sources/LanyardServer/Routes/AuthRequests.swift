import LanyardCore
import LanyardWire

// The request bodies of `/v1/auth/*` and `/v1/users/me` are the contract's wire types (`LanyardWire`), read here
// from the strictly parsed body (`BodyFields`), never by `JSONDecoder`: the one reader of untrusted input is
// `JSONParser`. `WireRequestTests` checks that what the SDK encodes is read back as the same value.

extension SignInBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(idToken: try fields.string("id_token"),
                  nonce: try fields.optionalString("nonce"),
                  givenName: try fields.optionalString("given_name"),
                  familyName: try fields.optionalString("family_name"),
                  authorizationCode: try Field.optional(try fields.optionalString("authorization_code"), "authorization_code"))
    }

    func validated() throws -> SignInRequest {
        SignInRequest(idToken: try Field.nonEmpty(idToken, "id_token"),
                      nonce: try Field.optional(nonce, "nonce"),
                      givenName: try Field.optional(givenName, "given_name", maximumLength: 200),
                      familyName: try Field.optional(familyName, "family_name", maximumLength: 200))
    }
}

extension ProviderTokenBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(idToken: try fields.string("id_token"),
                  nonce: try fields.optionalString("nonce"),
                  authorizationCode: try Field.optional(try fields.optionalString("authorization_code"), "authorization_code"))
    }

    func validatedToken() throws -> String { try Field.nonEmpty(idToken, "id_token") }
    func validatedNonce() throws -> String? { try Field.optional(nonce, "nonce") }
}

extension RefreshBody: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(refreshToken: try fields.string("refresh_token"))
    }
}

extension SignOutBody: RequestBody {
    init(_ fields: BodyFields) throws {
        guard let name = try fields.optionalString("scope") else {
            self.init()
            return
        }
        guard let scope = SignOutScope(rawValue: name) else {
            throw LanyardError.invalidRequest(field: "scope", "scope must be local, global or others")
        }
        self.init(scope: scope)
    }
}

extension ProfileUpdate: RequestBody {
    init(_ fields: BodyFields) throws {
        self = fields.contains("display_name") ? ProfileUpdate(displayName: try fields.optionalString("display_name"))
                                                : .unchanged
    }
}

/// A body that may be absent or `{}`; anything else must still be a JSON object.
struct EmptyBody: RequestBody {
    init(_ fields: BodyFields) {}
}
