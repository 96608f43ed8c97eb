/// A sign-in provider: `.apple`, `.google`, or any name the server configures (`LANYARD_OIDC_PROVIDERS`), such
/// as `.microsoft`, `.facebook` or `Provider("acme")`.
///
/// A struct rather than an enum so that a server offering a provider this version of the SDK does not know
/// still decodes.
///
/// ```swift
/// if client.user?.linkedProviders.contains(where: { $0.provider == .google }) == false {
///     // offer "Link Google"
/// }
/// ```
public struct Provider: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The provider's name on the wire: `apple`, `google`.
    public let rawValue: String

    /// Wraps a provider name as the server spells it.
    ///
    /// ```swift
    /// let apple = Provider(rawValue: "apple") // == .apple
    /// ```
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Sign in with Apple.
    ///
    /// ```swift
    /// try await client.unlink(.apple)
    /// ```
    public static let apple = Provider(rawValue: "apple")

    /// Sign in with Google.
    ///
    /// ```swift
    /// try await client.unlink(.google)
    /// ```
    public static let google = Provider(rawValue: "google")

    /// Microsoft Entra ID and personal Microsoft accounts (MSAL), when the server configures `microsoft`.
    ///
    /// ```swift
    /// try await client.signIn(with: .microsoft, idToken: result.idToken, nonce: nonce)
    /// ```
    public static let microsoft = Provider(rawValue: "microsoft")

    /// Facebook Limited Login, when the server configures `facebook`.
    ///
    /// ```swift
    /// try await client.signIn(with: .facebook, idToken: token.tokenString, nonce: nonce)
    /// ```
    public static let facebook = Provider(rawValue: "facebook")

    /// The email identity: an address proven by a code or a link (`client.email`), not an ID token.
    ///
    /// ```swift
    /// let hasEmail = client.linkedProviders.contains { $0.provider == .email }
    /// ```
    public static let email = Provider(rawValue: "email")

    /// A passkey (Face ID, Touch ID, a security key): `client.passkeys`. An account may hold several.
    ///
    /// ```swift
    /// let passkeys = client.linkedProviders.filter { $0.provider == .passkey }.count
    /// ```
    public static let passkey = Provider(rawValue: "passkey")

    /// A provider by the name the server configures it under.
    ///
    /// ```swift
    /// let acme = Provider("acme") // LANYARD_OIDC_PROVIDERS=acme
    /// ```
    public init(_ name: String) {
        self.init(rawValue: name)
    }

    /// A provider whose name a server could configure, or nil: a lowercase letter, then lowercase letters,
    /// digits or `_`, at most 32 in all (a name is also part of environment variable names). The server reads
    /// names from requests and configuration this way; an app has no need to.
    ///
    /// ```swift
    /// Provider(validName: "acme")  // Provider("acme")
    /// Provider(validName: "Acme!") // nil
    /// ```
    public init?(validName name: String) {
        guard Self.isValidName(name) else { return nil }
        self.init(rawValue: name)
    }

    /// Whether `name` is one a server could configure (see `init(validName:)`).
    ///
    /// ```swift
    /// Provider.isValidName("microsoft") // true
    /// ```
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...32).contains(bytes.count), (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[0]) else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }

    /// A name to show a person: "Apple", "Google", "Microsoft"; the server's `display_name` (from
    /// `LanyardClient.providers()`) for names it configures.
    ///
    /// ```swift
    /// Text("Linked with \(provider.displayName)")
    /// ```
    public var displayName: String {
        switch self {
        case .apple: "Apple"
        case .google: "Google"
        case .microsoft: "Microsoft"
        case .facebook: "Facebook"
        default: rawValue.prefix(1).uppercased() + rawValue.dropFirst()
        }
    }

    /// The wire name.
    ///
    /// ```swift
    /// print(Provider.google) // google
    /// ```
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// One provider the server offers, from `GET /v1/providers`: which sign-in buttons an app shows.
///
/// ```swift
/// for provider in try await client.providers() where provider.kind == .oidc {
///     print(provider.displayName) // "Microsoft"
/// }
/// ```
public struct OfferedProvider: Sendable, Equatable, Codable {
    /// How an app gets the provider's ID token.
    public struct Kind: RawRepresentable, Hashable, Sendable, Codable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Sign in with Apple (AuthenticationServices).
        public static let apple = Kind(rawValue: "apple")
        /// Google Sign-In.
        public static let google = Kind(rawValue: "google")
        /// Any OpenID Connect library (MSAL for Microsoft, Facebook's Limited Login, AppAuth).
        public static let oidc = Kind(rawValue: "oidc")
        /// A code or a link in one mail: `client.email` (`/v1/auth/email/*`).
        public static let email = Kind(rawValue: "email")
        /// WebAuthn: `client.passkeys` (`/v1/auth/passkeys/*`).
        public static let passkey = Kind(rawValue: "passkey")

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    /// The name the endpoints take: `POST /v1/auth/signin/{name}`.
    public var name: Provider
    /// A name to show on the button.
    public var displayName: String
    public var kind: Kind

    public init(name: Provider, displayName: String, kind: Kind) {
        self.name = name
        self.displayName = displayName
        self.kind = kind
    }

    enum CodingKeys: String, CodingKey {
        case name
        case displayName = "display_name"
        case kind
    }
}
