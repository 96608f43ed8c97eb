import Foundation
import struct LanyardWire.Provider

/// One provider of `LANYARD_OIDC_PROVIDERS`, as configured (reference section 20). The presets (`microsoft`,
/// `facebook`) fill in what their operators do not set.
public struct OIDCProviderConfiguration: Sendable, Equatable {
    public var name: String
    /// The exact `iss` of its tokens; `nil` for Microsoft, whose issuer names each token's tenant.
    public var issuer: String?
    public var clientIDs: [String]
    /// A key set, or a discovery document whose `jwks_uri` is followed.
    public var jwksURL: String
    public var requiresNonce: Bool
    public var displayName: String
    /// Microsoft only: `common`, `consumers`, `organizations` or tenant ids.
    public var tenants: [String]
    /// `LANYARD_OIDC_<NAME>_CLIENT_SECRET`: the secret of its first client id, for redirect sign-in (section 23).
    public var clientSecret: String?
    /// The discovery document whose `authorization_endpoint` and `token_endpoint` redirect sign-in uses.
    public var discoveryURL: String?

    public init(name: String, issuer: String?, clientIDs: [String], jwksURL: String, requiresNonce: Bool,
                displayName: String, tenants: [String] = []) {
        self.name = name
        self.issuer = issuer
        self.clientIDs = clientIDs
        self.jwksURL = jwksURL
        self.requiresNonce = requiresNonce
        self.displayName = displayName
        self.tenants = tenants
    }

    /// The names a provider may have: a lowercase letter, then lowercase letters, digits or `_`, at most 32.
    public static func isValidName(_ name: String) -> Bool {
        Provider.isValidName(name)
    }

    /// Names that are not OpenID Connect providers of this list: Apple and Google have settings of their own; the
    /// others name other ways in.
    static let reservedNames: Set<String> = ["apple", "google", "anonymous", "email", "passkey", "phone", "firebase",
                                             "supabase", "clerk"]

    /// Microsoft's keys for every tenant (its discovery document's issuer is a template, so it is not followed).
    public static let microsoftKeys = "https://login.microsoftonline.com/common/discovery/v2.0/keys"
    /// Facebook Limited Login's issuer and keys.
    public static let facebookIssuer = "https://www.facebook.com"
    public static let facebookKeys = "https://limited.facebook.com/.well-known/oauth/openid/jwks/"

    /// Reads `LANYARD_OIDC_PROVIDERS` and each name's variables.
    static func read(_ reader: EnvironmentReader) throws(ConfigurationError) -> [OIDCProviderConfiguration] {
        let names = reader.list("LANYARD_OIDC_PROVIDERS").map { $0.lowercased() }
        var providers: [OIDCProviderConfiguration] = []
        for name in names {
            guard isValidName(name) else {
                throw ConfigurationError(variable: "LANYARD_OIDC_PROVIDERS",
                                         problem: "\(name) is not a provider name (a letter, then letters, digits or _, at most 32)")
            }
            guard !reservedNames.contains(name) else {
                throw ConfigurationError(variable: "LANYARD_OIDC_PROVIDERS",
                                         problem: "\(name) is not an OpenID Connect provider of this list (Apple and Google have LANYARD_APPLE_* and LANYARD_GOOGLE_*)")
            }
            guard !providers.contains(where: { $0.name == name }) else {
                throw ConfigurationError(variable: "LANYARD_OIDC_PROVIDERS", problem: "\(name) is named twice")
            }
            providers.append(try read(name, reader))
        }
        // A variable of a provider that is not in the list is a typo or a forgotten name: say so at start-up.
        let prefixes = providers.map { "LANYARD_OIDC_\($0.name.uppercased())_" }
        let suffixes = ["ISSUER", "CLIENT_IDS", "JWKS_URL", "NONCE", "DISPLAY_NAME", "TENANTS", "CLIENT_SECRET"]
        for variable in reader.environment.keys.sorted() where variable.hasPrefix("LANYARD_OIDC_") && variable != "LANYARD_OIDC_PROVIDERS" {
            guard reader.string(variable) != nil else { continue }
            if !prefixes.contains(where: { variable.hasPrefix($0) && suffixes.contains(String(variable.dropFirst($0.count))) }) {
                throw ConfigurationError(variable: variable,
                                         problem: "names no setting of a provider in LANYARD_OIDC_PROVIDERS (\(names.joined(separator: ",")))")
            }
        }
        return providers
    }

