import Foundation
import LanyardSupport

/// Verifies Apple and Google ID tokens (reference section 4). Production and the emulator take the same path;
/// only the JWKS URL differs.
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
        guard let issuer = claims["iss"]?.stringValue, settings.provider.issuers.contains(issuer) else {
            throw ProviderTokenError(.issuer)
        }
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

    /// The token, once its RS256 signature by one of the provider's keys checks out.
    private func verifiedSignature(_ token: String, settings: ProviderSettings) async throws -> CompactJWS {
        guard let jws = CompactJWS(token) else { throw ProviderTokenError(.malformed) }
        // RS256 only: refuses `none`, HS256 (key confusion) and anything else before a key is even looked up.
        guard jws.algorithm == "RS256" else { throw ProviderTokenError(.algorithm) }
        guard let kid = jws.keyID else { throw ProviderTokenError(.unknownKey) }

        let key = try await keys.key(id: kid, url: settings.jwksURL, provider: settings.provider)
        if let declared = key.jwk.alg, declared != "RS256" { throw ProviderTokenError(.algorithm) }
        guard let publicKey = key.rsa else { throw ProviderTokenError(.algorithm) }
        guard RS256.isValid(signature: jws.signature, for: jws.signingInput, key: publicKey) else {
            throw ProviderTokenError(.signature)
        }
        return jws
    }

    /// The claim rules, separate from signature checking so they can be unit-tested on their own.
    public static func checkClaims(_ claims: [String: JSONValue], settings: ProviderSettings, nonce: String?,
                                   now: Date) throws(ProviderTokenError) -> VerifiedIdentity {
        guard let issuer = claims["iss"]?.stringValue, settings.provider.issuers.contains(issuer) else {
            throw ProviderTokenError(.issuer)
        }
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
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty, subject.utf8.count <= 255 else {
            throw ProviderTokenError(.malformed)
        }
        try NonceRule.check(tokenNonce: claims["nonce"]?.stringValue, providedNonce: nonce,
                            required: settings.requiresNonce)
        let email = claims["email"]?.stringValue
        let name = claims["name"]?.stringValue
        // No provider sends U+0000, and PostgreSQL's text cannot store it: such a token is malformed.
        guard ![subject, email, name].contains(where: { $0?.containsNUL ?? false }) else {
            throw ProviderTokenError(.malformed)
        }
        return VerifiedIdentity(
            provider: settings.provider,
            subject: subject,
            email: email,
            emailVerified: claims["email_verified"]?.lenientBool ?? false,
            isPrivateEmail: claims["is_private_email"]?.lenientBool ?? false,
            name: name,
            audience: audience)
    }
}
