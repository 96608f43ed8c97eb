import Crypto
import Foundation
import LanyardSupport
import enum LanyardWire.LegacySource

/// `POST /_emulator/firebase/id-token`, `/_emulator/supabase/access-token`, `/_emulator/clerk/session-token`
/// (reference section 24): the old systems' session tokens, shaped like theirs (`docs/bridge-tokens.md`) and signed
/// with the emulator's keys, which dev mode points the bridge's settings at, so they take the production path.
public struct LegacyMintRequest: Codable, Sendable {
    /// The old system's user id (Firebase uid, Supabase UUID, Clerk `user_…`).
    public var sub: String
    /// Firebase: `firebase.identities` (`{"apple.com": ["001…"]}`); Supabase and Clerk name none.
    public var identities: [String: [String]]?
    /// Firebase's `sign_in_provider` (`anonymous`, `apple.com`, …).
    public var signInProvider: String?
    /// Supabase's `is_anonymous`.
    public var isAnonymous: Bool?
    public var email: String?
    public var emailVerified: Bool?
    public var name: String?
    public var expiresIn: Int?
    /// For tests of the verifier: another audience, issuer, issue time (Unix seconds), Supabase role, a Firebase
    /// tenant, a Clerk impersonator or pending status, or Supabase's HS256 secret signing (`alg: "HS256"`).
    public var aud: String?
    public var iss: String?
    public var iat: Int64?
    public var role: String?
    public var tenant: String?
    public var impersonatedBy: String?
    public var pending: Bool?
    public var alg: String?

    public init(sub: String, identities: [String: [String]]? = nil, signInProvider: String? = nil, isAnonymous: Bool? = nil,
                email: String? = nil, emailVerified: Bool? = nil, name: String? = nil, expiresIn: Int? = nil,
                aud: String? = nil, iss: String? = nil, iat: Int64? = nil, role: String? = nil, tenant: String? = nil,
                impersonatedBy: String? = nil, pending: Bool? = nil, alg: String? = nil) {
        (self.sub, self.identities, self.signInProvider, self.isAnonymous) = (sub, identities, signInProvider, isAnonymous)
        (self.email, self.emailVerified, self.name, self.expiresIn) = (email, emailVerified, name, expiresIn)
        (self.aud, self.iss, self.iat, self.role, self.tenant) = (aud, iss, iat, role, tenant)
        (self.impersonatedBy, self.pending, self.alg) = (impersonatedBy, pending, alg)
    }

    enum CodingKeys: String, CodingKey {
        case sub, identities, email, name, aud, iss, iat, role, tenant, pending, alg
        case signInProvider = "sign_in_provider", isAnonymous = "is_anonymous", emailVerified = "email_verified"
        case expiresIn = "expires_in", impersonatedBy = "impersonated_by"
    }
}

/// Mints Firebase ID tokens (RS256), Supabase access tokens (ES256 from the key set, or HS256 with the project's
/// secret) and Clerk session tokens (RS256) for dev mode and tests.
public struct LegacyTokenMinter: Sendable {
    let keys: EmulatorKeys
    let clock: any LanyardClock
    let settings: MigrationSettings
    /// Where this server is reached, for the emulated issuers when none is configured.
    let baseURL: String

    public init(keys: EmulatorKeys, clock: any LanyardClock, settings: MigrationSettings, baseURL: String) {
        (self.keys, self.clock, self.settings, self.baseURL) = (keys, clock, settings, baseURL)
    }

    /// Where the emulator serves each source's keys, relative to the server.
    public static func keysPath(_ source: LegacySource) -> String {
        switch source {
        case .firebase: "/_emulator/firebase/keys"
        case .supabase: "/_emulator/supabase/auth/v1/.well-known/jwks.json"
        case .clerk: "/_emulator/clerk/.well-known/jwks.json"
        }
    }

    /// Where each source's tokens are minted, relative to the server.
    public static func mintPath(_ source: LegacySource) -> String {
        switch source {
        case .firebase: "/_emulator/firebase/id-token"
        case .supabase: "/_emulator/supabase/access-token"
        case .clerk: "/_emulator/clerk/session-token"
        }
    }

    /// The project dev mode accepts when none is configured.
    public static let devFirebaseProject = "lanyard-dev-project"

    /// The key set of `source`: Firebase's and Clerk's RSA, Supabase's P-256.
    public func jwks(_ source: LegacySource) -> JWKS {
        switch source {
        case .firebase: keys.google.jwks
        case .supabase: keys.oidc.jwks
        case .clerk: keys.apple.jwks
        }
    }

