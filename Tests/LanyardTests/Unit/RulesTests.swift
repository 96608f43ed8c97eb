import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct DerivedUserIDTests {
    // Vectors computed independently (Python hashlib/uuid) from DESIGN section 4's definition.
    @Test(arguments: [
        ("apple", "001091.22c0ca594d4243c58edf3553540380b5.2045", "154af961-f6c1-4358-92d7-4dcfa9846190"),
        ("google", "109876543210987654321", "82710d02-b539-40fb-a33e-12dcd9fe3c7f"),
        ("apple", "001", "e7cb0564-8bc2-4f27-a365-27d1cf514c2b"),
    ])
    func derivedIDsMatchTheDesignVectors(provider: String, subject: String, expected: String) {
        #expect(DerivedUserID.make(provider: provider, subject: subject) == expected)
    }

    @Test func derivedIDsAreVersion4WithRFCVariant() {
        let id = DerivedUserID.make(provider: "google", subject: "x")
        let characters = Array(id)
        #expect(characters[14] == "4")
        #expect("89ab".contains(characters[19]))
        #expect(UUID(uuidString: id) != nil)
    }
}

@Suite struct NewIDTests {
    @Test func newIDsAreVersion7UUIDsCarryingTheirMillisecond() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.5)
        let id = SystemRandomSource().newID(at: date)
        let characters = Array(id)
        #expect(UUID(uuidString: id) != nil && id == id.lowercased())
        #expect(characters[14] == "7")
        #expect("89ab".contains(characters[19]))
        // The first 48 bits are the Unix time in milliseconds (RFC 9562).
        #expect(id.hasPrefix("01a1ee56-5ff4-7"))
        let hex = id.replacingOccurrences(of: "-", with: "").prefix(12)
        #expect(UInt64(hex, radix: 16) == 1_795_000_000_500)
    }

    @Test func idTextIsFoundationsUUIDTextInLowerCase() {
        let random = SystemRandomSource()
        for _ in 0..<500 {
            let raw = random.bytes(16)
            let foundation = UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                                         raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
            #expect(UUIDText.lowercase(raw) == foundation.uuidString.lowercased())
            #expect(UUIDText.bytes(foundation.uuidString) == raw)
            #expect(UUIDText.bytes(foundation.uuidString.lowercased()) == raw)
        }
    }

    @Test(arguments: ["", "019a5f3c7b2e7d419c3e5a1b2c3d4e5f", "019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5", "019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5f0",
                      "019a5f3c-7b2e-7d41-9c3e_5a1b2c3d4e5f", "019a5f3g-7b2e-7d41-9c3e-5a1b2c3d4e5f", "019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5é"])
    func textThatIsNotAUUIDHasNoBytes(text: String) {
        #expect(UUIDText.bytes(text) == nil)
    }

    @Test func randomBytesComeInTheCountAskedForAndDiffer() {
        let random = SystemRandomSource()
        for count in [0, 1, 7, 8, 16, 32, 33, 300] {
            #expect(random.bytes(count).count == count)
        }
        let draws = (0..<200).map { _ in random.bytes(16) }
        #expect(Set(draws).count == draws.count)
        // Every bit position takes both values across the draws: no byte is left unfilled.
        for index in 0..<16 {
            #expect(draws.reduce(0) { $0 | $1[index] } == 0xFF && draws.reduce(0xFF) { $0 & $1[index] } == 0)
        }
    }

    @Test func laterIDsSortAfterEarlierOnesAndNeverRepeat() {
        let random = SystemRandomSource()
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let ids = (0..<1000).map { random.newID(at: start.addingTimeInterval(Double($0) / 64)) }
        #expect(ids == ids.sorted())
        let sameMillisecond = (0..<1000).map { _ in random.newID(at: start) }
        #expect(Set(sameMillisecond).count == 1000)
    }
}

@Suite struct NonceRuleTests {
    @Test func aRawNonceMatchesARawOrHashedTokenNonce() throws {
        try NonceRule.check(tokenNonce: "n-0S6_WzA2Mj", providedNonce: "n-0S6_WzA2Mj", required: false)
        try NonceRule.check(tokenNonce: "0823a09b54cb9381561068b00aaf4e539b3f54604631d3e6a820879b6b04cc19",
                            providedNonce: "n-0S6_WzA2Mj", required: false)
    }

