import Foundation
import LanyardSupport

/// Verifies ID tokens of every configured provider (reference sections 4 and 18). Production and the emulator take
/// the same path; only the key set's URL differs.
public struct IDTokenVerifier: Sendable {
    public static let leeway: TimeInterval = 60

    let keys: JWKSCache
    let clock: any LanyardClock

    public init(keys: JWKSCache, clock: any LanyardClock) {
        self.keys = keys
        self.clock = clock
    }

    public func verify(_ idToken: String, settings: ProviderSettings, nonce: String?) async throws -> VerifiedIdentity {
        let jws = try await verifiedSignature(idToken, settings: settings)
        return try Self.checkClaims(jws.claims, settings: settings, nonce: nonce, now: clock.now())
    }

    /// The claims of another JWS the provider signs (Apple's server-to-server notifications): the same key and
    /// algorithm rules, the issuer and an audience among the client IDs, not issued in the future.
    public func verifyProviderJWS(_ token: String, settings: ProviderSettings) async throws -> [String: JSONValue] {
        let claims = try await verifiedSignature(token, settings: settings).claims
        _ = try Self.checkIssuer(claims, settings: settings)
        let audiences: [String] = switch claims["aud"] {
        case .string(let value): [value]
        case .array(let values): values.compactMap(\.stringValue)
        default: []
        }
        guard audiences.contains(where: settings.clientIDs.contains) else { throw ProviderTokenError(.audience) }
        if let issuedAt = claims["iat"]?.numberValue, issuedAt > clock.now().timeIntervalSince1970 + Self.leeway {
            throw ProviderTokenError(.notYetValid)
        }
        return claims
    }

    /// What the key cache knows of this provider's keys.
    public func keyStatus(_ settings: ProviderSettings) -> KeySetStatus {
        keys.status(url: settings.jwksURL)
    }

    /// The algorithms a provider may sign with. `none`, HMAC (where the public key would become the secret) and
    /// everything else are refused before a key is even looked up.
    static let algorithms: Set<String> = ["RS256", "ES256"]
    /// Header parameters that name or carry a key: the key comes from the provider's configured set, never from the
    /// token.
    static let keyReferences = ["jku", "x5u", "jwk", "x5c"]

    /// The token, once its RS256 or ES256 signature by one of the provider's keys checks out.
    private func verifiedSignature(_ token: String, settings: ProviderSettings) async throws -> CompactJWS {
        guard let jws = CompactJWS(token) else { throw ProviderTokenError(.malformed) }
        return try await verifiedSignature(jws, jwksURL: settings.jwksURL, provider: settings.provider)
    }

    /// The token, once its signature by one of the keys at `jwksURL` checks out with an algorithm of `algorithms`
    /// (RS256, ES256 or both) that the key fits: the one path every key-set signature takes, the bridge's too.
    func verifiedSignature(_ jws: CompactJWS, jwksURL: String, provider: Provider,
                           algorithms: Set<String> = IDTokenVerifier.algorithms) async throws -> CompactJWS {
        guard let algorithm = jws.algorithm, algorithms.contains(algorithm) else { throw ProviderTokenError(.algorithm) }
        guard !Self.keyReferences.contains(where: { jws.header[$0] != nil }) else { throw ProviderTokenError(.keyReference) }
        let key = if let kid = jws.keyID {
            try await keys.key(id: kid, url: jwksURL, provider: provider)
        } else {
            // A one-key issuer may leave `kid` out (RFC 7515): the one key that fits the algorithm, as JOSE
            // libraries do, or `no_kid`.
            try await keys.onlyKey(fitting: algorithm, url: jwksURL, provider: provider)
        }
        // The key decides the algorithm too: an RSA key never checks an ES256 signature, nor the other way round.
        if let declared = key.jwk.alg, declared != algorithm { throw ProviderTokenError(.algorithm) }
        let valid: Bool
        switch algorithm {
        case "RS256":
            guard let publicKey = key.rsa else { throw ProviderTokenError(.algorithm) }
            valid = RS256.isValid(signature: jws.signature, for: jws.signingInput, key: publicKey)
        default:
            guard let publicKey = key.p256 else { throw ProviderTokenError(.algorithm) }
            valid = ES256.isValid(signature: jws.signature, for: jws.signingInput, key: publicKey)
        }
        guard valid else { throw ProviderTokenError(.signature) }
        return jws
    }

