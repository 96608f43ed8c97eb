import Foundation
import LanyardSupport

/// The claims of a Lanyard access token (reference section 4). Tokens issued on the GoTrue-compatible surface
/// (`ClaimStyle.supabase`) also carry `session_id` and `aal`, and write `amr` as Supabase's objects; both kinds
/// are read back into these same claims.
public struct AccessTokenClaims: Decodable, JSONWritable, Sendable, Equatable {
    public var iss: String
    public var sub: String
    public var aud: String
    public var exp: Int64
    public var iat: Int64
    public var jti: String
    public var sid: String
    public var auth_time: Int64
    public var amr: [String]
    public var is_anonymous: Bool
    public var role: String
    /// Not a claim: how the claims are written.
    var style: ClaimStyle = .lanyard
    /// GoTrue's profile claims, written in Supabase's style only (not read back: Lanyard never trusts them).
    var profile: SupabaseProfileClaims?
    /// The account's groups (reference section 14), written when it has any and never read back: Lanyard checks
    /// membership in the database on every group request.
    var groups = GroupsClaim.none
    /// The account's legacy id, written with `LANYARD_TOKEN_LEGACY_ID=1` (reference section 24) and never read back.
    var legacyID: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, jti, sid, auth_time, amr, is_anonymous, role
    }

    init(iss: String, sub: String, aud: String, exp: Int64, iat: Int64, jti: String, sid: String, auth_time: Int64,
         amr: [String], is_anonymous: Bool, role: String, style: ClaimStyle) {
        (self.iss, self.sub, self.aud, self.exp, self.iat, self.jti) = (iss, sub, aud, exp, iat, jti)
        (self.sid, self.auth_time, self.amr, self.is_anonymous, self.role, self.style) =
            (sid, auth_time, amr, is_anonymous, role, style)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        aud = try container.decode(String.self, forKey: .aud)
        exp = try container.decode(Int64.self, forKey: .exp)
        iat = try container.decode(Int64.self, forKey: .iat)
        jti = try container.decode(String.self, forKey: .jti)
        sid = try container.decode(String.self, forKey: .sid)
        auth_time = try container.decode(Int64.self, forKey: .auth_time)
        if let methods = try? container.decode([String].self, forKey: .amr) {
            amr = methods
        } else {
            amr = try container.decode([SupabaseMethod].self, forKey: .amr).map(\.method)
            style = .supabase
        }
        is_anonymous = try container.decode(Bool.self, forKey: .is_anonymous)
        role = try container.decode(String.self, forKey: .role)
    }

    /// Supabase's `amr` entry.
    private struct SupabaseMethod: Decodable {
        let method: String
    }

    /// Lanyard's claims; in Supabase's style also `session_id` and `aal`, and `amr` as `{method, timestamp}`
    /// objects, so row rules and clients written for Supabase read them unchanged.
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("iss"); json.string(iss)
            json.key("sub"); json.string(sub)
            json.key("aud"); json.string(aud)
            json.key("exp"); json.integer(exp)
            json.key("iat"); json.integer(iat)
            json.key("jti"); json.string(jti)
            json.key("sid"); json.string(sid)
            json.key("auth_time"); json.integer(auth_time)
            switch style {
            case .lanyard:
                json.key("amr"); json.strings(amr)
            case .supabase:
                json.key("session_id"); json.string(sid)
                json.key("aal"); json.string("aal1")
                json.key("amr"); json.array(amr) { json, method in
                    json.object { entry in
                        entry.key("method"); entry.string(method)
                        entry.key("timestamp"); entry.integer(auth_time)
                    }
                }
            }
            json.key("is_anonymous"); json.bool(is_anonymous)
            json.key("role"); json.string(role)
            if !groups.memberships.isEmpty {
                json.key("groups"); json.array(groups.memberships) { json, membership in
                    json.object { entry in
                        entry.key("id"); entry.string(membership.id)
                        entry.key("role"); entry.string(membership.role)
                    }
                }
                if groups.more { json.key("groups_more"); json.bool(true) }
            }
            if let legacyID {
                json.key("legacy_id"); json.string(legacyID)
            }
            if style == .supabase, let profile {
                json.key("email"); json.string(profile.email)
                json.key("phone"); json.string(profile.phone)
                json.key("app_metadata"); json.json(.object(profile.appMetadata))
                json.key("user_metadata"); json.json(.object(profile.userMetadata))
            }
        }
    }
}

/// What GoTrue's access tokens say of their user, for Row Level Security policies that read `auth.jwt()`:
/// `email`, `phone`, `app_metadata` (`provider`, `providers`) and `user_metadata`, as the user object shows them.
public struct SupabaseProfileClaims: Sendable, Equatable {
    public var email: String
    public var phone: String
    public var appMetadata: [String: JSONValue]
    public var userMetadata: [String: JSONValue]