    @Test func aTokenWithANonceNeedsTheMatchingOne() {
        #expect(throws: ProviderTokenError(.nonceMissing)) {
            try NonceRule.check(tokenNonce: "abc", providedNonce: nil, required: false)
        }
        #expect(throws: ProviderTokenError(.nonceMismatch)) {
            try NonceRule.check(tokenNonce: "abc", providedNonce: "abd", required: false)
        }
    }

    @Test func aRequiredNonceRefusesTokensWithout() {
        #expect(throws: ProviderTokenError(.nonceMissing)) {
            try NonceRule.check(tokenNonce: nil, providedNonce: nil, required: true)
        }
    }

    @Test func aNonceTheTokenDoesNotCarryIsAMismatch() {
        #expect(throws: ProviderTokenError(.nonceMismatch)) {
            try NonceRule.check(tokenNonce: nil, providedNonce: "abc", required: false)
        }
    }
}

@Suite struct RefreshRotationRuleTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aFreshTokenRotates() {
        #expect(RefreshTokens.decide(rotatedAt: nil, now: now, grace: 10) == .rotate)
    }

    @Test func aJustRotatedTokenIsAnsweredAgainWithinTheGrace() {
        #expect(RefreshTokens.decide(rotatedAt: now.addingTimeInterval(-10), now: now, grace: 10) == .repeatWithinGrace)
    }

    @Test func aRotatedTokenAfterTheGraceIsReuse() {
        #expect(RefreshTokens.decide(rotatedAt: now.addingTimeInterval(-10.5), now: now, grace: 10) == .reuse)
    }

    let session = "019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5f"

    @Test func theSuccessorIsStableAndUnrelatedToTheToken() {
        let key = Array(repeating: UInt8(1), count: 32)
        let token = RefreshTokens.generate(session: session, SystemRandomSource())
        #expect(RefreshTokens.isWellFormed(token))
        let successor = RefreshTokens.successor(of: token, session: session, key: key)
        #expect(successor == RefreshTokens.successor(of: token, session: session, key: key))
        #expect(successor != token)
        #expect(RefreshTokens.isWellFormed(successor))
        #expect(RefreshTokens.successor(of: token, session: session, key: Array(repeating: 2, count: 32)) != successor)
    }

    /// A token is found by its session's id, then checked by its hash: a session's tokens sit together.
    @Test func aTokenIsStoredUnderItsSessionAndItsHash() throws {
        let token = RefreshTokens.generate(session: session, SystemRandomSource())
        #expect(token.utf8.count == 64)
        #expect(RefreshTokens.storageKey(token) == session + "." + Hashing.sha256Hex(token))
        let successor = RefreshTokens.successor(of: token, session: session, key: Array(repeating: 1, count: 32))
        #expect(RefreshTokens.storageKey(successor) == session + "." + Hashing.sha256Hex(successor))
        // Another session's id in front of the same secret is another key, which no stored token has.
        var raw = try #require(Base64URL.decode(token))
        raw[15] ^= 1
        let moved = Base64URL.encode(raw)
        #expect(RefreshTokens.isWellFormed(moved))
        #expect(RefreshTokens.storageKey(moved).hasPrefix("019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5e."))
        #expect(RefreshTokens.storageKey(moved).hasSuffix(Hashing.sha256Hex(moved)))
    }

    /// Tokens issued before session ids were part of them: the 256 random bits alone, under their hash alone.
    @Test func anEarlierTokenIsStoredUnderItsHashAlone() {
        let earlier = Base64URL.encode(SystemRandomSource().bytes(32))
        #expect(earlier.utf8.count == 43)
        #expect(RefreshTokens.isWellFormed(earlier))
        #expect(RefreshTokens.storageKey(earlier) == Hashing.sha256Hex(earlier))
    }

    @Test(arguments: ["", "short", String(repeating: "a", count: 44), String(repeating: "!", count: 43),
                      String(repeating: "a", count: 63), String(repeating: "a", count: 65),
                      String(repeating: "a", count: 63) + "=", String(repeating: "a", count: 63) + "!"])
    func malformedRefreshTokensAreRefusedUpFront(token: String) {
        #expect(!RefreshTokens.isWellFormed(token))
    }
}