    /// The token's issuer, checked against the provider's rule; for Microsoft also its tenant.
    static func checkIssuer(_ claims: [String: JSONValue], settings: ProviderSettings) throws(ProviderTokenError) -> String {
        guard let issuer = claims["iss"]?.stringValue else { throw ProviderTokenError(.issuer) }
        switch settings.issuer {
        case .oneOf(let issuers):
            guard issuers.contains(issuer) else { throw ProviderTokenError(.issuer) }
        case .microsoft(let tenants):
            // The issuer must name the token's own tenant: a token of one tenant cannot pass as another's.
            guard let tenant = claims["tid"]?.stringValue, OIDCProviderConfiguration.isTenantID(tenant),
                  issuer == MicrosoftTenants.issuer(tenant: tenant) else { throw ProviderTokenError(.issuer) }
            guard tenants.allows(tenant) else { throw ProviderTokenError(.tenant) }
        }
        return issuer
    }

    /// The identity's subject: `sub`, or for Microsoft `tid:oid` (the same for every client ID of the app, where
    /// Microsoft's `sub` differs per client ID).
    static func subject(_ claims: [String: JSONValue], settings: ProviderSettings) throws(ProviderTokenError) -> String {
        let subject: String?
        switch settings.issuer {
        case .oneOf: subject = claims["sub"]?.stringValue
        case .microsoft:
            if let tenant = claims["tid"]?.stringValue, let object = claims["oid"]?.stringValue, !object.isEmpty {
                subject = tenant + ":" + object
            } else {
                subject = nil
            }
        }
        guard let subject, !subject.isEmpty, subject.utf8.count <= 255 else { throw ProviderTokenError(.malformed) }
        return subject
    }

    /// The claim rules, separate from signature checking so they can be unit-tested on their own.
    public static func checkClaims(_ claims: [String: JSONValue], settings: ProviderSettings, nonce: String?,
                                   now: Date) throws(ProviderTokenError) -> VerifiedIdentity {
        _ = try checkIssuer(claims, settings: settings)
        let audiences: [String] = switch claims["aud"] {
        case .string(let value): [value]
        case .array(let values): values.compactMap(\.stringValue)
        default: []
        }
        guard let audience = audiences.first(where: settings.clientIDs.contains) else {
            throw ProviderTokenError(.audience)
        }
        guard let expiry = claims["exp"]?.numberValue else { throw ProviderTokenError(.malformed) }
        let nowSeconds = now.timeIntervalSince1970
        guard nowSeconds <= expiry + leeway else { throw ProviderTokenError(.expired) }
        if let issuedAt = claims["iat"]?.numberValue, issuedAt > nowSeconds + leeway {
            throw ProviderTokenError(.notYetValid)
        }
        if let notBefore = claims["nbf"]?.numberValue, notBefore > nowSeconds + leeway {
            throw ProviderTokenError(.notYetValid)
        }
        let subject = try subject(claims, settings: settings)
        try NonceRule.check(tokenNonce: claims["nonce"]?.stringValue, providedNonce: nonce,
                            required: settings.requiresNonce)
        let email = claims["email"]?.stringValue
        let name = claims["name"]?.stringValue
        // No provider sends U+0000, and PostgreSQL's text cannot store it: such a token is malformed.
        guard ![subject, email, name].contains(where: { $0?.containsNUL ?? false }) else {
            throw ProviderTokenError(.malformed)
        }
        // Microsoft's `email` is whatever a tenant's administrator typed, whatever the token claims of it: never
        // stored as verified (reference section 25).
        let emailVerified = if case .microsoft = settings.issuer { false } else { claims["email_verified"]?.lenientBool ?? false }
        return VerifiedIdentity(
            provider: settings.provider,
            subject: subject,
            email: email,
            emailVerified: emailVerified,
            isPrivateEmail: claims["is_private_email"]?.lenientBool ?? false,
            name: name,
            audience: audience)
    }
}
