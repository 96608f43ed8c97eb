import _CryptoExtras
import Crypto
import Foundation
import Testing
@testable import LanyardProviders
import LanyardSupport

/// The rules of section 20 that need no server: algorithms and key references, Microsoft's issuer and tenants,
/// a rotated key set, and how providers are configured.
@Suite struct OIDCRuleTests {
    static let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let ec = P256.Signing.PrivateKey()
    static let keys = JWKS(keys: [try! JWK.rsa(rsa.publicKey, kid: "r"), JWK.p256(ec.publicKey, kid: "e")])
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let settings = ProviderSettings(provider: Provider("acme"), kind: .oidc, displayName: "Acme",
                                           issuer: .oneOf(["https://id.acme.example"]), clientIDs: ["app"],
                                           jwksURL: "https://id.acme.example/keys", requiresNonce: false)

    static func claims(_ extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = ["iss": .string("https://id.acme.example"), "aud": .string("app"),
                                           "sub": .string("ada"), "exp": .number(now.timeIntervalSince1970 + 600)]
        for (key, value) in extra { claims[key] = value }
        return claims
    }

    static func token(header: [String: String], claims: [String: JSONValue] = claims(), signer: String = "RS256") throws -> String {
        let input = try CompactJWS.signingInput(header: header, claims: claims)
        return signer == "RS256" ? try RS256.sign(input, key: rsa) : try ES256.sign(input, key: ec)
    }

    static func verify(_ token: String, settings: ProviderSettings = settings) async throws -> VerifiedIdentity {
        let clock = ManualClock(now)
        return try await IDTokenVerifier(keys: JWKSCache(fetcher: CountingFetcher(keys: keys), clock: clock), clock: clock)
            .verify(token, settings: settings, nonce: nil)
    }

    @Test func rs256AndES256VerifyWithTheKeyOfTheirKind() async throws {
        #expect(try await Self.verify(try Self.token(header: ["alg": "RS256", "kid": "r"])).subject == "ada")
        #expect(try await Self.verify(try Self.token(header: ["alg": "ES256", "kid": "e"], signer: "ES256")).subject == "ada")
        // The right signature, but the header names the other kind of key: the key's kind decides.
        await #expect(throws: ProviderTokenError(.algorithm)) {
            try await Self.verify(try Self.token(header: ["alg": "ES256", "kid": "r"], signer: "ES256"))
        }
    }

    @Test(arguments: ["none", "HS256", "HS512", "RS512", "PS256", "ES384", ""])
    func everyOtherAlgorithmIsRefusedBeforeAKeyIsLookedUp(algorithm: String) async throws {
        await #expect(throws: ProviderTokenError(.algorithm)) {
            try await Self.verify(try Self.token(header: ["alg": algorithm, "kid": "r"]))
        }
    }

    @Test(arguments: ["jku", "x5u", "jwk", "x5c"])
    func aTokenThatNamesOrCarriesItsOwnKeyIsRefused(member: String) async throws {
        await #expect(throws: ProviderTokenError(.keyReference)) {
            try await Self.verify(try Self.token(header: ["alg": "RS256", "kid": "r", member: "https://attacker.example/k"]))
        }
    }

    static let contoso = "0b7c1a3e-5d2f-4e8a-9c61-2f4d8e7a1b90"
    static let microsoft = ProviderSettings(provider: .microsoft, kind: .oidc, displayName: "Microsoft",
                                            issuer: .microsoft(.any), clientIDs: ["app"], jwksURL: "k", requiresNonce: false)

    static func microsoftClaims(tenant: String, issuerTenant: String? = nil, oid: String? = "oid-1") -> [String: JSONValue] {
        var claims = claims(["iss": .string(MicrosoftTenants.issuer(tenant: issuerTenant ?? tenant)), "tid": .string(tenant),
                             "sub": .string("pairwise-per-client")])
        if let oid { claims["oid"] = .string(oid) }
        return claims
    }

    static func checkMicrosoft(_ claims: [String: JSONValue], tenants: MicrosoftTenants = .any) throws -> VerifiedIdentity {
        var settings = microsoft
        settings.issuer = .microsoft(tenants)
        return try IDTokenVerifier.checkClaims(claims, settings: settings, nonce: nil, now: now)
    }

    @Test func microsoftsIssuerMustNameTheTokensOwnTenantAndTheSubjectIsTenantAndObject() throws {
        #expect(try Self.checkMicrosoft(Self.microsoftClaims(tenant: Self.contoso)).subject == "\(Self.contoso):oid-1")
        #expect(throws: ProviderTokenError(.issuer)) {
            try Self.checkMicrosoft(Self.microsoftClaims(tenant: Self.contoso, issuerTenant: MicrosoftTenants.consumerTenant))
        }
        // The discovery document's template is not an issuer.
        #expect(throws: ProviderTokenError(.issuer)) {
            try Self.checkMicrosoft(Self.microsoftClaims(tenant: "{tenantid}"))
        }
        #expect(throws: ProviderTokenError(.malformed)) {
            try Self.checkMicrosoft(Self.microsoftClaims(tenant: Self.contoso, oid: nil))
        }
    }

    @Test func tenantsLimitWhoSignsIn() throws {
        let personal = Self.microsoftClaims(tenant: MicrosoftTenants.consumerTenant)
        let work = Self.microsoftClaims(tenant: Self.contoso)
        #expect(throws: Never.self) { try Self.checkMicrosoft(personal, tenants: .consumers) }
        #expect(throws: ProviderTokenError(.tenant)) { try Self.checkMicrosoft(work, tenants: .consumers) }
        #expect(throws: Never.self) { try Self.checkMicrosoft(work, tenants: .organizations) }
        #expect(throws: ProviderTokenError(.tenant)) { try Self.checkMicrosoft(personal, tenants: .organizations) }
        #expect(throws: Never.self) { try Self.checkMicrosoft(work, tenants: .only([Self.contoso])) }
        #expect(throws: ProviderTokenError(.tenant)) { try Self.checkMicrosoft(personal, tenants: .only([Self.contoso])) }

        #expect(MicrosoftTenants(["common"]) == .any)
        #expect(MicrosoftTenants(["Organizations"]) == .organizations)
        #expect(MicrosoftTenants([Self.contoso.uppercased()]) == .only([Self.contoso]))
        #expect(MicrosoftTenants(["contoso.onmicrosoft.com"]) == nil)
    }

    /// A provider that rotated its keys: an unknown `kid` is looked up again as soon as the cached set is past its
    /// max-age, and otherwise not within the minute.
    @Test func anUnknownKidIsLookedUpAgainOnceTheSetIsPastItsMaxAge() async throws {
        let clock = ManualClock(Self.now)
        let fetcher = CountingFetcher(keys: Self.keys, maxAge: 1)
        let cache = JWKSCache(fetcher: fetcher, clock: clock)
        _ = try await cache.key(id: "r", url: "u", provider: .google)
        fetcher.setKeys(JWKS(keys: [try JWK.rsa(Self.rsa.publicKey, kid: "r2")]))
        clock.advance(by: 6)
        #expect(try await cache.key(id: "r2", url: "u", provider: .google).kid == "r2")
        #expect(fetcher.fetches == 2)
        // Fresh again: another unknown kid waits for the minute.
        await #expect(throws: ProviderTokenError(.unknownKey)) { try await cache.key(id: "r3", url: "u", provider: .google) }
        #expect(fetcher.fetches == 2)
        #expect(cache.status(url: "u").keyIDs == ["r2"])
    }
}