@Suite struct SignInRecordingRuleTests {
    let recorded = Date(timeIntervalSince1970: 1_800_000_000)
    var identity: IdentityRecord {
        IdentityRecord(id: "i", userID: "u", provider: "google", providerUserID: "g-1", email: "ada@gmail.com",
                       emailVerified: true, isPrivateEmail: false, linkedAt: recorded, lastSignInAt: recorded)
    }

    @Test func aRepeatWithinTheSecondChangesNothing() {
        #expect(!identity.signInChanges(at: recorded.addingTimeInterval(0.999), email: "ada@gmail.com",
                                        emailVerified: true, isPrivateEmail: false))
        #expect(!identity.signInChanges(at: recorded, email: nil, emailVerified: true, isPrivateEmail: false))
    }

    @Test func aSecondLaterTheTimeIsRecorded() {
        #expect(identity.signInChanges(at: recorded.addingTimeInterval(1), email: "ada@gmail.com",
                                       emailVerified: true, isPrivateEmail: false))
    }

    @Test func whatTheProviderSaysNewIsRecordedAtOnce() {
        #expect(identity.signInChanges(at: recorded, email: "ada@new.example", emailVerified: true, isPrivateEmail: false))
        #expect(identity.signInChanges(at: recorded, email: "ada@gmail.com", emailVerified: false, isPrivateEmail: false))
        #expect(identity.signInChanges(at: recorded, email: "ada@gmail.com", emailVerified: true, isPrivateEmail: true))
    }

    @Test func aFirstSignInIsRecorded() {
        var linkedOnly = identity
        linkedOnly.lastSignInAt = nil
        #expect(linkedOnly.signInChanges(at: recorded, email: "ada@gmail.com", emailVerified: true, isPrivateEmail: false))
    }
}

@Suite struct RateLimitWindowTests {
    @Test func windowsAreFixedAndAligned() {
        let rate = RateLimitSettings.Rate(limit: 5, window: 3600)
        let window = RateLimiter.window(for: Date(timeIntervalSince1970: 7_250), rate: rate)
        #expect(window.start == Date(timeIntervalSince1970: 7_200))
        #expect(window.end == Date(timeIntervalSince1970: 10_800))
    }
}

@Suite struct ClientAddressTests {
    let proxies = [CIDR("10.0.0.0/8")!, CIDR("fd00::/8")!]

    @Test func anUntrustedPeerIsTheClient() {
        #expect(ClientAddress.resolve(peer: "203.0.113.9", forwardedFor: "1.2.3.4", trustedProxies: proxies) == "203.0.113.9")
    }

    @Test func behindATrustedProxyTheRightmostUntrustedHopIsTheClient() {
        #expect(ClientAddress.resolve(peer: "10.1.2.3", forwardedFor: "6.6.6.6, 198.51.100.7, 10.0.0.5",
                                      trustedProxies: proxies) == "198.51.100.7")
    }

    @Test func cidrsMatchIPv4IPv6AndMappedAddresses() {
        #expect(CIDR("10.0.0.0/8")!.contains("10.255.0.1"))
        #expect(!CIDR("10.0.0.0/8")!.contains("11.0.0.1"))
        #expect(CIDR("10.0.0.0/8")!.contains("::ffff:10.1.1.1"))
        #expect(CIDR("fd00::/8")!.contains("fd12:3456::1"))
        #expect(!CIDR("fd00::/8")!.contains("fe80::1"))
        #expect(CIDR("127.0.0.1")!.contains("127.0.0.1"))
        #expect(CIDR("300.0.0.0/8") == nil)
        #expect(CIDR("10.0.0.0/33") == nil)
    }
}

