import _CryptoExtras
import Foundation
import LanyardSupport

/// The providers the emulator imitates.
public enum EmulatedProvider: String, Sendable, CaseIterable {
    case apple
    case google

    var issuer: String {
        switch self {
        case .apple: "https://appleid.apple.com"
        case .google: "https://accounts.google.com"
        }
    }

    /// The audience used when a request names none, and the client ID Lanyard accepts in dev mode.
    public var defaultClientID: String {
        switch self {
        case .apple: "dev.lanyard.emulator"
        case .google: "lanyard-emulator.apps.googleusercontent.com"
        }
    }

    /// Where the emulator serves this provider's JWKS, relative to the server.
    public var keysPath: String {
        switch self {
        case .apple: "/_emulator/apple/keys"
        case .google: "/_emulator/google/certs"
        }
    }
}

/// An OpenID Connect provider of `LANYARD_OIDC_PROVIDERS` as the emulator imitates it in dev mode: its tokens
/// carry the configured issuer (Microsoft's: the tenant's) and are signed with the emulator's ES256 key, served
/// with a discovery document (reference section 20).
public struct EmulatedOIDCProvider: Sendable, Equatable {
    public var name: String
    /// `nil` for Microsoft, whose issuer names each token's tenant.
    public var issuer: String?

    public init(name: String, issuer: String?) {
        self.name = name
        self.issuer = issuer
    }

    /// The tenant of an emulated Microsoft token when the request names none.
    public static let devTenant = "00000000-0000-4000-8000-00000000d0e5"

    /// The audience used when a request names none, and a client ID Lanyard accepts in dev mode.
    public var defaultClientID: String { "lanyard-emulator-\(name)" }
    public var keysPath: String { "/_emulator/oidc/\(name)/keys" }
    public var discoveryPath: String { "/_emulator/oidc/\(name)/.well-known/openid-configuration" }
}

/// `POST /_emulator/{provider}/id-token` and `POST /_emulator/oidc/{name}/id-token` (reference sections 5 and 18).
public struct MintRequest: Codable, Sendable {
    public var sub: String
    public var email: String?
    public var nonce: String?
    public var aud: String?
    public var name: String?
    public var emailVerified: Bool?
    public var isPrivateEmail: Bool?
    public var expiresIn: Int?
    /// For tests of the verifier: another issuer, or a token issued at another time (Unix seconds).
    public var iss: String?
    public var iat: Int64?
    /// Microsoft only: the token's tenant (`tid`); its issuer names it.
    public var tid: String?

    public init(sub: String, email: String? = nil, nonce: String? = nil, aud: String? = nil, name: String? = nil,
                emailVerified: Bool? = nil, isPrivateEmail: Bool? = nil, expiresIn: Int? = nil,
                iss: String? = nil, iat: Int64? = nil, tid: String? = nil) {
        self.tid = tid
        self.sub = sub
        self.email = email
        self.nonce = nonce
        self.aud = aud
        self.name = name
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.expiresIn = expiresIn
        self.iss = iss
        self.iat = iat
    }

    enum CodingKeys: String, CodingKey {
        case sub, email, nonce, aud, name, iss, iat, tid
        case emailVerified = "email_verified"
        case isPrivateEmail = "is_private_email"
        case expiresIn = "expires_in"
    }
}

/// Mints ID tokens shaped and signed like the real providers' (real `iss`, RS256, `kid`).
public struct TokenMinter: Sendable {
    let keys: EmulatorKeys
    let clock: any LanyardClock

    public init(keys: EmulatorKeys, clock: any LanyardClock) {
        self.keys = keys
        self.clock = clock
    }

    public func jwks(for provider: EmulatedProvider) -> JWKS {
        keys.key(for: provider).jwks
    }

