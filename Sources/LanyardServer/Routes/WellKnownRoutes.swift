import Hummingbird
import LanyardCore
import LanyardSupport

/// `/.well-known/*`: what a JWT library needs to verify Lanyard's access tokens with nothing but a URL, and the
/// association files that let iOS and Android apps use passkeys bound to Lanyard's domain (reference section 19).
struct WellKnownRoutes {
    /// How long caches may keep the JWKS; `LANYARD_KEY_PUBLISH_DELAY` should be longer.
    static let jwksMaxAge = 300
    let keys: SigningKeyRing
    let issuer: String
    /// The offered providers' names, each with its sign-in endpoint in the discovery document.
    let providers: [String]
    let passkeys: PasskeySettings

    func register(on router: Router<LanyardRequestContext>) {
        router.get(".well-known/jwks.json") { _, _ in
            try JSONResponse.make(await keys.currentJWKS(), headers: [.cacheControl: "public, max-age=\(Self.jwksMaxAge)"])
        }
        router.get(".well-known/openid-configuration") { _, _ in
            try JSONResponse.make(OpenIDConfiguration(issuer: issuer, providers: providers), headers: [.cacheControl: "public, max-age=3600"])
        }
        // Apple fetches this (through its CDN) for the `webcredentials:` entitlement; no `.json`, no redirect.
        router.get(".well-known/apple-app-site-association") { _, _ in
            guard !passkeys.appleAppIDs.isEmpty else { throw LanyardError.notFound("LANYARD_APPLE_APP_IDS names no app") }
            return try JSONResponse.make(AppleAppSiteAssociation(apps: passkeys.appleAppIDs),
                                         headers: [.cacheControl: "public, max-age=3600"])
        }
        router.get(".well-known/assetlinks.json") { _, _ in
            guard !passkeys.androidApps.isEmpty else { throw LanyardError.notFound("LANYARD_ANDROID_APPS names no app") }
            return try JSONResponse.make(passkeys.androidApps.map(AssetLink.init), headers: [.cacheControl: "public, max-age=3600"])
        }
    }
}

struct OpenIDConfiguration: Encodable {
    let issuer: String
    let jwksUri: String
    let tokenEndpoint: String
    let userinfoEndpoint: String
    let revocationEndpoint: String
    let idTokenSigningAlgValuesSupported = ["ES256"]
    let tokenEndpointAuthMethodsSupported = ["none"]
    let subjectTypesSupported = ["public"]
    let responseTypesSupported = ["token"]
    let grantTypesSupported = ["refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"]
    let claimsSupported = ["iss", "sub", "aud", "exp", "iat", "jti", "sid", "auth_time", "amr", "is_anonymous", "role"]
    let signinEndpoints: [String: String]

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksUri = "jwks_uri", tokenEndpoint = "token_endpoint", userinfoEndpoint = "userinfo_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case subjectTypesSupported = "subject_types_supported", responseTypesSupported = "response_types_supported"
        case grantTypesSupported = "grant_types_supported", claimsSupported = "claims_supported"
        case signinEndpoints = "signin_endpoints"
    }

    init(issuer: String, providers: [String]) {
        self.issuer = issuer
        jwksUri = issuer + "/.well-known/jwks.json"
        tokenEndpoint = issuer + "/v1/auth/refresh"
        userinfoEndpoint = issuer + "/v1/users/me"
        revocationEndpoint = issuer + "/v1/auth/signout"
        var endpoints = ["anonymous": issuer + "/v1/auth/anonymous"]
        for provider in providers { endpoints[provider] = issuer + "/v1/auth/signin/" + provider }
        signinEndpoints = endpoints
    }
}

/// `apple-app-site-association`: the apps that share the domain's passkeys.
struct AppleAppSiteAssociation: Encodable {
    struct Apps: Encodable { let apps: [String] }
    let webcredentials: Apps

    init(apps: [String]) { webcredentials = Apps(apps: apps) }
}

/// One Digital Asset Links statement: the app may open the domain's links and use its sign-in credentials.
struct AssetLink: Encodable {
    struct Target: Encodable {
        let namespace = "android_app"
        let packageName: String
        let sha256CertFingerprints: [String]

        enum CodingKeys: String, CodingKey {
            case namespace, packageName = "package_name", sha256CertFingerprints = "sha256_cert_fingerprints"
        }
    }

    let relation = ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"]
    let target: Target

    init(_ app: PasskeySettings.AndroidApp) {
        target = Target(packageName: app.package, sha256CertFingerprints: [app.fingerprint])
    }
}