@Suite struct ConfigurationTests {
    @Test func defaultsFollowTheDesign() throws {
        let configuration = try LanyardConfiguration.load(environment: [:])
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.database == .sqliteFile(path: ".lanyard/lanyard.sqlite"))
        #expect(configuration.databasePoolSize == 10)
        #expect(configuration.resolvedIssuer() == "http://127.0.0.1:8080")
        #expect(configuration.accessTokenTTL == 900)
        #expect(configuration.refreshTokenTTL == 2_592_000)
        #expect(configuration.refreshReuseGrace == 10)
        #expect(configuration.reauthWindow == 600)
        #expect(configuration.rateLimits.enabled)
        #expect(configuration.rateLimits.link == .init(limit: 5, window: 3600))
        #expect(configuration.appleJWKSURL == "https://appleid.apple.com/auth/keys")
        #expect(configuration.googleJWKSURL == "https://www.googleapis.com/oauth2/v3/certs")
        #expect(configuration.userIDStrategy == .random)
    }

    @Test func valuesAreParsed() throws {
        let configuration = try LanyardConfiguration.load(environment: [
            "LANYARD_DATABASE_URL": "postgres://lanyard:s%40cret@db.internal:6543/auth?sslmode=disable",
            "LANYARD_MASTER_KEY": Data(repeating: 1, count: 32).base64EncodedString(),
            "LANYARD_APPLE_CLIENT_IDS": "com.example.app, com.example.web ",
            "LANYARD_USER_ID_STRATEGY": "derived",
            "LANYARD_TRUSTED_PROXIES": "10.0.0.0/8,fd00::/8",
            "LANYARD_RATE_LIMIT_LINK": "3/60",
            "LANYARD_DATABASE_POOL_SIZE": "32",
        ])
        #expect(configuration.database == .postgres(.init(host: "db.internal", port: 6543, username: "lanyard",
                                                          password: "s@cret", database: "auth", tlsMode: "disable")))
        #expect(configuration.appleClientIDs == ["com.example.app", "com.example.web"])
        #expect(configuration.userIDStrategy == .derived)
        #expect(configuration.trustedProxies.count == 2)
        #expect(configuration.rateLimits.link == .init(limit: 3, window: 60))
        #expect(configuration.databasePoolSize == 32)
    }

    @Test func thePostgresURLCarriesPreparedStatementsAndASocketDirectory() throws {
        let key = Data(repeating: 1, count: 32).base64EncodedString()
        func location(_ url: String) throws -> DatabaseLocation {
            try LanyardConfiguration.load(environment: ["LANYARD_DATABASE_URL": url, "LANYARD_MASTER_KEY": key]).database
        }
        guard case .postgres(let plain) = try location("postgres://u@h/db"),
              case .postgres(let pooled) = try location("postgres://u@h:6543/db?sslmode=require&prepared_statements=off")
        else { Issue.record("not postgres"); return }
        #expect(plain.preparedStatements)
        #expect(!pooled.preparedStatements)
        #expect(pooled.tlsMode == "require" && pooled.port == 6543)
        guard case .postgres(let local) = try location("postgres://lanyard@/auth?host=/run/postgresql&port=5433")
        else { Issue.record("not postgres"); return }
        #expect(local.socketDirectory == "/run/postgresql" && local.port == 5433 && local.database == "auth")
    }

    @Test(arguments: [
        ("LANYARD_PORT", "eighty"),
        ("LANYARD_PORT", "70000"),
        ("LANYARD_DATABASE_URL", "mysql://x"),
        ("LANYARD_ACCESS_TOKEN_TTL", "-5"),
        ("LANYARD_REFRESH_TOKEN_TTL", "1d"),
        ("LANYARD_MASTER_KEY", "not-base64!"),
        ("LANYARD_MASTER_KEY", Data(repeating: 1, count: 16).base64EncodedString()),
        ("LANYARD_APPLE_JWKS_URL", "ftp://keys"),
        ("LANYARD_USER_ID_STRATEGY", "sequential"),
        ("LANYARD_TRUSTED_PROXIES", "10.0.0.0/99"),
        ("LANYARD_RATE_LIMITS", "sometimes"),
        ("LANYARD_WEBHOOK_SECRET", "plain"),
        ("LANYARD_DATABASE_POOL_SIZE", "0"),
        ("LANYARD_DATABASE_URL", "postgres://u@h/db?prepared_statements=maybe"),
        ("LANYARD_DATABASE_URL", "postgres://u@/db"),
        ("LANYARD_DATABASE_URL", "postgres://u@/db?host=relative/dir"),
        ("LANYARD_DATABASE_URL", "postgres://u@/db?host=/run/postgresql&port=0"),
    ])
    func aBadSettingNamesItsVariable(variable: String, value: String) {
        #expect {
            _ = try LanyardConfiguration.load(environment: [variable: value])
        } throws: { error in
            (error as? ConfigurationError)?.variable == variable
        }
    }

    @Test func postgresWithoutAMasterKeyIsRefused() {
        #expect(throws: ConfigurationError.self) {
            _ = try LanyardConfiguration.load(environment: ["LANYARD_DATABASE_URL": "postgres://u:p@localhost/db"])
        }
        do {
            _ = try LanyardConfiguration.load(environment: ["LANYARD_DATABASE_URL": "postgres://u:p@localhost/db"])
        } catch {
            #expect(error.variable == "LANYARD_MASTER_KEY")
        }
    }
}

