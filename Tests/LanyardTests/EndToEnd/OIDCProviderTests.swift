import Crypto
import Foundation
import LanyardEmulator
import LanyardSupport
import Testing

/// Providers as configuration (reference section 20): an OpenID Connect issuer of the test's own (its keys, its
/// discovery, tokens signed by jwt-kit) and the emulator's Microsoft, through every endpoint that takes a
/// provider, on both databases.
@Suite struct OIDCProviderTests {
    static let adminKey = "admin-key-for-oidc-tests"

    /// `acme` as an operator configures it, read by the production parser; Microsoft as the emulator serves it in
    /// dev mode, limited to one tenant.
    static func configure(_ issuer: IndependentIssuer, tenants: String = "common") -> (inout LanyardConfiguration) -> Void {
        let providers = try! LanyardConfiguration.load(environment: [
            "LANYARD_OIDC_PROVIDERS": "acme,microsoft,facebook",
            "LANYARD_OIDC_ACME_ISSUER": issuer.issuer,
            "LANYARD_OIDC_ACME_CLIENT_IDS": issuer.clientID,
            "LANYARD_OIDC_ACME_DISPLAY_NAME": "Acme SSO",
            "LANYARD_OIDC_MICROSOFT_CLIENT_IDS": "11111111-2222-3333-4444-555555555555",
            "LANYARD_OIDC_MICROSOFT_TENANTS": tenants,
            "LANYARD_DEV": "1",
        ]).oidcProviders
        return { configuration in
            configuration.oidcProviders = providers
            configuration.adminKey = adminKey
        }
    }

    static func withIssuer(_ database: TestDatabase, tenants: String = "common",
                           _ body: (TestServer, IndependentIssuer) async throws -> Void) async throws {
        let issuer = try await IndependentIssuer()
        do {
            try await TestServer.with(database, configure: configure(issuer, tenants: tenants)) { server in
                issuer.follow(server.clock)
                try await body(server, issuer)
            }
        } catch {
            await issuer.stop()
            throw error
        }
        await issuer.stop()
    }

    static func microsoftToken(_ server: TestServer, sub: String, tenant: String? = nil, nonce: String? = "n-1",
                               iss: String? = nil) async throws -> String {
        // Microsoft's tokens may claim the address verified: the tenant's administrator typed it.
        var body: [String: Any] = ["sub": sub, "email": "\(sub)@contoso.example", "email_verified": true]
        if let tenant { body["tid"] = tenant }
        if let nonce { body["nonce"] = nonce }
        if let iss { body["iss"] = iss }
        let minted = try await server.post("/_emulator/oidc/microsoft/id-token", body)
        #expect(minted.status == 200, "\(minted.text)")
        return try #require(minted.json["id_token"] as? String)
    }

