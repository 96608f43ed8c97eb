import LanyardCore
import LanyardSupport

/// `POST /auth/v1/token?grant_type=id_token`. `access_token`, `gotrue_meta_security` and other members
/// Supabase's clients send are ignored; `null` counts as absent.
struct GoTrueIDTokenBody: RequestBody {
    let provider: String
    let idToken: String
    let nonce: String?
    let linkIdentity: Bool

    init(_ fields: BodyFields) throws {
        provider = try fields.string("provider")
        idToken = try Field.nonEmpty(try fields.string("id_token"), "id_token")
        nonce = try Field.optional(try fields.optionalString("nonce"), "nonce")
        linkIdentity = try fields.optionalBool("link_identity") ?? false
    }
}

/// `POST /auth/v1/token?grant_type=pkce`: the code from the redirect and the verifier the client kept.
struct GoTruePKCEBody: RequestBody {
    let authCode: String
    let codeVerifier: String

    init(_ fields: BodyFields) throws {
        authCode = try Field.nonEmpty(try fields.string("auth_code"), "auth_code", maximumLength: 256)
        codeVerifier = try Field.nonEmpty(try fields.string("code_verifier"), "code_verifier", maximumLength: 256)
    }
}

/// `POST /auth/v1/signup`: anonymous when it names neither an email nor a phone; `data` is user metadata.
struct GoTrueSignUpBody: RequestBody {
    let email: String?
    let phone: String?
    let data: [String: JSONValue]

    init(_ fields: BodyFields) throws {
        email = try fields.optionalString("email").flatMap { $0.isEmpty ? nil : $0 }
        phone = try fields.optionalString("phone").flatMap { $0.isEmpty ? nil : $0 }
        data = try GoTrueUserBody.metadata(fields)
    }
}

/// `POST /auth/v1/otp` (Supabase's `signInWithOTP`): an email, and `create_user` (default true). `data`,
/// `code_challenge` and `gotrue_meta_security` are ignored; a phone is refused.
struct GoTrueOTPBody: RequestBody {
    let email: String?
    let phone: String?
    let createUser: Bool

    init(_ fields: BodyFields) throws {
        email = try fields.optionalString("email").flatMap { $0.isEmpty ? nil : $0 }
        phone = try fields.optionalString("phone").flatMap { $0.isEmpty ? nil : $0 }
        createUser = try fields.optionalBool("create_user") ?? true
    }
}

/// `POST /auth/v1/verify` (Supabase's `verifyOTP`): `type` one of `email`, `magiclink`, `signup`, `recovery`; the
/// address and the code from the mail.
struct GoTrueVerifyBody: RequestBody {
    static let types = ["email", "magiclink", "signup", "recovery"]
    let type: String
    let email: String
    let token: String

    init(_ fields: BodyFields) throws {
        type = try fields.string("type")
        guard Self.types.contains(type) else {
            throw LanyardError.invalidRequest(field: "type", "type must be one of \(Self.types.joined(separator: ", ")) (Lanyard sends codes by email only)")
        }
        email = try Field.nonEmpty(try fields.string("email"), "email", maximumLength: 1024)
        token = try Field.nonEmpty(try fields.string("token"), "token", maximumLength: 32)
    }
}

/// `PUT /auth/v1/user`: only `data` (user metadata) is supported; email, phone and password changes are not.
struct GoTrueUserBody: RequestBody {
    let data: [String: JSONValue]
    let asksForUnsupported: Bool

    init(_ fields: BodyFields) throws {
        data = try Self.metadata(fields)
        asksForUnsupported = ["email", "phone", "password"].contains { (try? fields.optionalString($0)) != nil }
    }

    static func metadata(_ fields: BodyFields) throws -> [String: JSONValue] {
        switch fields.members["data"] {
        case nil, .null?: return [:]
        case .object(let members)?: return members
        default: throw LanyardError.invalidRequest(field: "data", "data must be a JSON object")
        }
    }
}