@Suite struct JSONValueTests {
    @Test func parsingKeepsEveryJSONType() throws {
        let parsed = try #require(JSONParser.parseObject(Array(
            #"{"s":"x","i":9999999999,"d":1.5,"t":true,"f":false,"z":0,"o":1,"n":null,"a":["b",2],"m":{"k":"v"}}"#.utf8)))
        #expect(parsed["s"] == .string("x"))
        #expect(parsed["i"] == .number(9_999_999_999))
        #expect(parsed["d"] == .number(1.5))
        #expect(parsed["t"] == .bool(true))
        #expect(parsed["f"] == .bool(false))
        #expect(parsed["z"] == .number(0))
        #expect(parsed["o"] == .number(1))
        #expect(parsed["n"] == .null)
        #expect(parsed["a"] == .array([.string("b"), .number(2)]))
        #expect(parsed["m"] == .object(["k": .string("v")]))
        #expect(JSONParser.parseObject(Array("[1]".utf8)) == nil)
        #expect(JSONParser.parseObject(Array("{".utf8)) == nil)
    }
}

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLengthAgainstFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test(arguments: ["a", "ab=", "a+b/", "ab cd", "é", "AB", "ABC", "AAAAA*", "AAAA*A", "AB*D", "AAAA\u{0}AA"])
    func refusesWhatIsNotCanonicalBase64URL(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

@Suite struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (1_795_282_184_961, "2026-11-21T17:29:44.961Z"),
        (951_782_400_500, "2000-02-29T00:00:00.500Z"),
        (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
        (1_689_543_600_123, "2023-07-16T21:40:00.123Z"),
    ])
    func storedMillisecondsPrintExactly(milliseconds: Int64, expected: String) {
        #expect(Timestamps.format(Date(unixMilliseconds: milliseconds)) == expected)
    }
}

@Suite struct HexStringTests {
    @Test func printsTwoLowerCaseDigitsPerByte() {
        #expect([0x00, 0x0f, 0xa5, 0xff].hexString == "000fa5ff")
        #expect([UInt8]().hexString == "")
        // FIPS 180-2's first SHA-256 example, printed through the same extension.
        #expect(Hashing.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

@Suite struct JSONWriterTests {
    struct Sample: JSONWritable {
        func write(to writer: inout JSONWriter) {
            writer.object { json in
                json.key("text"); json.string("quote \" backslash \\ newline \n tab \t bell \u{07} é 😀")
                json.key("edges"); json.string("\"starts and ends escaped\n")
                json.key("none"); json.string(nil)
                json.key("flag"); json.bool(true)
                json.key("count"); json.integer(-42)
                json.key("list"); json.strings(["a", "b"])
                json.key("empty"); json.array([Int]()) { _, _ in }
                json.key("nested"); json.object { inner in inner.key("k"); inner.bool(false) }
            }
        }
    }

    @Test func writesValidJSONThatFoundationReadsBack() throws {
        let bytes = JSONWriter.write(Sample())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["text"] as? String == "quote \" backslash \\ newline \n tab \t bell \u{07} é 😀")
        #expect(object["edges"] as? String == "\"starts and ends escaped\n")
        #expect(object["none"] is NSNull)
        #expect(object["flag"] as? Bool == true)
        #expect(object["count"] as? Int == -42)
        #expect(object["list"] as? [String] == ["a", "b"])
        #expect((object["empty"] as? [Any])?.isEmpty == true)
        #expect((object["nested"] as? [String: Any])?["k"] as? Bool == false)
    }
}