    public func mint(_ provider: EmulatedProvider, _ request: MintRequest) throws -> String {
        let issuedAt = request.iat ?? clock.now().unixSeconds
        var claims: [String: JSONValue] = [
            "iss": .string(request.iss ?? provider.issuer),
            "aud": .string(request.aud ?? provider.defaultClientID),
            "sub": .string(request.sub),
            "iat": .number(Double(issuedAt)),
            "exp": .number(Double(issuedAt + Int64(request.expiresIn ?? 600))),
        ]
        if let nonce = request.nonce { claims["nonce"] = .string(nonce) }
        if let email = request.email { claims["email"] = .string(email) }
        switch provider {
        case .apple:
            // Apple sends these flags as strings, and the name never (the app passes it separately).
            claims["auth_time"] = .number(Double(issuedAt))
            claims["nonce_supported"] = .bool(true)
            if request.email != nil {
                claims["email_verified"] = .string(request.emailVerified ?? true ? "true" : "false")
                claims["is_private_email"] = .string(request.isPrivateEmail ?? false ? "true" : "false")
            }
        case .google:
            claims["azp"] = claims["aud"]
            if request.email != nil { claims["email_verified"] = .bool(request.emailVerified ?? true) }
            if let name = request.name { claims["name"] = .string(name) }
        }
        let key = keys.key(for: provider)
        let header: [String: String] = ["alg": "RS256", "kid": key.kid, "typ": "JWT"]
        return try RS256.sign(try CompactJWS.signingInput(header: header, claims: claims), key: key.privateKey)
    }

    /// The key set every emulated OpenID Connect provider serves.
    public var oidcJWKS: JWKS { keys.oidc.jwks }

    /// An ID token of an OpenID Connect provider, as such providers shape them: `email_verified` a boolean, the
    /// name in `name`; a Microsoft token also carries `tid` and `oid`, and an issuer naming its tenant.
    public func mint(_ provider: EmulatedOIDCProvider, _ request: MintRequest) throws -> String {
        let issuedAt = request.iat ?? clock.now().unixSeconds
        let tenant = request.tid ?? EmulatedOIDCProvider.devTenant
        let issuer = request.iss ?? provider.issuer ?? "https://login.microsoftonline.com/\(tenant)/v2.0"
        var claims: [String: JSONValue] = [
            "iss": .string(issuer),
            "aud": .string(request.aud ?? provider.defaultClientID),
            "sub": .string(request.sub),
            "iat": .number(Double(issuedAt)),
            "exp": .number(Double(issuedAt + Int64(request.expiresIn ?? 600))),
        ]
        if let nonce = request.nonce { claims["nonce"] = .string(nonce) }
        if let email = request.email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(request.emailVerified ?? false)
        }
        if let name = request.name { claims["name"] = .string(name) }
        if provider.issuer == nil {
            claims["tid"] = .string(tenant)
            claims["oid"] = .string(request.sub)
            claims["ver"] = .string("2.0")
        }
        let header: [String: String] = ["alg": "ES256", "kid": keys.oidc.kid, "typ": "JWT"]
        return try ES256.sign(try CompactJWS.signingInput(header: header, claims: claims), key: keys.oidc.privateKey)
    }

    /// A server-to-server notification as Apple signs it: `{"iss", "aud", "iat", "jti", "events"}`, where `events`
    /// is a JSON string holding `type`, `sub`, `event_time` and, for email events, `email` and `is_private_email`.
    public func appleNotification(type: String, sub: String, aud: String? = nil, email: String? = nil,
                                  jti: String? = nil, random: any RandomSource = SystemRandomSource()) throws -> String {
        let now = clock.now()
        var event: [String: JSONValue] = ["type": .string(type), "sub": .string(sub),
                                          "event_time": .number(Double(now.unixMilliseconds))]
        if let email {
            event["email"] = .string(email)
            event["is_private_email"] = .string("true")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let events = String(decoding: try encoder.encode(event), as: UTF8.self)
        let claims: [String: JSONValue] = [
            "iss": .string(EmulatedProvider.apple.issuer), "aud": .string(aud ?? EmulatedProvider.apple.defaultClientID),
            "iat": .number(Double(now.unixSeconds)), "jti": .string(jti ?? random.hexString(byteCount: 12)),
            "events": .string(events),
        ]
        let key = keys.key(for: .apple)
        let header: [String: String] = ["alg": "RS256", "kid": key.kid]
        return try RS256.sign(try CompactJWS.signingInput(header: header, claims: claims), key: key.privateKey)
    }
}
