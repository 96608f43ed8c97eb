import Crypto
import Foundation
import LanyardSupport
import enum LanyardWire.LegacySource

/// What a verified session of the old system says (reference section 24, `docs/bridge-tokens.md`): whose it is
/// there, and for Firebase which identities it names.
public struct VerifiedLegacySession: Sendable, Equatable {
    public var source: LegacySource
    /// The old system's user id: Firebase's uid, Supabase's user UUID, Clerk's `user_…`.
    public var legacyID: String
    /// The Apple, Google and Facebook subjects and the verified email a Firebase token names (in the order the
    /// account should hold them: the one it signed in with first); none for Supabase and Clerk.
    public var identities: [VerifiedIdentity]
    /// An anonymous user of the old system: it crosses as a guest.
    public var isAnonymous: Bool
    /// When the person last signed in to the old system, where its token says (Firebase's `auth_time`): the
    /// crossing's session counts from then, never as a sign-in of its own.
    public var signedInAt: Date?

    public init(source: LegacySource, legacyID: String, identities: [VerifiedIdentity], isAnonymous: Bool,
                signedInAt: Date? = nil) {
        (self.source, self.legacyID, self.identities, self.isAnonymous) = (source, legacyID, identities, isAnonymous)
        self.signedInAt = signedInAt
    }
}

/// Verifies the old systems' session tokens for the bridge: Firebase ID tokens (RS256, Google's securetoken keys),
/// Supabase access tokens (HS256 with the project's secret, or ES256/RS256 from its key set) and Clerk session
/// tokens (RS256 from the instance's key set). Key sets go through the same cache and signature path as every
/// provider's; HS256 is accepted here for Supabase's secret and nowhere else.
public struct LegacySessionVerifier: Sendable {
    let verifier: IDTokenVerifier
    public let settings: MigrationSettings
    let clock: any LanyardClock
    let supabaseSecret: SymmetricKey?

    public init(verifier: IDTokenVerifier, settings: MigrationSettings, clock: any LanyardClock) {
        self.verifier = verifier
        self.settings = settings
        self.clock = clock
        // GoTrue verifies with the secret's bytes as they are, not base64-decoded.
        supabaseSecret = settings.supabaseJWTSecret.map { SymmetricKey(data: Data($0.utf8)) }
    }

    /// Whether `source` is configured.
    public func offers(_ source: LegacySource) -> Bool {
        switch source {
        case .firebase: settings.offersFirebase
        case .supabase: settings.offersSupabase
        case .clerk: settings.offersClerk
        }
    }

    /// The session, or `ProviderTokenError` with the reason; `ProviderUnavailableError` when keys cannot be had.
    public func verify(_ token: String, source: LegacySource) async throws -> VerifiedLegacySession {
        guard let jws = CompactJWS(token) else { throw ProviderTokenError(.malformed) }
        let provider = Provider(rawValue: source.rawValue)
        let now = clock.now().timeIntervalSince1970
        switch source {
        case .firebase:
            guard let project = settings.firebaseProjectID else { throw ProviderTokenError(.audience) }
            let verified = try await verifier.verifiedSignature(jws, jwksURL: settings.firebaseKeysURL, provider: provider,
                                                                algorithms: ["RS256"])
            return try Self.firebase(verified.claims, project: project, now: now)
        case .supabase:
            let claims: [String: JSONValue]
            if jws.algorithm == "HS256" {
                guard let secret = supabaseSecret else { throw ProviderTokenError(.algorithm) }
                guard HS256.isValid(signature: jws.signature, for: jws.signingInput, secret: secret) else {
                    throw ProviderTokenError(.signature)
                }
                claims = jws.claims
            } else {
                guard let url = settings.supabaseJWKSURL else { throw ProviderTokenError(.algorithm) }
                claims = try await verifier.verifiedSignature(jws, jwksURL: url, provider: provider).claims
            }
            return try Self.supabase(claims, issuer: settings.supabaseIssuer, now: now)
        case .clerk:
            guard let url = settings.clerkJWKSURL else { throw ProviderTokenError(.algorithm) }
            let verified = try await verifier.verifiedSignature(jws, jwksURL: url, provider: provider, algorithms: ["RS256"])
            return try Self.clerk(verified.claims, issuer: settings.clerkIssuer, now: now)
        }
    }

    /// `exp` not passed, `iat` and `nbf` not in the future, with the providers' 60 s leeway.
    static func checkTimes(_ claims: [String: JSONValue], now: TimeInterval) throws(ProviderTokenError) {
        guard let expiry = claims["exp"]?.numberValue else { throw ProviderTokenError(.malformed) }
        guard now <= expiry + IDTokenVerifier.leeway else { throw ProviderTokenError(.expired) }
        for claim in ["iat", "nbf", "auth_time"] {
            if let value = claims[claim]?.numberValue, value > now + IDTokenVerifier.leeway { throw ProviderTokenError(.notYetValid) }
        }
    }

    static func audiences(_ claims: [String: JSONValue]) -> [String] {
        switch claims["aud"] {
        case .string(let value): [value]
        case .array(let values): values.compactMap(\.stringValue)
        default: []
        }
    }

