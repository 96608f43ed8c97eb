import _CryptoExtras
import Foundation
import Testing
import LanyardEmulator
import LanyardSupport

/// Every `INVALID_PROVIDER_TOKEN` reason, reached over HTTP with really signed tokens.
@Suite struct ProviderTokenTests {
    func expectRefused(_ server: TestServer, _ provider: String = "apple", body: [String: Any], reason: String,
                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let response = try await server.post("/v1/auth/signin/\(provider)", body)
        #expect(response.status == 401, sourceLocation: sourceLocation)
        #expect(response.errorCode == "INVALID_PROVIDER_TOKEN", sourceLocation: sourceLocation)
        #expect(response.errorReason == reason, sourceLocation: sourceLocation)
    }

    /// Signs arbitrary header and claims with a key the provider never published.
    static func foreignToken(header: [String: String], claims: [String: JSONValue]) throws -> String {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return try RS256.sign(try CompactJWS.signingInput(header: header, claims: claims), key: key)
    }

    static func unsigned(header: [String: String], claims: [String: JSONValue], signature: String = "") throws -> String {
        try CompactJWS.signingInput(header: header, claims: claims) + "." + signature
    }

    @Test(arguments: TestDatabase.available)
    func everyVerificationFailureHasItsReason(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let now = server.clock.now()
            try await expectRefused(server, body: ["id_token": "not-a-jwt"], reason: "malformed")
            try await expectRefused(server, body: ["id_token": "a.b.c"], reason: "malformed")

            // A changed payload keeps the emulator's kid, so the signature is what fails.
            let genuine = try server.idToken(.apple, sub: "victim")
            let parts = genuine.split(separator: ".").map(String.init)
            let forgedClaims = Base64URL.encode(Array(#"{"iss":"https://appleid.apple.com","aud":"dev.lanyard.emulator","sub":"attacker","exp":9999999999,"iat":1}"#.utf8))
            try await expectRefused(server, body: ["id_token": "\(parts[0]).\(forgedClaims).\(parts[2])"], reason: "signature")

            // Really signed with the provider's key, but naming `aud` twice: one parser could read the first
            // audience and another the last, so the token is malformed, whatever the signature says.
            let signingKey = TestServer.sharedKeys.apple
            let twice = #"{"iss":"https://appleid.apple.com","aud":"dev.lanyard.emulator","sub":"dup","aud":"com.other.app","exp":\#(now.unixSeconds + 600),"iat":\#(now.unixSeconds)}"#
            let twiceInput = Base64URL.encode(Array(#"{"alg":"RS256","kid":"\#(signingKey.kid)"}"#.utf8)) + "."
                + Base64URL.encode(Array(twice.utf8))
            try await expectRefused(server, body: ["id_token": try RS256.sign(twiceInput, key: signingKey.privateKey)],
                                    reason: "malformed")
            // U+0000 in a stored claim: no provider sends it and PostgreSQL could not store it.
            let withNUL = twice.replacingOccurrences(of: #","aud":"com.other.app""#, with: "")
                .replacingOccurrences(of: #""sub":"dup""#, with: #""sub":"d\u0000p""#)
            let withNULInput = Base64URL.encode(Array(#"{"alg":"RS256","kid":"\#(signingKey.kid)"}"#.utf8)) + "."
                + Base64URL.encode(Array(withNUL.utf8))
            try await expectRefused(server, body: ["id_token": try RS256.sign(withNULInput, key: signingKey.privateKey)],
                                    reason: "malformed")
            // The same token with the member once is accepted: the refusal is about the duplicate alone.
            let once = twice.replacingOccurrences(of: #","aud":"com.other.app""#, with: "")
            let onceInput = Base64URL.encode(Array(#"{"alg":"RS256","kid":"\#(signingKey.kid)"}"#.utf8)) + "."
                + Base64URL.encode(Array(once.utf8))
            let accepted = try await server.post("/v1/auth/signin/apple", ["id_token": try RS256.sign(onceInput, key: signingKey.privateKey)])
            #expect(accepted.status == 200)
            // The same claims under a header naming a critical extension Lanyard does not know (RFC 7515 section
            // 4.1.11): refused, however well signed.
            for header in [#"{"alg":"RS256","kid":"\#(signingKey.kid)","crit":["exp"],"exp":1}"#,
                           #"{"alg":"RS256","kid":"\#(signingKey.kid)","crit":["b64"],"b64":true}"#] {
                let critical = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(once.utf8))
                try await expectRefused(server, body: ["id_token": try RS256.sign(critical, key: signingKey.privateKey)],
                                        reason: "malformed")
            }

            let appleKID = server.minter.jwks(for: .apple).keys[0].kid!
            let claims: [String: JSONValue] = [
                "iss": "https://appleid.apple.com", "aud": "dev.lanyard.emulator", "sub": "x",
                "iat": .number(Double(now.unixSeconds)), "exp": .number(Double(now.unixSeconds + 600)),
            ]
            try await expectRefused(server, body: ["id_token": try Self.foreignToken(
                header: ["alg": "RS256", "kid": "not-published"], claims: claims)], reason: "unknown_key")
            // A foreign key under the real kid: the signature does not verify.
            try await expectRefused(server, body: ["id_token": try Self.foreignToken(
                header: ["alg": "RS256", "kid": appleKID], claims: claims)], reason: "signature")
            // alg none, and HS256 "signed" with the public key (key confusion).
            try await expectRefused(server, body: ["id_token": try Self.unsigned(
                header: ["alg": "none", "kid": appleKID], claims: claims)], reason: "algorithm")
            try await expectRefused(server, body: ["id_token": try Self.unsigned(
                header: ["alg": "HS256", "kid": appleKID], claims: claims, signature: "c2lnbmF0dXJl")], reason: "algorithm")

            try await expectRefused(server, body: ["id_token": try server.idToken(.apple, sub: "x", issuer: "https://evil.example")],
                                    reason: "issuer")
            // A Google token presented as Apple fails on the issuer too (and the key).
            try await expectRefused(server, body: ["id_token": try server.idToken(.apple, sub: "x", aud: "com.other.app")],
                                    reason: "audience")
            try await expectRefused(server, body: ["id_token": try server.idToken(
                .apple, sub: "x", expiresIn: 600, issuedAt: now.addingTimeInterval(-661 - 600))], reason: "expired")
            try await expectRefused(server, body: ["id_token": try server.idToken(
                .apple, sub: "x", issuedAt: now.addingTimeInterval(120))], reason: "not_yet_valid")
            try await expectRefused(server, body: ["id_token": try server.idToken(.apple, sub: "x", nonce: "abc")],
                                    reason: "nonce_missing")
            try await expectRefused(server, body: ["id_token": try server.idToken(.apple, sub: "x", nonce: "abc"), "nonce": "abd"],
                                    reason: "nonce_mismatch")
        }
    }

    @Test(arguments: TestDatabase.available)
    func leewayToleratesSmallClockSkew(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let now = server.clock.now()
            let slightlyExpired = try server.idToken(.google, sub: "skew", expiresIn: 600, issuedAt: now.addingTimeInterval(-630))
            let expired = try await server.post("/v1/auth/signin/google", ["id_token": slightlyExpired])
            #expect(expired.status == 200, "\(expired.text)")
            let slightlyAhead = try server.idToken(.google, sub: "skew", issuedAt: now.addingTimeInterval(45))
            #expect(try await server.post("/v1/auth/signin/google", ["id_token": slightlyAhead]).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aRawNonceMatchesRawAndHashedTokenNonces(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let raw = "Zx81_raw-nonce"
            // Apple's iOS API embeds the SHA-256 of the raw nonce; Google SDKs embed the raw value.
            let apple = try server.idToken(.apple, sub: "nonce-user", nonce: Hashing.sha256Hex(raw))
            #expect(try await server.post("/v1/auth/signin/apple", ["id_token": apple, "nonce": raw]).status == 200)
            let google = try server.idToken(.google, sub: "nonce-user", nonce: raw)
            #expect(try await server.post("/v1/auth/signin/google", ["id_token": google, "nonce": raw]).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aProviderConfiguredToRequireANonceRefusesTokensWithout(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.googleRequiresNonce = true }) { server in
            try await expectRefused(server, "google", body: ["id_token": try server.idToken(.google, sub: "n")],
                                    reason: "nonce_missing")
        }
    }

    @Test(arguments: TestDatabase.available)
    func bothIssuerSpellingsAndSeveralAudiencesAreAccepted(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            $0.googleClientIDs = ["ios.apps.googleusercontent.com", "android.apps.googleusercontent.com"]
        }) { server in
            for (issuer, audience) in [("accounts.google.com", "ios.apps.googleusercontent.com"),
                                       ("https://accounts.google.com", "android.apps.googleusercontent.com")] {
                let token = try server.idToken(.google, sub: "multi", aud: audience, issuer: issuer)
                #expect(try await server.post("/v1/auth/signin/google", ["id_token": token]).status == 200)
            }
            let apple = try server.idToken(.apple, sub: "multi", issuer: "https://account.apple.com")
            #expect(try await server.post("/v1/auth/signin/apple", ["id_token": apple]).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func unreachableProviderKeysAnswerProviderUnavailable(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            $0.devMode = false
            $0.appleClientIDs = ["dev.lanyard.emulator"]
            $0.appleJWKSURL = "http://127.0.0.1:9/keys"
        }) { server in
            let response = try await server.post("/v1/auth/signin/apple", ["id_token": try server.idToken(.apple, sub: "x")])
            #expect(response.status == 503)
            #expect(response.errorCode == "PROVIDER_UNAVAILABLE")
            // Google has no client IDs outside dev mode: not offered.
            let google = try await server.post("/v1/auth/signin/google", ["id_token": try server.idToken(.google, sub: "x")])
            #expect(google.status == 400)
            #expect(google.errorCode == "UNSUPPORTED_PROVIDER")
        }
    }
}