/// `LANYARD_OIDC_PROVIDERS` and each name's variables, read as at start-up.
@Suite struct OIDCConfigurationTests {
    static func load(_ environment: [String: String]) throws(ConfigurationError) -> [OIDCProviderConfiguration] {
        try LanyardConfiguration.load(environment: environment).oidcProviders
    }

    @Test func presetsFillInIssuerKeysAndNames() throws {
        let providers = try Self.load([
            "LANYARD_OIDC_PROVIDERS": "microsoft, facebook,acme",
            "LANYARD_OIDC_MICROSOFT_CLIENT_IDS": "m-app", "LANYARD_OIDC_MICROSOFT_TENANTS": "organizations",
            "LANYARD_OIDC_FACEBOOK_CLIENT_IDS": "1234567890",
            "LANYARD_OIDC_ACME_ISSUER": "https://id.acme.example/", "LANYARD_OIDC_ACME_CLIENT_IDS": "a,b",
            "LANYARD_OIDC_ACME_NONCE": "optional",
        ])
        #expect(providers.map(\.name) == ["microsoft", "facebook", "acme"])
        #expect(providers[0].issuer == nil && providers[0].jwksURL == OIDCProviderConfiguration.microsoftKeys)
        #expect(providers[0].displayName == "Microsoft" && providers[0].tenants == ["organizations"])
        #expect(providers[1].issuer == "https://www.facebook.com" && providers[1].requiresNonce)
        #expect(providers[2].issuer == "https://id.acme.example/", "the issuer is compared exactly, slash and all")
        #expect(providers[2].jwksURL == "https://id.acme.example/.well-known/openid-configuration")
        #expect(providers[2].clientIDs == ["a", "b"] && !providers[2].requiresNonce && providers[2].displayName == "Acme")
        let settings = try #require(ProviderSettings(providers[0]))
        #expect(settings.issuer == .microsoft(.organizations))
    }

