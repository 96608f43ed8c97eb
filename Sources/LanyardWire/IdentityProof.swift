/// Proof that the person holds one identity (reference sections 15, 17–19): an ID token of a provider, the code
/// of an email flow this device started, or an assertion of a passkey. Sign-in, linking, re-authentication and a
/// merge's proof of the other account all take it, and the server verifies each kind in one place. On the wire it
/// is one object whose `provider` says which kind it is:
///
/// ```json
/// {"provider": "google", "id_token": "eyJ…"}
/// {"provider": "email", "flow_id": "ef_…", "flow_secret": "…", "code": "123456"}
/// {"provider": "passkey", "credential": {"id": "…", "response": {…}}}
/// {"provider": "firebase", "id_token": "eyJ…"}
/// ```
///
/// ```swift
/// let proof = IdentityProof.idToken(provider: .google, idToken: token)
/// ```
public enum IdentityProof: Sendable, Equatable, Codable {
    /// An ID token of `provider` (Apple, Google, any provider the server configures), with the raw nonce the app
    /// generated when it has one (a merge's proof carries the server's challenge inside the token instead).
    case idToken(provider: Provider, idToken: String, nonce: String? = nil)
    /// The code from the mail of an email flow this device started (its `flow_secret` binds the proof to the device).
    case emailCode(flowID: String, flowSecret: String, code: String)
    /// An assertion of a passkey, for the server's sign-in options.
    case passkey(AuthenticationResponseJSON)
    /// A signed-in session of the system an app moves from (reference section 24): it proves the person's account
    /// there (its legacy id), not an identity, so only the bridge takes it (`POST /v1/auth/migrate/{source}`); a
    /// link, a re-authentication or a merge refuses it.
    case legacySession(source: LegacySource, token: String)

    /// The shapes a proof takes on the wire.
    public enum Kind: Sendable, Equatable {
        case idToken, emailCode, passkey, legacySession
    }

    /// The shape of a proof of `provider`: `email` and `passkey` have their own, every other name is an ID token's.
    ///
    /// ```swift
    /// IdentityProof.kind(of: .google) // .idToken
    /// ```
    public static func kind(of provider: Provider) -> Kind {
        switch provider {
        case .email: .emailCode
        case .passkey: .passkey
        default: LegacySource(rawValue: provider.rawValue) == nil ? .idToken : .legacySession
        }
    }

    /// The kind of identity proven: the provider's name, `email` or `passkey`.
    ///
    /// ```swift
    /// print(proof.provider) // google
    /// ```
    public var provider: Provider {
        switch self {
        case .idToken(let provider, _, _): provider
        case .emailCode: .email
        case .passkey: .passkey
        case .legacySession(let source, _): Provider(rawValue: source.rawValue)
        }
    }

    /// A proof by ID token, as `MergeBody.Proof(provider:idToken:)` spelled it.
    ///
    /// ```swift
    /// let proof = IdentityProof(provider: "google", idToken: token)
    /// ```
    public init(provider: String, idToken: String) {
        self = .idToken(provider: Provider(rawValue: provider), idToken: idToken)
    }

    /// A proof by an email flow's code.
    ///
    /// ```swift
    /// let proof = IdentityProof(emailFlow: flow.started, code: "123456")
    /// ```
    public init(emailFlow: EmailFlowStarted, code: String) {
        self = .emailCode(flowID: emailFlow.flowID, flowSecret: emailFlow.flowSecret, code: code)
    }

    /// A proof by one of the other account's passkeys (single use: a dry run spends it too).
    ///
    /// ```swift
    /// let proof = IdentityProof(passkey: try await authenticator.get(try await client.passkeys.signInOptions()))
    /// ```
    public init(passkey assertion: AuthenticationResponseJSON) {
        self = .passkey(assertion)
    }

    enum CodingKeys: String, CodingKey {
        case provider, code, credential, nonce, idToken = "id_token", flowID = "flow_id", flowSecret = "flow_secret"
        case accessToken = "access_token", sessionToken = "session_token"
    }

    /// The member a legacy session's token travels in (`LegacySource.tokenField`).
    private static func tokenKey(_ source: LegacySource) -> CodingKeys {
        switch source {
        case .firebase: .idToken
        case .supabase: .accessToken
        case .clerk: .sessionToken
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let provider = try container.decode(Provider.self, forKey: .provider)
        switch Self.kind(of: provider) {
        case .emailCode:
            self = .emailCode(flowID: try container.decode(String.self, forKey: .flowID),
                              flowSecret: try container.decode(String.self, forKey: .flowSecret),
                              code: try container.decode(String.self, forKey: .code))
        case .passkey:
            self = .passkey(try container.decode(AuthenticationResponseJSON.self, forKey: .credential))
        case .idToken:
            self = .idToken(provider: provider, idToken: try container.decode(String.self, forKey: .idToken),
                            nonce: try container.decodeIfPresent(String.self, forKey: .nonce))
        case .legacySession:
            let source = LegacySource(rawValue: provider.rawValue) ?? .firebase
            self = .legacySession(source: source, token: try container.decode(String.self, forKey: Self.tokenKey(source)))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(provider, forKey: .provider)
        switch self {
        case .idToken(_, let idToken, let nonce):
            try container.encode(idToken, forKey: .idToken)
            try container.encodeIfPresent(nonce, forKey: .nonce)
        case .emailCode(let flowID, let flowSecret, let code):
            try container.encode(flowID, forKey: .flowID)
            try container.encode(flowSecret, forKey: .flowSecret)
            try container.encode(code, forKey: .code)
        case .passkey(let assertion):
            try container.encode(assertion, forKey: .credential)
        case .legacySession(let source, let token):
            try container.encode(token, forKey: Self.tokenKey(source))
        }
    }
}