    private static func read(_ name: String, _ reader: EnvironmentReader) throws(ConfigurationError) -> OIDCProviderConfiguration {
        let prefix = "LANYARD_OIDC_\(name.uppercased())_"
        let configuredIssuer = reader.string(prefix + "ISSUER")
        let configuredKeys = try reader.url(prefix + "JWKS_URL")
        var requiresNonce = true
        if let nonce = reader.string(prefix + "NONCE") {
            switch nonce.lowercased() {
            case "required": requiresNonce = true
            case "optional": requiresNonce = false
            default: throw ConfigurationError(variable: prefix + "NONCE", problem: "expected required or optional, got \(nonce)")
            }
        }
        let tenants = reader.list(prefix + "TENANTS")
        if !tenants.isEmpty, name != "microsoft" {
            throw ConfigurationError(variable: prefix + "TENANTS", problem: "only the microsoft provider has tenants")
        }
        var provider = OIDCProviderConfiguration(
            name: name, issuer: configuredIssuer, clientIDs: reader.list(prefix + "CLIENT_IDS"), jwksURL: configuredKeys ?? "",
            requiresNonce: requiresNonce, displayName: reader.string(prefix + "DISPLAY_NAME") ?? "", tenants: tenants)
        provider.clientSecret = reader.string(prefix + "CLIENT_SECRET")
        switch name {
        case "microsoft":
            guard configuredIssuer == nil else {
                throw ConfigurationError(variable: prefix + "ISSUER",
                                         problem: "microsoft's issuer is each token's own tenant; limit tenants with LANYARD_OIDC_MICROSOFT_TENANTS")
            }
            guard tenants.count <= 1 || !tenants.contains(where: { ["common", "consumers", "organizations"].contains($0.lowercased()) }),
                  tenants.allSatisfy({ ["common", "consumers", "organizations"].contains($0.lowercased()) || isTenantID($0.lowercased()) })
            else {
                throw ConfigurationError(variable: prefix + "TENANTS",
                                         problem: "expected common, consumers, organizations, or tenant ids separated by commas")
            }
            provider.jwksURL = configuredKeys ?? microsoftKeys
            // The sign-in page of the tenants allowed: one tenant's own, else the audience word Microsoft takes.
            let authority = tenants.count == 1 ? tenants[0].lowercased() : (tenants.isEmpty ? "common" : "organizations")
            provider.discoveryURL = "https://login.microsoftonline.com/\(authority)/v2.0/.well-known/openid-configuration"
            if provider.displayName.isEmpty { provider.displayName = "Microsoft" }
        case "facebook":
            provider.issuer = configuredIssuer ?? facebookIssuer
            provider.jwksURL = configuredKeys ?? facebookKeys
            if provider.displayName.isEmpty { provider.displayName = "Facebook" }
        default:
            guard let issuer = configuredIssuer else {
                throw ConfigurationError(variable: prefix + "ISSUER", problem: "is required for \(name) (its tokens' exact iss)")
            }
            guard isSecureOrLocal(issuer) else {
                throw ConfigurationError(variable: prefix + "ISSUER", problem: "expected an https URL (http only on this machine), got \(issuer)")
            }
            let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
            provider.jwksURL = configuredKeys ?? trimmed + "/.well-known/openid-configuration"
            provider.discoveryURL = trimmed + "/.well-known/openid-configuration"
            if provider.displayName.isEmpty { provider.displayName = name.prefix(1).uppercased() + name.dropFirst() }
        }
        if let configuredKeys, !isSecureOrLocal(configuredKeys) {
            throw ConfigurationError(variable: prefix + "JWKS_URL", problem: "expected an https URL (http only on this machine), got \(configuredKeys)")
        }
        return provider
    }

    /// https, or http to this machine (tests, a local issuer): where keys and discovery documents may come from.
    public static func isSecureOrLocal(_ text: String) -> Bool {
        guard let url = URL(string: text), let host = url.host else { return false }
        return url.scheme == "https" || (url.scheme == "http" && isLoopback(host))
    }

    public static func isLoopback(_ host: String) -> Bool {
        ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
    }

    /// Whether the issuer is on this machine (dev mode uses such an issuer itself, not the emulator).
    public var isLocal: Bool {
        guard let issuer, let host = URL(string: issuer)?.host else { return false }
        return Self.isLoopback(host)
    }

    /// A Microsoft tenant id as Microsoft writes it: a lowercase UUID (settings are lowercased before they are
    /// checked; a token's `tid` is checked as it comes).
    public static func isTenantID(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                else { return false }
            }
        }
        return true
    }
}