    @Test(arguments: TestDatabase.available)
    func anIssuerOfTheTeamsOwnSignsInLinksReauthenticatesAndUnlinks(database: TestDatabase) async throws {
        try await Self.withIssuer(database) { server, issuer in
            // The app learns which buttons to show.
            let offered = try await server.get("/v1/providers")
            #expect(offered.status == 200)
            let list = try #require(try JSONSerialization.jsonObject(with: offered.body) as? [[String: String]])
            #expect(list.map { $0["name"] ?? "" } == ["apple", "google", "acme", "microsoft", "facebook", "email", "passkey"])
            #expect(list.first { $0["name"] == "acme" }?["display_name"] == "Acme SSO")
            #expect(list.first { $0["name"] == "microsoft" }?["kind"] == "oidc")

            // A new account from an RS256 token, the same account again from an ES256 one.
            let first = try Session(try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "ada", email: "ada@acme.example", name: "Ada"), "nonce": "n-1"]))
            #expect(first.isNewUser && first.linkedProviders == ["acme"])
            let again = try Session(try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "ada", algorithm: .es256), "nonce": "n-1"]))
            #expect(again.userID == first.userID && !again.isNewUser)
            let me = try await server.get("/v1/users/me", bearer: again.accessToken)
            #expect(me.json["email"] as? String == "ada@acme.example")
            #expect(me.json["display_name"] as? String == "Ada")

            // Linked to a Google account, it signs that account in; reauthentication and unlinking take it too.
            let google = try await server.signIn(.google, sub: "ada-google")
            let linked = try await server.post("/v1/auth/link/acme", [
                "id_token": try await issuer.token(sub: "grace"), "nonce": "n-1"], bearer: google.accessToken)
            #expect(linked.status == 200, "\(linked.text)")
            #expect(linked.json["linked_providers"] as? [String] == ["google", "acme"])
            #expect(linked.json["message"] as? String == "Acme SSO account linked")
            let viaAcme = try Session(try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "grace"), "nonce": "n-1"]))
            #expect(viaAcme.userID == google.userID)
            let reauthenticated = try await server.post("/v1/auth/reauthenticate/acme", [
                "id_token": try await issuer.token(sub: "grace"), "nonce": "n-1"], bearer: viaAcme.accessToken)
            let fresh = try Session(reauthenticated)
            let unlinked = try await server.delete("/v1/auth/link/acme", bearer: fresh.accessToken)
            #expect(unlinked.status == 200, "\(unlinked.text)")
            #expect(unlinked.json["linked_providers"] as? [String] == ["google"])

            // Metrics and the discovery document name it; a name the server does not offer adds no label.
            #expect(try await server.post("/v1/auth/signin/okta", ["id_token": "x"]).status == 400)
            let metrics = try await server.get("/metrics").text
            #expect(metrics.contains(#"lanyard_signins_total{provider="acme",outcome="success"} 3"#))
            #expect(metrics.contains(#"lanyard_signins_total{provider="other",outcome="UNSUPPORTED_PROVIDER"} 1"#))
            #expect(!metrics.contains(#"provider="okta""#))
            let discovery = try await server.get("/.well-known/openid-configuration")
            let endpoints = try #require(discovery.json["signin_endpoints"] as? [String: String])
            #expect(endpoints["acme"]?.hasSuffix("/v1/auth/signin/acme") == true)
            #expect(Set(endpoints.keys) == ["anonymous", "apple", "google", "acme", "microsoft", "facebook"])

            // The audit names the provider.
            let audit = try await server.request(.GET, "/v1/admin/audit?user_id=\(first.userID)", bearer: Self.adminKey)
            let signIns = (audit.json["events"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "sign_in" }
            #expect(signIns.count == 2)
            #expect(signIns.allSatisfy { ($0["details"] as? [String: Any])?["provider"] as? String == "acme" })
        }
    }

    @Test(arguments: TestDatabase.available)
    func aMergeProofAndAGuestUpgradeTakeAnyProvider(database: TestDatabase) async throws {
        try await Self.withIssuer(database) { server, issuer in
            let guest = try await server.anonymous()
            let upgraded = try Session(try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "kim"), "nonce": "n-1"], bearer: guest.accessToken))
            #expect(upgraded.userID == guest.userID && !upgraded.isAnonymous)

            let apple = try await server.signIn(.apple, sub: "kim-apple")
            let challenge = try await server.post("/v1/users/me/merge/challenge", bearer: apple.accessToken)
            let nonce = try #require(challenge.json["nonce"] as? String)
            let merged = try await server.post("/v1/users/me/merge", [
                "proof": ["provider": "acme", "id_token": try await issuer.token(sub: "kim", nonce: nonce)]],
                bearer: apple.accessToken)
            #expect(merged.status == 200, "\(merged.text)")
            #expect(merged.json["identities_moved"] as? [String] == ["acme"])
            let after = try Session(try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "kim"), "nonce": "n-1"]))
            #expect(after.userID == apple.userID)
        }
    }

    /// Every refusal of section 20, each through the sign-in endpoint, with the reason a client can act on.
    @Test(arguments: TestDatabase.available)
    func tokensThatMustNotPassAreRefused(database: TestDatabase) async throws {
        try await Self.withIssuer(database) { server, issuer in
            func reason(_ token: String, nonce: String? = "n-1", provider: String = "acme") async throws -> String? {
                var body: [String: Any] = ["id_token": token]
                if let nonce { body["nonce"] = nonce }
                let answer = try await server.post("/v1/auth/signin/\(provider)", body)
                #expect(answer.status == 401 || answer.status == 400, "\(answer.text)")
                return answer.errorReason ?? answer.errorCode
            }
            let good = try await issuer.token(sub: "mallory")
            let parts = good.split(separator: ".").map(String.init)
            let claims = parts[1]

            // alg none, and HMAC keyed with the provider's public key.
            let none = Base64URL.encode(Array(#"{"alg":"none","kid":"\#(issuer.currentRSAKeyID)"}"#.utf8))
            #expect(try await reason("\(none).\(claims).") == "algorithm")
            let hsHeader = Base64URL.encode(Array(#"{"alg":"HS256","kid":"\#(issuer.currentRSAKeyID)"}"#.utf8))
            let hmac = HMAC<SHA256>.authenticationCode(for: Array("\(hsHeader).\(claims)".utf8),
                                                       using: SymmetricKey(data: Array(issuer.publicKeyPEM.utf8)))
            #expect(try await reason("\(hsHeader).\(claims).\(Base64URL.encode(Array(hmac)))") == "algorithm")
            // Keys named or carried by the token.
            for member in ["jku", "x5u", "jwk"] {
                let token = try await issuer.token(sub: "mallory", header: [member: "https://attacker.example/keys"])
                #expect(try await reason(token) == "key_reference", "\(member)")
            }
            // Another issuer, another audience, no nonce where it is required, an unknown provider.
            #expect(try await reason(try await issuer.token(sub: "mallory", iss: "https://attacker.example")) == "issuer")
            #expect(try await reason(try await issuer.token(sub: "mallory", aud: "someone-else")) == "audience")
            #expect(try await reason(try await issuer.token(sub: "mallory", nonce: nil), nonce: nil) == "nonce_missing")
            #expect(try await reason(good, provider: "okta") == "UNSUPPORTED_PROVIDER")
            // Acme's token presented as Microsoft's: signed by a key Microsoft does not have.
            #expect(try await reason(good, provider: "microsoft") == "unknown_key")
            // Nothing of these made an account.
            let listed = try await server.request(.GET, "/v1/admin/users", bearer: Self.adminKey)
            #expect((listed.json["users"] as? [[String: Any]])?.isEmpty == true)
        }
    }

    /// A one-key issuer may leave `kid` out of its tokens (RFC 7515; `oidc-provider-mock` from PyPI does): the one
    /// key that fits the token's algorithm checks it, as JOSE libraries do. The provider's keys are fetched for it.
    @Test(arguments: TestDatabase.available)
    func aTokenWithoutKidIsCheckedByTheOneKeyThatFitsItsAlgorithm(database: TestDatabase) async throws {
        try await Self.withIssuer(database) { server, issuer in
            let rsa = try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "kidless", namingKey: false), "nonce": "n-1"])
            #expect(rsa.status == 200, "\(rsa.text)")
            let ec = try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "kidless", algorithm: .es256, namingKey: false), "nonce": "n-1"])
            #expect(ec.status == 200)
            #expect(try Session(ec).userID == Session(rsa).userID)
            // Still signed by the issuer's key: another key's signature without a kid is a bad signature.
            let forged = try await issuer.token(sub: "kidless", namingKey: false).split(separator: ".").prefix(2)
                .joined(separator: ".") + "." + Base64URL.encode(Array(repeating: 7, count: 256))
            let refused = try await server.post("/v1/auth/signin/acme", ["id_token": forged, "nonce": "n-1"])
            #expect(refused.status == 401 && refused.errorReason == "signature")
        }
    }

    /// Where two keys fit, none is guessed: `no_kid`, logged with the provider (never the token), and shown as the
    /// provider's last refused token on the console's Providers page.
    @Test func aTokenWithoutKidThatTwoKeysFitIsRefusedAndTheRefusalIsShown() async throws {
        let issuer = try await IndependentIssuer()
        issuer.publishExtraRSAKey()
        let log = CapturedLog()
        do {
            try await TestServer.with(.sqlite, configure: Self.configure(issuer), logger: log.logger()) { server in
                issuer.follow(server.clock)
                let token = try await issuer.token(sub: "kidless", namingKey: false)
                let refused = try await server.post("/v1/auth/signin/acme", ["id_token": token, "nonce": "n-1"])
                #expect(refused.status == 401 && refused.errorReason == "no_kid", "\(refused.text)")
                // The EC key is alone of its kind: ES256 without kid still works.
                let ec = try await server.post("/v1/auth/signin/acme", [
                    "id_token": try await issuer.token(sub: "kidless", algorithm: .es256, namingKey: false), "nonce": "n-1"])
                #expect(ec.status == 200)
                let audience = try await server.post("/v1/auth/signin/acme", [
                    "id_token": try await issuer.token(sub: "kidless", aud: "someone-else"), "nonce": "n-1"])
                #expect(audience.errorReason == "audience")

                let providers = try await server.request(.GET, "/v1/admin/providers", bearer: Self.adminKey)
                let acme = try #require((providers.json["providers"] as? [[String: Any]])?.first { $0["name"] as? String == "acme" })
                let last = try #require(acme["last_refusal"] as? [String: Any])
                #expect(last["reason"] as? String == "audience" && last["kid"] as? String == issuer.currentRSAKeyID)
                let lines = log.lines.filter { $0.contains("provider token refused") }
                #expect(lines.count == 2)
                #expect(lines.first?.contains("reason=no_kid") == true && lines.first?.contains("kid=none") == true)
                #expect(lines.first?.contains("provider=acme") == true)
                #expect(lines.last?.contains("reason=audience") == true)
                for line in log.lines { #expect(!line.contains(token) && !line.contains(String(token.split(separator: ".")[1]))) }
            }
        } catch {
            await issuer.stop()
            throw error
        }
        await issuer.stop()
    }

    /// Microsoft's issuer names each token's own tenant, and the configured tenants limit who signs in; the
    /// identity is `tid:oid`.
    @Test(arguments: TestDatabase.available)
    func microsoftTokensAreCheckedAgainstTheirOwnTenant(database: TestDatabase) async throws {
        let contoso = "0b7c1a3e-5d2f-4e8a-9c61-2f4d8e7a1b90"
        let fabrikam = "6e2d9f41-8a7b-4c3d-b5e6-0f1a2b3c4d5e"
        try await Self.withIssuer(database, tenants: contoso) { server, _ in
            let signedIn = try await server.post("/v1/auth/signin/microsoft", [
                "id_token": try await Self.microsoftToken(server, sub: "oid-ada", tenant: contoso), "nonce": "n-1"])
            let session = try Session(signedIn)
            let me = try await server.get("/v1/users/me", bearer: session.accessToken)
            let identity = try #require((me.json["identities"] as? [[String: Any]])?.first)
            #expect(identity["provider"] as? String == "microsoft")
            // Stored unverified whatever the token claims (reference section 25).
            #expect(identity["email"] as? String == "oid-ada@contoso.example" && identity["email_verified"] as? Bool == false)
            let details = try await server.request(.GET, "/v1/admin/users/\(session.userID)", bearer: Self.adminKey)
            let subjects = (details.json["identities"] as? [[String: Any]] ?? []).compactMap { $0["subject"] as? String }
            #expect(subjects == ["\(contoso):oid-ada"])

            // Another tenant is refused, and so is a token whose issuer names a tenant other than its own tid.
            let other = try await server.post("/v1/auth/signin/microsoft", [
                "id_token": try await Self.microsoftToken(server, sub: "oid-eve", tenant: fabrikam), "nonce": "n-1"])
            #expect(other.status == 401 && other.errorReason == "tenant")
            let forged = try await server.post("/v1/auth/signin/microsoft", [
                "id_token": try await Self.microsoftToken(server, sub: "oid-eve", tenant: fabrikam,
                                                          iss: "https://login.microsoftonline.com/\(contoso)/v2.0"),
                "nonce": "n-1"])
            #expect(forged.status == 401 && forged.errorReason == "issuer")
        }
    }

    /// An issuer that cannot be reached answers a fast 503 for its own sign-ins only, and recovers by itself.
    @Test func anUnreachableIssuerIsA503ForItselfOnly() async throws {
        try await Self.withIssuer(.sqlite) { server, issuer in
            issuer.setFailing(true)
            let down = try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "ada"), "nonce": "n-1"])
            #expect(down.status == 503 && down.errorCode == "PROVIDER_UNAVAILABLE")
            #expect(down.errorMessage?.contains("Acme SSO") == true)
            _ = try await server.signIn(.google, sub: "unaffected")

            issuer.setFailing(false)
            server.clock.advance(by: 6)
            let up = try await server.post("/v1/auth/signin/acme", ["id_token": try await issuer.token(sub: "ada"), "nonce": "n-1"])
            #expect(up.status == 200, "\(up.text)")

            // The console's page shows the keys held, and the failure is gone with the fetch that worked.
            let providers = try await server.request(.GET, "/v1/admin/providers", bearer: Self.adminKey)
            let acme = try #require((providers.json["providers"] as? [[String: Any]])?.first { $0["name"] as? String == "acme" })
            #expect((acme["key_ids"] as? [String])?.contains(issuer.currentRSAKeyID) == true)
            #expect(acme["last_error"] == nil)
        }
    }

    /// A provider that rotates its keys: once the cached set is past its max-age, a token signed with the new key
    /// is checked against a fresh fetch; the old key no longer verifies.
    @Test func rotatedKeysAreFetchedOnceTheCachedSetIsStale() async throws {
        try await Self.withIssuer(.sqlite) { server, issuer in
            let before = try await issuer.token(sub: "ada")
            #expect(try await server.post("/v1/auth/signin/acme", ["id_token": before, "nonce": "n-1"]).status == 200)
            issuer.rotate()
            server.clock.advance(by: 6)
            let after = try await server.post("/v1/auth/signin/acme", [
                "id_token": try await issuer.token(sub: "ada"), "nonce": "n-1"])
            #expect(after.status == 200, "\(after.text)")
            let old = try await server.post("/v1/auth/signin/acme", ["id_token": before, "nonce": "n-1"])
            #expect(old.errorReason == "unknown_key")
        }
    }

    /// Two instances on one database (PostgreSQL when configured) agree on a provider's keys after it rotates
    /// them: a token of the new key signs the same person into the same account on either, the old key on neither.
    @Test func twoInstancesAgreeOnAProvidersKeysAfterItRotatesThem() async throws {
        let issuer = try await IndependentIssuer()
        do {
            try await MultiInstanceTests.withTwoInstances(Self.configure(issuer)) { a, b in
                issuer.follow(a.clock)
                let before = try await issuer.token(sub: "ada")
                let first = try Session(try await a.post("/v1/auth/signin/acme", ["id_token": before, "nonce": "n-1"]))
                #expect(try Session(try await b.post("/v1/auth/signin/acme", ["id_token": before, "nonce": "n-1"])).userID
                        == first.userID)
                issuer.rotate()
                a.clock.advance(by: 6)  // one clock for both: past the key set's max-age
                let after = try await issuer.token(sub: "ada", algorithm: .es256)
                for server in [a, b] {
                    let session = try Session(try await server.post("/v1/auth/signin/acme", ["id_token": after, "nonce": "n-1"]))
                    #expect(session.userID == first.userID)
                    let old = try await server.post("/v1/auth/signin/acme", ["id_token": before, "nonce": "n-1"])
                    #expect(old.errorReason == "unknown_key")
                }
            }
        } catch {
            await issuer.stop()
            throw error
        }
        await issuer.stop()
    }

    /// Facebook's preset: Limited Login tokens (the emulator's in dev mode) with their nonce; a webhook names the
    /// provider an identity was linked with.
    @Test func facebooksPresetSignsInWithItsNonceAndWebhooksNameTheProvider() async throws {
        let receiver = try await WebhookReceiver()
        let issuer = try await IndependentIssuer()
        do {
            try await TestServer.with(.sqlite, configure: {
                Self.configure(issuer)(&$0)
                WebhookTests.configure(receiver)(&$0)
            }) { server in
                issuer.follow(server.clock)
                func facebookToken(nonce: String?) async throws -> String {
                    var body: [String: Any] = ["sub": "10229", "email": "kim@example.com"]
                    if let nonce { body["nonce"] = nonce }
                    return try #require(try await server.post("/_emulator/oidc/facebook/id-token", body).json["id_token"] as? String)
                }
                let refused = try await server.post("/v1/auth/signin/facebook", ["id_token": try await facebookToken(nonce: nil)])
                #expect(refused.errorReason == "nonce_missing")
                let kim = try Session(try await server.post("/v1/auth/signin/facebook", [
                    "id_token": try await facebookToken(nonce: "fb-nonce"), "nonce": "fb-nonce"]))
                #expect(kim.linkedProviders == ["facebook"])
                let linked = try await server.post("/v1/auth/link/acme", [
                    "id_token": try await issuer.token(sub: "kim"), "nonce": "n-1"], bearer: kim.accessToken)
                #expect(linked.status == 200, "\(linked.text)")
                let deliveries = try await receiver.waitFor(2)
                #expect(deliveries.first { $0.type == "identity.linked" }?.data["provider"] == "acme")
            }
        } catch {
            await issuer.stop()
            await receiver.stop()
            throw error
        }
        await issuer.stop()
        await receiver.stop()
    }

    /// Supabase's clients name Microsoft `azure`; custom names pass through.
    @Test func goTruesIDTokenGrantTakesAzureAndCustomNames() async throws {
        try await Self.withIssuer(.sqlite) { server, issuer in
            let azure = try await server.post("/auth/v1/token?grant_type=id_token", [
                "provider": "azure", "id_token": try await Self.microsoftToken(server, sub: "oid-kim"), "nonce": "n-1"])
            #expect(azure.status == 200, "\(azure.text)")
            let user = try #require(azure.json["user"] as? [String: Any])
            #expect((user["app_metadata"] as? [String: Any])?["provider"] as? String == "azure")
            let custom = try await server.post("/auth/v1/token?grant_type=id_token", [
                "provider": "acme", "id_token": try await issuer.token(sub: "kim"), "nonce": "n-1"])
            #expect(custom.status == 200, "\(custom.text)")
            let settings = try await server.get("/auth/v1/settings")
            let external = try #require(settings.json["external"] as? [String: Bool])
            #expect(external["azure"] == true && external["acme"] == true && external["facebook"] == true)
            #expect(external["github"] == false && external["keycloak"] == false)
        }
    }
}