    public init(email: String, phone: String, appMetadata: [String: JSONValue], userMetadata: [String: JSONValue]) {
        (self.email, self.phone, self.appMetadata, self.userMetadata) = (email, phone, appMetadata, userMetadata)
    }
}

/// The `groups` claim: at most `maximum` memberships, oldest first, and whether some were left out (`groups_more`).
public struct GroupsClaim: Sendable, Equatable {
    public static let maximum = 16
    public static let none = GroupsClaim(memberships: [], more: false)

    public let memberships: [(id: String, role: String)]
    public let more: Bool

    init(memberships: [(id: String, role: String)], more: Bool) {
        (self.memberships, self.more) = (memberships, more)
    }

    /// From `users.group_claims` (`<group>:<role>,…`, oldest first).
    public init(stored: String?) {
        let entries = (stored ?? "").split(separator: ",").compactMap { entry -> (id: String, role: String)? in
            let parts = entry.split(separator: ":", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }
        self.init(memberships: Array(entries.prefix(Self.maximum)), more: entries.count > Self.maximum)
    }

    public static func == (lhs: GroupsClaim, rhs: GroupsClaim) -> Bool {
        lhs.more == rhs.more && lhs.memberships.map { "\($0.id):\($0.role)" } == rhs.memberships.map { "\($0.id):\($0.role)" }
    }
}

/// How an access token's claims are written: Lanyard's own (reference section 4), or Supabase's shapes for the
/// GoTrue-compatible surface (reference section 12).
public enum ClaimStyle: Sendable, Equatable {
    case lanyard
    case supabase
}

/// `{"alg":"ES256","typ":"JWT","kid":…}`
struct AccessTokenHeader: JSONWritable {
    let kid: String

    func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("alg"); json.string("ES256")
            json.key("typ"); json.string("JWT")
            json.key("kid"); json.string(kid)
        }
    }
}

/// Signs and verifies access tokens (JWT, ES256, `kid` in the header).
public struct AccessTokens: Sendable {
    public static let audience = "authenticated"

    let keys: SigningKeyRing
    let issuer: String
    let ttl: TimeInterval
    let clock: any LanyardClock
    let random: any RandomSource
    let verified = VerifiedTokenCache()

    public init(keys: SigningKeyRing, issuer: String, ttl: TimeInterval, clock: any LanyardClock, random: any RandomSource) {
        self.keys = keys
        self.issuer = issuer
        self.ttl = ttl
        self.clock = clock
        self.random = random
    }

    public var lifetime: Int { Int(ttl) }

    public func issue(userID: String, sessionID: String, authTime: Date, method: String, isAnonymous: Bool,
                      style: ClaimStyle = .lanyard, profile: SupabaseProfileClaims? = nil,
                      groups: GroupsClaim = .none, legacyID: String? = nil) throws -> String {
        let now = clock.now()
        var claims = AccessTokenClaims(
            iss: issuer, sub: userID, aud: Self.audience,
            exp: now.unixSeconds + Int64(ttl), iat: now.unixSeconds,
            jti: random.hexString(byteCount: 16), sid: sessionID,
            auth_time: authTime.unixSeconds, amr: [method], is_anonymous: isAnonymous, role: "authenticated",
            style: style)
        claims.profile = profile
        claims.groups = groups
        claims.legacyID = legacyID
        let (kid, key) = keys.signingKey(at: now)
        return try ES256.sign(CompactJWS.signingInput(header: AccessTokenHeader(kid: kid), claims: claims), key: key)
    }

    /// The claims of a token this server signed and that has not expired; `UNAUTHORIZED` otherwise.
    public func verify(_ token: String) async throws(LanyardError) -> AccessTokenClaims {
        let now = clock.now().unixSeconds
        let cacheKey = Hashing.sha256(Array(token.utf8))
        if let claims = verified.claims(for: cacheKey, now: now) { return claims }
        guard let jws = CompactJWS(token), jws.algorithm == "ES256", let kid = jws.keyID else {
            throw .unauthorized("The access token is malformed")
        }
        guard let key = await keys.publicKey(kid: kid),
              ES256.isValid(signature: jws.signature, for: jws.signingInput, key: key) else {
            throw .unauthorized("The access token's signature is not valid")
        }
        guard let claims = try? JSONDecoder().decode(AccessTokenClaims.self, from: Data(jws.payload)),
              claims.iss == issuer, claims.aud == Self.audience else {
            throw .unauthorized("The access token was not issued by this server")
        }
        guard claims.exp > now else {
            throw .unauthorized("The access token has expired; refresh the session")
        }
        verified.insert(claims, for: cacheKey, now: now)
        return claims
    }
}
