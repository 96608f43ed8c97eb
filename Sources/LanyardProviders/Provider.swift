import LanyardSupport

/// A sign-in provider Lanyard accepts ID tokens from, by name: `apple`, `google`, or a name configured in
/// `LANYARD_OIDC_PROVIDERS` (reference section 20). What the provider is (issuer, keys, audiences) is its
/// `ProviderSettings`; the name is what identities, audits and webhooks carry.
public struct Provider: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    /// A name as configured: a lowercase letter, then lowercase letters, digits or `_`, at most 32 in all
    /// (it is also part of environment variable names).
    public init?(rawValue: String) {
        guard Self.isValidName(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(known name: String) {
        rawValue = name
    }

    public static let apple = Provider(known: "apple")
    public static let google = Provider(known: "google")
    /// Microsoft Entra ID (work and school accounts) and personal Microsoft accounts, a preset.
    public static let microsoft = Provider(known: "microsoft")
    /// Facebook Limited Login, a preset.
    public static let facebook = Provider(known: "facebook")
    /// The email identity (reference section 20): proven by a code or a link in one mail, not an ID token.
    public static let email = Provider(known: "email")
    /// The passkey identity (reference section 19): a WebAuthn credential, its id the subject; several per account.
    public static let passkey = Provider(known: "passkey")

    public var description: String { rawValue }

    public static func isValidName(_ name: String) -> Bool {
        OIDCProviderConfiguration.isValidName(name)
    }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let provider = Provider(rawValue: name) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a provider name"))
        }
        self = provider
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
