import LanyardCore
import LanyardSupport
import LanyardWire

// The passkey ceremonies' bodies: WebAuthn's JSON (camelCase, base64url) inside Lanyard's snake_case envelope.
// Every string is bounded before it reaches a decoder; what the fields hold is the ceremony's to judge.

extension BodyFields {
    /// A member that must be a JSON object, read as fields of its own (`credential`, `credential.response`).
    func object(_ name: String, in parent: String? = nil) throws -> BodyFields {
        let path = parent.map { "\($0).\(name)" } ?? name
        guard case .object(let members)? = members[name] else {
            throw LanyardError.invalidRequest(field: path, "\(path) must be an object")
        }
        return BodyFields(members)
    }

    func passkeyString(_ name: String, in parent: String, maximumLength: Int = 16 * 1024) throws -> String {
        let path = "\(parent).\(name)"
        guard case .string(let value)? = members[name] else {
            throw LanyardError.invalidRequest(field: path, "\(path) is required (a string)")
        }
        return try Field.nonEmpty(value, path, maximumLength: maximumLength)
    }
}

extension RegistrationResponseJSON {
    init(_ fields: BodyFields) throws {
        let response = try fields.object("response", in: "credential")
        var transports: [String]?
        if case .array(let items)? = response.members["transports"] {
            transports = items.prefix(8).compactMap { if case .string(let text) = $0, text.count <= 32 { text } else { nil } }
        }
        self.init(id: try fields.passkeyString("id", in: "credential", maximumLength: 2048),
                  response: .init(clientDataJSON: try response.passkeyString("clientDataJSON", in: "credential.response"),
                                  attestationObject: try response.passkeyString("attestationObject", in: "credential.response",
                                                                                maximumLength: 24 * 1024),
                                  transports: transports))
        rawId = try fields.passkeyString("rawId", in: "credential", maximumLength: 2048)
        type = try fields.passkeyString("type", in: "credential", maximumLength: 32)
        guard type == "public-key" else { throw LanyardError.invalidPasskey("type", "credential.type must be public-key") }
        guard rawId == id else { throw LanyardError.invalidPasskey("malformed", "credential.rawId and credential.id differ") }
    }
}

extension AuthenticationResponseJSON {
    init(_ fields: BodyFields) throws {
        let response = try fields.object("response", in: "credential")
        var userHandle: String?
        if case .string(let handle)? = response.members["userHandle"] {
            userHandle = try Field.optional(handle, "credential.response.userHandle", maximumLength: 128)
        }
        self.init(id: try fields.passkeyString("id", in: "credential", maximumLength: 2048),
                  response: .init(clientDataJSON: try response.passkeyString("clientDataJSON", in: "credential.response"),
                                  authenticatorData: try response.passkeyString("authenticatorData", in: "credential.response"),
                                  signature: try response.passkeyString("signature", in: "credential.response", maximumLength: 2048),
                                  userHandle: userHandle))
        rawId = try fields.passkeyString("rawId", in: "credential", maximumLength: 2048)
        type = try fields.passkeyString("type", in: "credential", maximumLength: 32)
        guard type == "public-key" else { throw LanyardError.invalidPasskey("type", "credential.type must be public-key") }
    }
}

extension PasskeyRegisterRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        let name = try Field.optional(try fields.optionalString("name"), "name", maximumLength: 64)
        if let name, name.trimmingCharacters(in: .whitespaces).isEmpty {
            throw LanyardError.invalidRequest(field: "name", "name must not be blank")
        }
        self.init(credential: try RegistrationResponseJSON(try fields.object("credential")), name: name)
    }
}

extension PasskeySignInRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(credential: try AuthenticationResponseJSON(try fields.object("credential")),
                  intent: try fields.optionalCase("intent"))
    }
}

/// `PATCH /v1/users/me/passkeys/{id}`.
extension PasskeyRenameRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        let name = try Field.nonEmpty(try fields.string("name"), "name", maximumLength: 64)
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw LanyardError.invalidRequest(field: "name", "name must not be blank")
        }
        self.init(name: name)
    }
}
