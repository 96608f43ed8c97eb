import Crypto
import Foundation
import LanyardProviders
import LanyardSupport
import LanyardWire
import Testing

/// The WebAuthn parsers under hostile input: CBOR's limits, and a fuzz of attestation objects, authenticator data
/// and signatures (truncated, flipped, grown, nested, random) that must each end in a refusal, never a crash.
@Suite struct PasskeyParserTests {
    static let party = PasskeyCeremony(party: .init(id: "localhost", origins: ["http://localhost:8080"], requireUserVerification: true))

    static func options(challenge: String = Base64URL.encode([9, 9, 9])) -> PublicKeyCredentialCreationOptionsJSON {
        .init(rp: .init(id: "localhost", name: "localhost"), user: .init(id: Base64URL.encode([1]), name: "a", displayName: "a"),
              challenge: challenge, pubKeyCredParams: [.init(alg: -7)], timeout: 1000, excludeCredentials: [],
              authenticatorSelection: .init(residentKey: "required", requireResidentKey: true, userVerification: "required"),
              attestation: "none")
    }

    /// A deterministic generator, so a failure names a case that runs again the same way.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func cborRefusesWhatWebAuthnNeverSends() throws {
        let refused: [(String, [UInt8])] = [
            ("nested nine deep", [UInt8](repeating: 0x81, count: 9) + [0x00]),
            ("nested ten thousand deep", [UInt8](repeating: 0x81, count: 10_000) + [0x00]),
            ("an array of 129", [0x98, 129] + [UInt8](repeating: 0x00, count: 129)),
            ("a length past the end", [0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]),
            ("a length of 2^64-1", [0x5B] + [UInt8](repeating: 0xFF, count: 8)),
            ("indefinite bytes", [0x5F, 0x41, 0x00, 0xFF]),
            ("a tag", [0xC0, 0x00]),
            ("a float", [0xFA, 0x3F, 0x80, 0x00, 0x00]),
            ("a duplicate key", [0xA2, 0x01, 0x00, 0x01, 0x00]),
            ("trailing bytes", [0x00, 0x00]),
            ("truncated", [0x82, 0x00]),
            ("text that is not UTF-8", [0x62, 0xC3, 0x28]),
            ("a negative beyond 64 bits", [0x3B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            ("empty", []),
        ]
        for (name, bytes) in refused {
            #expect(throws: CBORError.self, "\(name)") { try CBORDecoder.decode(bytes) }
        }
        let value = CBOR.map([.init(key: .unsigned(1), value: .negative(-7)), .init(key: .text("k"), value: .array([.bytes([1, 2]), .bool(true), .null]))])
        #expect(try CBORDecoder.decode(CBOREncoder.encode(value)) == value)
        #expect(try CBORDecoder.decode([0x18, 0x05]) == .unsigned(5), "an argument longer than it need be is read")
    }

    @Test func mutatedRegistrationsAreRefusedNeverCrash() throws {
        let authenticator = SoftwareAuthenticator(origin: "http://localhost:8080")
        let good = try authenticator.create(Self.options())
        let attestation = try #require(Base64URL.decode(good.response.attestationObject))
        #expect(throws: Never.self) { _ = try Self.party.register(attestationObject: attestation, claimedID: good.id) }
        var generator = SplitMix(state: 40)
        var refusals: [PasskeyRefusal.Reason: Int] = [:]
        func attempt(_ bytes: [UInt8]) {
            do { _ = try Self.party.register(attestationObject: bytes, claimedID: good.id) } catch {
                refusals[error.reason, default: 0] += 1
            }
        }
        for length in 0..<attestation.count { attempt(Array(attestation.prefix(length))) }
        for _ in 0..<3000 {
            var bytes = attestation
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
                default: if bytes.count > 1 { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator)) }
                }
            }
            attempt(bytes)
        }
        for _ in 0..<2000 {
            attempt((0..<Int.random(in: 0..<400, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        // An attestation object at the size limit, and one past it.
        attempt([0x59, 0x3F, 0xFC] + [UInt8](repeating: 0, count: 0x3FFC))
        attempt([UInt8](repeating: 0x41, count: CBORDecoder.maximumInput + 1))
        #expect(refusals[.malformed, default: 0] > 4000, "\(refusals)")
        #expect(Set(refusals.keys).isSubset(of: [.malformed, .rpID, .userPresence, .userVerification, .algorithm]), "\(refusals)")
    }

    @Test func mutatedSignInsAreRefusedNeverCrashAndNeverPass() throws {
        let authenticator = SoftwareAuthenticator(origin: "http://localhost:8080")
        let registration = try authenticator.create(Self.options())
        let created = try Self.party.register(attestationObject: try #require(Base64URL.decode(registration.response.attestationObject)),
                                              claimedID: registration.id)
        let assertion = try authenticator.get(.init(challenge: "c", rpId: "localhost", userVerification: "required", timeout: 1))
        let data = try #require(Base64URL.decode(assertion.response.authenticatorData))
        let clientData = try #require(Base64URL.decode(assertion.response.clientDataJSON))
        let signature = try #require(Base64URL.decode(assertion.response.signature))
        #expect(throws: Never.self) {
            _ = try Self.party.authenticate(authenticatorData: data, clientDataJSON: clientData, signature: signature,
                                            storedKey: created.publicKey, storedCount: 1)
        }
        var generator = SplitMix(state: 41)
        var passed = 0
        for _ in 0..<3000 {
            var (d, s, k) = (data, signature, created.publicKey)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: d[Int.random(in: 0..<d.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            case 1: s = Array(s.prefix(Int.random(in: 0..<s.count, using: &generator)))
            default: k[Int.random(in: 0..<k.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            }
            if (try? Self.party.authenticate(authenticatorData: d, clientDataJSON: clientData, signature: s,
                                             storedKey: k, storedCount: 1)) != nil { passed += 1 }
        }
        // Every byte of the authenticator data is signed, and a signature or key is whole or nothing.
        #expect(passed == 0)
        for text in ["", "[]", "{", #"{"type":"webauthn.get"}"#, #"{"type":1,"challenge":"a","origin":"b"}"#,
                     String(repeating: "a", count: 5000)] {
            #expect(throws: PasskeyRefusal.self) { try PasskeyCeremony.clientData(Array(text.utf8), expecting: "webauthn.get") }
        }
    }

    @Test func countersAndOriginsFollowTheRules() throws {
        #expect(PasskeyRules.counterAccepted(stored: 0, presented: 0))
        #expect(PasskeyRules.counterAccepted(stored: 0, presented: 1))
        #expect(PasskeyRules.counterAccepted(stored: 5, presented: 6))
        #expect(!PasskeyRules.counterAccepted(stored: 5, presented: 5))
        #expect(!PasskeyRules.counterAccepted(stored: 5, presented: 0))
        #expect(!PasskeyRules.counterAccepted(stored: 5, presented: 4))
        let app = PasskeySettings.AndroidApp(package: "a.b", fingerprint: (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":"))
        #expect(app.origin == "android:apk-key-hash:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
        var settings = PasskeySettings()
        #expect(settings.party(devMode: false, issuer: "http://127.0.0.1:8080") == nil)
        #expect(settings.party(devMode: true, issuer: "http://127.0.0.1:8080")?.origins == ["http://localhost:8080"])
        settings.rpID = "example.com"
        settings.origins = ["https://example.com"]
        settings.androidApps = [app]
        #expect(settings.party(devMode: true, issuer: "http://127.0.0.1:8080")?.origins == ["https://example.com", app.origin])
    }

    @Test func badSettingsNameTheirVariable() throws {
        for (variable, value) in [("LANYARD_WEBAUTHN_RP_ID", "https://example.com"), ("LANYARD_WEBAUTHN_ORIGINS", "http://example.com"),
                                  ("LANYARD_WEBAUTHN_USER_VERIFICATION", "always"), ("LANYARD_APPLE_APP_IDS", "com.example.app"),
                                  ("LANYARD_ANDROID_APPS", "com.example=AB:CD")] {
            #expect(throws: ConfigurationError.self, "\(variable)") {
                try LanyardConfiguration.load(environment: ["LANYARD_DEV": "1", variable: value])
            }
        }
        let loaded = try LanyardConfiguration.load(environment: [
            "LANYARD_DEV": "1", "LANYARD_WEBAUTHN_RP_ID": "example.com",
            "LANYARD_WEBAUTHN_ORIGINS": "https://example.com, https://app.example.com:8443, http://localhost:3000",
            "LANYARD_APPLE_APP_IDS": "ABCDE12345.com.example.app",
        ])
        #expect(loaded.passkeys.origins.count == 3 && loaded.passkeys.appleAppIDs == ["ABCDE12345.com.example.app"])
    }
}