    @Test(arguments: [
        (["LANYARD_OIDC_PROVIDERS": "acme", "LANYARD_OIDC_ACME_CLIENT_IDS": "a"], "LANYARD_OIDC_ACME_ISSUER"),
        (["LANYARD_OIDC_PROVIDERS": "acme", "LANYARD_OIDC_ACME_ISSUER": "http://id.acme.example", "LANYARD_OIDC_ACME_CLIENT_IDS": "a"],
         "LANYARD_OIDC_ACME_ISSUER"),
        (["LANYARD_OIDC_PROVIDERS": "acme", "LANYARD_OIDC_ACME_ISSUER": "https://id.acme.example"], "LANYARD_OIDC_ACME_CLIENT_IDS"),
        (["LANYARD_OIDC_PROVIDERS": "google"], "LANYARD_OIDC_PROVIDERS"),
        (["LANYARD_OIDC_PROVIDERS": "Acme-SSO"], "LANYARD_OIDC_PROVIDERS"),
        (["LANYARD_OIDC_PROVIDERS": "facebook,facebook", "LANYARD_OIDC_FACEBOOK_CLIENT_IDS": "1"], "LANYARD_OIDC_PROVIDERS"),
        (["LANYARD_OIDC_PROVIDERS": "facebook", "LANYARD_OIDC_FACEBOOK_CLIENT_IDS": "1", "LANYARD_OIDC_ACME_ISSUER": "https://x"],
         "LANYARD_OIDC_ACME_ISSUER"),
        (["LANYARD_OIDC_PROVIDERS": "microsoft", "LANYARD_OIDC_MICROSOFT_CLIENT_IDS": "m",
          "LANYARD_OIDC_MICROSOFT_TENANTS": "common,contoso.com"], "LANYARD_OIDC_MICROSOFT_TENANTS"),
        (["LANYARD_OIDC_PROVIDERS": "microsoft", "LANYARD_OIDC_MICROSOFT_CLIENT_IDS": "m",
          "LANYARD_OIDC_MICROSOFT_ISSUER": "https://login.microsoftonline.com/common/v2.0"], "LANYARD_OIDC_MICROSOFT_ISSUER"),
        (["LANYARD_OIDC_PROVIDERS": "facebook", "LANYARD_OIDC_FACEBOOK_CLIENT_IDS": "1", "LANYARD_OIDC_FACEBOOK_NONCE": "sometimes"],
         "LANYARD_OIDC_FACEBOOK_NONCE"),
    ])
    func aBadProviderSettingNamesItsVariable(environment: [String: String], variable: String) {
        #expect(throws: ConfigurationError.self) { try Self.load(environment) }
        do {
            _ = try Self.load(environment)
        } catch {
            #expect(error.variable == variable, "\(error)")
        }
    }

    /// In dev mode the emulator supplies a client ID, so a provider needs none of its own.
    @Test func devModeNeedsNoClientIDs() throws {
        let providers = try Self.load(["LANYARD_DEV": "1", "LANYARD_OIDC_PROVIDERS": "microsoft"])
        #expect(providers.map(\.name) == ["microsoft"])
    }

    /// Where keys may come from (reference section 25): a discovery document names http keys only when the issuer
    /// itself is on loopback, and a fetch follows a redirect only on its own scheme, host and port.
    @Test func keysComeOnlyFromWhereTheyWereConfigured() {
        let remote = "https://id.example.com/.well-known/openid-configuration"
        let local = "http://127.0.0.1:9000/realms/acme/.well-known/openid-configuration"
        #expect(HTTPJWKSFetcher.mayServeKeys("https://id.example.com/jwks", describedBy: remote))
        #expect(!HTTPJWKSFetcher.mayServeKeys("http://127.0.0.1:8080/v1/admin/users", describedBy: remote))
        #expect(!HTTPJWKSFetcher.mayServeKeys("http://localhost/keys", describedBy: remote))
        #expect(HTTPJWKSFetcher.mayServeKeys("http://127.0.0.1:9000/realms/acme/certs", describedBy: local))
        #expect(!HTTPJWKSFetcher.mayServeKeys("http://10.0.0.5/keys", describedBy: local))
        #expect(!HTTPJWKSFetcher.mayServeKeys("file:///etc/passwd", describedBy: local))

        let keys = "https://id.example.com/keys"
        #expect(HTTPJWKSFetcher.redirectTarget("/keys/v2", from: keys) == "https://id.example.com/keys/v2")
        #expect(HTTPJWKSFetcher.redirectTarget("https://id.example.com/other", from: keys) == "https://id.example.com/other")
        #expect(HTTPJWKSFetcher.redirectTarget("http://id.example.com/keys", from: keys) == nil)
        #expect(HTTPJWKSFetcher.redirectTarget("https://evil.example/keys", from: keys) == nil)
        #expect(HTTPJWKSFetcher.redirectTarget("https://id.example.com:8443/keys", from: keys) == nil)
        #expect(HTTPJWKSFetcher.redirectTarget("file:///etc/passwd", from: keys) == nil)
    }
}