    /// Firebase (`docs/bridge-tokens.md` section 1): the project's issuer and audience, a uid of at most 128
    /// characters, no tenant; `firebase.identities` names the subjects.
    static func firebase(_ claims: [String: JSONValue], project: String, now: TimeInterval) throws(ProviderTokenError) -> VerifiedLegacySession {
        guard claims["iss"]?.stringValue == "https://securetoken.google.com/" + project else { throw ProviderTokenError(.issuer) }
        guard audiences(claims) == [project] else { throw ProviderTokenError(.audience) }
        try checkTimes(claims, now: now)
        guard let uid = claims["sub"]?.stringValue, (1...128).contains(uid.count), !uid.containsNUL,
              claims["user_id"].map({ $0.stringValue == uid }) ?? true else { throw ProviderTokenError(.subject) }
        guard case .object(let firebase)? = claims["firebase"] else { throw ProviderTokenError(.malformed) }
        // A multi-tenant project's tenants share its issuer and audience: their users are not this project's.
        guard firebase["tenant"] == nil else { throw ProviderTokenError(.tenant) }
        let named: [String: JSONValue] = if case .object(let identities)? = firebase["identities"] { identities } else { [:] }
        let email = claims["email"]?.stringValue
        let emailVerified = claims["email_verified"]?.lenientBool ?? false
        var identities: [VerifiedIdentity] = []
        for (key, provider) in [("apple.com", Provider.apple), ("google.com", .google), ("facebook.com", .facebook)] {
            guard case .array(let subjects)? = named[key], let subject = subjects.first?.stringValue,
                  !subject.isEmpty, subject.utf8.count <= 255, !subject.containsNUL else { continue }
            identities.append(VerifiedIdentity(provider: provider, subject: subject, email: email,
                                               emailVerified: emailVerified && provider != .facebook,
                                               isPrivateEmail: email?.lowercased().hasSuffix("@privaterelay.appleid.com") ?? false,
                                               name: claims["name"]?.stringValue, audience: project))
        }
        // The email is an identity only when Firebase verified it (an Apple relay address is the Apple identity's).
        if emailVerified, let email, case .array(let addresses)? = named["email"],
           addresses.contains(where: { $0.stringValue?.lowercased() == email.lowercased() }),
           !email.lowercased().hasSuffix("@privaterelay.appleid.com"), let address = try? EmailAddress(email) {
            identities.append(VerifiedIdentity(provider: .email, subject: address.value, email: address.value, emailVerified: true,
                                               isPrivateEmail: false, name: nil, audience: project))
        }
        // The provider it signed in with first; a token refreshed after a link keeps its first provider, so
        // `sign_in_provider` alone never decides anything else.
        if let first = firebase["sign_in_provider"]?.stringValue,
           let index = identities.firstIndex(where: { $0.provider.rawValue + ".com" == first || ($0.provider == .email && first == "password") }) {
            identities.insert(identities.remove(at: index), at: 0)
        }
        let anonymous = firebase["sign_in_provider"]?.stringValue == "anonymous" && identities.isEmpty
        return VerifiedLegacySession(source: .firebase, legacyID: uid, identities: identities, isAnonymous: anonymous,
                                     signedInAt: claims["auth_time"]?.numberValue.map { Date(timeIntervalSince1970: $0) })
    }

    /// Supabase (`docs/bridge-tokens.md` section 2): a user's session (`role` and `aud` `authenticated`: the anon
    /// and service keys are tokens of the same secret), a UUID subject, the issuer when one is configured.
    static func supabase(_ claims: [String: JSONValue], issuer: String?, now: TimeInterval) throws(ProviderTokenError) -> VerifiedLegacySession {
        if let issuer, claims["iss"]?.stringValue != issuer { throw ProviderTokenError(.issuer) }
        guard claims["role"]?.stringValue == "authenticated" else { throw ProviderTokenError(.role) }
        guard audiences(claims).contains("authenticated") else { throw ProviderTokenError(.audience) }
        try checkTimes(claims, now: now)
        guard let subject = claims["sub"]?.stringValue, let uuid = UUID(uuidString: subject) else { throw ProviderTokenError(.subject) }
        return VerifiedLegacySession(source: .supabase, legacyID: uuid.uuidString.lowercased(), identities: [],
                                     isAnonymous: claims["is_anonymous"]?.lenientBool ?? false)
    }

    /// Clerk (`docs/bridge-tokens.md` section 3): a `user_…` subject and a session (`sid` `sess_…`: a JWT template's
    /// token, meant for another service, may carry neither a session nor an audience), no audience, never an
    /// impersonation or a pending session, the issuer when one is configured.
    static func clerk(_ claims: [String: JSONValue], issuer: String?, now: TimeInterval) throws(ProviderTokenError) -> VerifiedLegacySession {
        if let issuer, claims["iss"]?.stringValue != issuer { throw ProviderTokenError(.issuer) }
        guard claims["aud"] == nil else { throw ProviderTokenError(.audience) }
        try checkTimes(claims, now: now)
        guard let subject = claims["sub"]?.stringValue, subject.hasPrefix("user_"), subject.utf8.count <= 128,
              !subject.containsNUL, claims["sid"]?.stringValue?.hasPrefix("sess_") == true else {
            throw ProviderTokenError(.subject)
        }
        guard claims["act"] == nil else { throw ProviderTokenError(.impersonation) }
        guard claims["sts"]?.stringValue != "pending" else { throw ProviderTokenError(.pending) }
        return VerifiedLegacySession(source: .clerk, legacyID: subject, identities: [], isAnonymous: false)
    }
}