    public var supabaseIssuer: String { settings.supabaseIssuer ?? baseURL + "/_emulator/supabase/auth/v1" }
    public var clerkIssuer: String { settings.clerkIssuer ?? baseURL + "/_emulator/clerk" }

    public func mint(_ source: LegacySource, _ request: LegacyMintRequest) throws -> String {
        let issuedAt = request.iat ?? clock.now().unixSeconds
        var claims: [String: JSONValue] = [
            "sub": .string(request.sub),
            "iat": .number(Double(issuedAt)),
        ]
        switch source {
        case .firebase:
            let project = settings.firebaseProjectID ?? Self.devFirebaseProject
            claims["iss"] = .string(request.iss ?? "https://securetoken.google.com/" + project)
            claims["aud"] = .string(request.aud ?? project)
            claims["exp"] = .number(Double(issuedAt + Int64(request.expiresIn ?? 3600)))
            claims["auth_time"] = .number(Double(issuedAt))
            claims["user_id"] = .string(request.sub)
            let identities = request.identities ?? [:]
            var named: [String: JSONValue] = identities.mapValues { .array($0.map(JSONValue.string)) }
            if let email = request.email {
                claims["email"] = .string(email)
                claims["email_verified"] = .bool(request.emailVerified ?? false)
                named["email"] = .array([.string(email)])
            }
            if let name = request.name { claims["name"] = .string(name) }
            let signInProvider = request.signInProvider ?? (identities.keys.sorted().first ?? (request.email != nil ? "password" : "anonymous"))
            if signInProvider == "anonymous" { claims["provider_id"] = .string("anonymous") }
            var firebase: [String: JSONValue] = ["identities": .object(named), "sign_in_provider": .string(signInProvider)]
            if let tenant = request.tenant { firebase["tenant"] = .string(tenant) }
            claims["firebase"] = .object(firebase)
            let header: [String: String] = ["alg": "RS256", "kid": keys.google.kid, "typ": "JWT"]
            return try RS256.sign(try CompactJWS.signingInput(header: header, claims: claims), key: keys.google.privateKey)
        case .supabase:
            let anonymous = request.isAnonymous ?? false
            claims["iss"] = .string(request.iss ?? supabaseIssuer)
            claims["aud"] = .string(request.aud ?? "authenticated")
            claims["exp"] = .number(Double(issuedAt + Int64(request.expiresIn ?? 3600)))
            claims["email"] = .string(request.email ?? "")
            claims["phone"] = .string("")
            claims["role"] = .string(request.role ?? "authenticated")
            claims["aal"] = .string("aal1")
            claims["amr"] = .array([.object(["method": .string(anonymous ? "anonymous" : "oauth"),
                                             "timestamp": .number(Double(issuedAt))])])
            claims["session_id"] = .string(UUID().uuidString.lowercased())
            claims["is_anonymous"] = .bool(anonymous)
            claims["app_metadata"] = .object(anonymous ? [:] : ["provider": .string("email"), "providers": .array([.string("email")])])
            claims["user_metadata"] = .object([:])
            if request.alg == "HS256" {
                let secret = settings.supabaseJWTSecret ?? MigrationSettings.supabaseDevSecret
                let header: [String: String] = ["alg": "HS256", "typ": "JWT"]
                return HS256.sign(try CompactJWS.signingInput(header: header, claims: claims),
                                  secret: SymmetricKey(data: Data(secret.utf8)))
            }
            let header: [String: String] = ["alg": "ES256", "kid": keys.oidc.kid, "typ": "JWT"]
            return try ES256.sign(try CompactJWS.signingInput(header: header, claims: claims), key: keys.oidc.privateKey)
        case .clerk:
            claims["iss"] = .string(request.iss ?? clerkIssuer)
            claims["exp"] = .number(Double(issuedAt + Int64(request.expiresIn ?? 60)))
            claims["nbf"] = .number(Double(issuedAt - 10))
            claims["azp"] = .string(baseURL)
            claims["sid"] = .string("sess_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(27))
            claims["jti"] = .string(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
            claims["v"] = .number(2)
            claims["fva"] = .array([.number(0), .number(-1)])
            if let aud = request.aud { claims["aud"] = .string(aud) }
            if request.pending == true { claims["sts"] = .string("pending") }
            if let actor = request.impersonatedBy {
                claims["act"] = .object(["iss": .string(clerkIssuer), "sid": .string("sess_impersonator"), "sub": .string(actor)])
            }
            let header: [String: String] = ["alg": "RS256", "kid": keys.apple.kid, "typ": "JWT"]
            return try RS256.sign(try CompactJWS.signingInput(header: header, claims: claims), key: keys.apple.privateKey)
        }
    }
}
