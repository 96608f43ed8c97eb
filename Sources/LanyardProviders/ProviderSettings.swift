import LanyardSupport

/// What one provider is configured with: who may issue its tokens, the accepted audiences, where its keys are,
/// whether a nonce is required, and how it is shown (reference sections 4 and 18).
public struct ProviderSettings: Sendable {
    /// How an app signs in with the provider: Apple's and Google's own SDKs, or any OpenID Connect library.
    public enum Kind: String, Sendable {
        case apple
        case google
        case oidc
    }

    /// Which `iss` values a token may carry.
    public enum IssuerRule: Sendable, Equatable {
        /// One of these, exactly; the first is what new tokens carry.
        case oneOf([String])
        /// Microsoft's: `https://login.microsoftonline.com/{tid}/v2.0` with the token's **own** `tid`, a tenant
        /// these allow; the identity's subject is `tid:oid`, the same for every client ID of the app.
        case microsoft(MicrosoftTenants)
    }

    public var provider: Provider
    public var kind: Kind
    public var displayName: String
    public var issuer: IssuerRule
    public var clientIDs: [String]
    /// A JSON Web Key Set, or an OpenID Connect discovery document (`…/.well-known/openid-configuration`)
    /// whose `jwks_uri` is followed.
    public var jwksURL: String
    public var requiresNonce: Bool
    /// The web client for redirect sign-in (reference section 23); nil where it is not configured.
    public var redirect: RedirectClient?

    public init(provider: Provider, kind: Kind, displayName: String, issuer: IssuerRule, clientIDs: [String],
                jwksURL: String, requiresNonce: Bool) {
        self.provider = provider
        self.kind = kind
        self.displayName = displayName
        self.issuer = issuer
        self.clientIDs = clientIDs
        self.jwksURL = jwksURL
        self.requiresNonce = requiresNonce
    }

    /// Sign in with Apple: both issuers Apple has used.
    public static func apple(clientIDs: [String], jwksURL: String = "https://appleid.apple.com/auth/keys",
                             requiresNonce: Bool = false) -> ProviderSettings {
        ProviderSettings(provider: .apple, kind: .apple, displayName: "Apple",
                         issuer: .oneOf(["https://appleid.apple.com", "https://account.apple.com"]),
                         clientIDs: clientIDs, jwksURL: jwksURL, requiresNonce: requiresNonce)
    }

    /// Google Sign-In: Google writes its issuer with and without the scheme.
    public static func google(clientIDs: [String], jwksURL: String = "https://www.googleapis.com/oauth2/v3/certs",
                              requiresNonce: Bool = false) -> ProviderSettings {
        ProviderSettings(provider: .google, kind: .google, displayName: "Google",
                         issuer: .oneOf(["https://accounts.google.com", "accounts.google.com"]),
                         clientIDs: clientIDs, jwksURL: jwksURL, requiresNonce: requiresNonce)
    }

    /// A provider of `LANYARD_OIDC_PROVIDERS` (the configuration has already checked the name and filled presets).
    public init?(_ configured: OIDCProviderConfiguration) {
        guard let provider = Provider(validName: configured.name) else { return nil }
        let issuer: IssuerRule = if configured.issuer == nil && configured.name == Provider.microsoft.rawValue {
            .microsoft(MicrosoftTenants(configured.tenants) ?? .only([]))  // the configuration refused anything else
        } else {
            .oneOf([configured.issuer ?? ""])
        }
        self.init(provider: provider, kind: .oidc, displayName: configured.displayName,
                  issuer: issuer, clientIDs: configured.clientIDs, jwksURL: configured.jwksURL,
                  requiresNonce: configured.requiresNonce)
    }
}

/// Which Microsoft tenants may sign in (`LANYARD_OIDC_MICROSOFT_TENANTS`).
public enum MicrosoftTenants: Sendable, Equatable {
    /// `common`: any work, school or personal account.
    case any
    /// `consumers`: personal Microsoft accounts only.
    case consumers
    /// `organizations`: any work or school tenant, no personal accounts.
    case organizations
    /// These tenant ids only.
    case only(Set<String>)

    /// The tenant every personal Microsoft account's token names.
    public static let consumerTenant = "9188040d-6c67-4c5b-b112-36a304b66dad"

    public static func issuer(tenant: String) -> String { "https://login.microsoftonline.com/\(tenant)/v2.0" }

    /// The configured value: one of the words, or tenant ids separated by commas.
    public init?(_ values: [String]) {
        let lowered = values.map { $0.lowercased() }
        switch lowered {
        case []: self = .any
        case ["common"]: self = .any
        case ["consumers"]: self = .consumers
        case ["organizations"]: self = .organizations
        default:
            guard lowered.allSatisfy(OIDCProviderConfiguration.isTenantID) else { return nil }
            self = .only(Set(lowered))
        }
    }

    public func allows(_ tenant: String) -> Bool {
        switch self {
        case .any: true
        case .consumers: tenant == Self.consumerTenant
        case .organizations: tenant != Self.consumerTenant
        case .only(let tenants): tenants.contains(tenant)
        }
    }
}
