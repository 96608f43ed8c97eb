import Foundation
import Hummingbird
import LanyardCore
import LanyardEmulator
import LanyardSupport

/// `/_emulator/*` (reference section 5), mounted only in dev mode.
struct EmulatorRoutes {
    let minter: TokenMinter
    /// The OpenID Connect providers of `LANYARD_OIDC_PROVIDERS` the emulator imitates.
    let oidcProviders: [EmulatedOIDCProvider]
    /// How the server reaches itself: the discovery documents name their keys by it.
    let baseURL: String

    func register(on router: Router<LanyardRequestContext>) {
        for provider in EmulatedProvider.allCases {
            router.get(RouterPath(stringLiteral: String(provider.keysPath.dropFirst()))) { _, _ in
                try JSONResponse.make(minter.jwks(for: provider), headers: [.cacheControl: "public, max-age=300"])
            }
        }
        router.post("_emulator/:provider/id-token") { request, context in
            guard let provider = EmulatedProvider(rawValue: try context.parameters.require("provider")) else {
                throw LanyardError.unsupportedProvider(try context.parameters.require("provider"))
            }
            let body = try await JSONBody.decode(MintRequest.self, from: request)
            guard !body.sub.isEmpty else { throw LanyardError.invalidRequest(field: "sub", "sub must not be empty") }
            return try JSONResponse.make(["id_token": try minter.mint(provider, body)])
        }
        let oidc = Dictionary(uniqueKeysWithValues: oidcProviders.map { ($0.name, $0) })
        let emulated = { @Sendable (context: LanyardRequestContext) throws -> EmulatedOIDCProvider in
            let name = try context.parameters.require("name")
            guard let provider = oidc[name] else { throw LanyardError.unsupportedProvider(name) }
            return provider
        }
        router.get("_emulator/oidc/:name/.well-known/openid-configuration") { _, context in
            let provider = try emulated(context)
            let issuer = provider.issuer ?? MicrosoftIssuerTemplate.value
            let pages = baseURL + "/_emulator/oidc/" + provider.name
            return try JSONResponse.make(DiscoveryDocument(issuer: issuer, jwksURI: baseURL + provider.keysPath,
                                                           authorizationEndpoint: pages + "/authorize", tokenEndpoint: pages + "/token"),
                                         headers: [.cacheControl: "public, max-age=300"])
        }
        router.get("_emulator/oidc/:name/keys") { _, context in
            _ = try emulated(context)
            return try JSONResponse.make(minter.oidcJWKS, headers: [.cacheControl: "public, max-age=300"])
        }
        router.post("_emulator/oidc/:name/id-token") { request, context in
            let provider = try emulated(context)
            let body = try await JSONBody.decode(MintRequest.self, from: request)
            guard !body.sub.isEmpty else { throw LanyardError.invalidRequest(field: "sub", "sub must not be empty") }
            return try JSONResponse.make(["id_token": try minter.mint(provider, body)])
        }
        for (path, page) in [("_emulator", "emulator"), ("_emulator/passkeys", "passkeys")] {
            router.get(RouterPath(stringLiteral: path)) { _, _ in
                guard let url = Bundle.module.url(forResource: page, withExtension: "html"),
                      let data = FileManager.default.contents(atPath: url.path) else {
                    throw HTTPError(.notFound)
                }
                return JSONResponse.raw(data, contentType: "text/html; charset=utf-8")
            }
        }
    }
}

extension MintRequest: RequestBody {
    init(_ fields: BodyFields) throws {
        self.init(sub: try fields.string("sub"), email: try fields.optionalString("email"),
                  nonce: try fields.optionalString("nonce"), aud: try fields.optionalString("aud"),
                  name: try fields.optionalString("name"), emailVerified: try fields.optionalBool("email_verified"),
                  isPrivateEmail: try fields.optionalBool("is_private_email"),
                  expiresIn: try fields.optionalInteger("expires_in"), iss: try fields.optionalString("iss"),
                  iat: try fields.optionalInteger("iat"), tid: try fields.optionalString("tid"))
    }
}

/// What Microsoft's multi-tenant discovery document says its issuer is: a template, not an issuer (tokens are
/// checked against their own `tid`; reference section 20).
enum MicrosoftIssuerTemplate {
    static let value = "https://login.microsoftonline.com/{tenantid}/v2.0"
}

/// The part of an OpenID Connect discovery document Lanyard reads: where the keys are.
struct DiscoveryDocument: Encodable {
    var issuer: String
    var jwksURI: String
    /// The emulator's sign-in page and token endpoint, for redirect sign-in.
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var algorithms = ["ES256"]

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksURI = "jwks_uri"
        case authorizationEndpoint = "authorization_endpoint", tokenEndpoint = "token_endpoint"
        case algorithms = "id_token_signing_alg_values_supported"
    }
}
