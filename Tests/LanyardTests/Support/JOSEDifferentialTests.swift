import Crypto
import _CryptoExtras
import Foundation
import JWTKit
import LanyardSupport
import Testing

/// Our hand-written JWS code (`CompactJWS`, `RS256`, `ES256`) against Vapor's jwt-kit on the same keys: every token
/// either signs is accepted by both, and of the tokens mutated from them, we accept none that jwt-kit refuses.
/// Where we refuse what jwt-kit accepts, it is a deliberate strictness, named in `strictness`.
@Suite struct JOSEDifferentialTests {
    struct Claims: JWTPayload, Equatable {
        var sub: String
        var iat: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let ec = P256.Signing.PrivateKey()
    static let claims = Claims(sub: "001234.abcd", iat: 1_764_000_000)

    /// Our signature check, as `IDTokenVerifier` (RS256) and `AccessTokens` (ES256) make it before any claim.
    static func oursAccepts(_ token: String, _ alg: String) -> Bool {
        guard let jws = CompactJWS(token), jws.algorithm == alg, jws.keyID == "k" else { return false }
        return switch alg {
        case "RS256": RS256.isValid(signature: jws.signature, for: jws.signingInput, key: rsa.publicKey)
        default: ES256.isValid(signature: jws.signature, for: jws.signingInput, key: ec.publicKey)
        }
    }

    static func theirKeys(_ alg: String, privateKeys: Bool = false) async throws -> JWTKeyCollection {
        let keys = JWTKeyCollection()
        if alg == "RS256" {
            if privateKeys {
                await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: rsa.pemRepresentation), digestAlgorithm: .sha256, kid: "k")
            } else {
                await keys.add(rsa: try Insecure.RSA.PublicKey(pem: rsa.publicKey.pemRepresentation), digestAlgorithm: .sha256, kid: "k")
            }
        } else if privateKeys {
            await keys.add(ecdsa: try ES256PrivateKey(pem: ec.pemRepresentation), kid: "k")
        } else {
            await keys.add(ecdsa: try ES256PublicKey(pem: ec.publicKey.pemRepresentation), kid: "k")
        }
        return keys
    }

    static func theirsAccepts(_ token: String, _ alg: String) async throws -> Bool {
        let keys = try await theirKeys(alg)
        return (try? await keys.verify(token, as: Claims.self)) != nil
    }

    static func oursSigns(_ alg: String, header: [String: String]? = nil) throws -> String {
        let input = try CompactJWS.signingInput(header: header ?? ["alg": alg, "kid": "k", "typ": "JWT"], claims: claims)
        return alg == "RS256" ? try RS256.sign(input, key: rsa) : try ES256.sign(input, key: ec)
    }

    /// What we refuse on purpose though jwt-kit (5.8) accepts it, each found by this test:
    /// - two `alg` members: JSON is read strictly (RFC 8259), so two readers cannot see different algorithms;
    /// - `=` padding: base64url without padding, as RFC 7515 section 2 defines it;
    /// - a `kid` we do not know: jwt-kit falls back to a key it holds, we look keys up by `kid` only;
    /// - a header naming another algorithm than the key's: the header's `alg` must be the one expected
    ///   (RFC 8725 section 3.1), where jwt-kit goes by the key alone;
    /// - a `crit` header: we understand no JWS extension, so one marked critical makes the token invalid (RFC 7515
    ///   section 4.1.11).
    static let strictness: Set<String> = ["duplicate alg in the header", "padding on the signature", "another kid",
                                          "the other algorithm's name", "a critical extension"]

    /// Provider tokens (RS256) and our own access tokens (ES256) alike: well signed, but with a critical header
    /// extension, refused; the same header without `crit` is accepted, so the refusal is about `crit` alone.
    @Test(arguments: ["RS256", "ES256"])
    func aCriticalExtensionIsRefused(alg: String) throws {
        #expect(!Self.oursAccepts(try Self.oursSigns(alg, header: ["alg": alg, "kid": "k", "crit": "exp"]), alg))
        let listed = #"{"alg":"\#(alg)","kid":"k","crit":["exp"],"exp":1}"#
        let input = Base64URL.encode(Array(listed.utf8)) + "." + Base64URL.encode(Array(#"{"sub":"a","iat":1}"#.utf8))
        #expect(!Self.oursAccepts(alg == "RS256" ? try RS256.sign(input, key: Self.rsa) : try ES256.sign(input, key: Self.ec), alg))
        #expect(Self.oursAccepts(try Self.oursSigns(alg, header: ["alg": alg, "kid": "k", "exp": "1"]), alg))
    }

    @Test(arguments: ["RS256", "ES256"])
    func tokensEitherSignsAreAcceptedByBoth(alg: String) async throws {
        let ours = try Self.oursSigns(alg)
        let theirs = try await Self.theirKeys(alg, privateKeys: true).sign(Self.claims, kid: "k")
        for token in [ours, theirs] {
            #expect(Self.oursAccepts(token, alg), "\(token)")
            #expect(try await Self.theirsAccepts(token, alg), "\(token)")
        }
        #expect(try await Self.theirKeys(alg).verify(ours, as: Claims.self) == Self.claims)
    }

    @Test(arguments: ["RS256", "ES256"])
    func mutatedTokensAreNeverAcceptedByUsAlone(alg: String) async throws {
        let valid = try Self.oursSigns(alg)
        var disagreements: [String] = []
        for (name, token) in try Self.mutations(of: valid, alg: alg) {
            let ours = Self.oursAccepts(token, alg)
            let theirs = try await Self.theirsAccepts(token, alg)
            #expect(!ours || theirs, "we accept \(name), jwt-kit refuses it")
            if ours != theirs { disagreements.append(name) }
        }
        #expect(Set(disagreements).isSubset(of: Self.strictness), "\(disagreements)")
    }

    static func mutations(of token: String, alg: String) throws -> [(String, String)] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func flip(_ part: Int, at index: Int) -> String {
            var bytes = Base64URL.decode(parts[part])!
            bytes[index % bytes.count] ^= 0x01
            var copy = parts
            copy[part] = Base64URL.encode(bytes)
            return copy.joined(separator: ".")
        }
        func header(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }
        let otherClaims = Base64URL.encode(Array(#"{"sub":"someone-else","iat":1764000000}"#.utf8))
        let hmacKey = SymmetricKey(data: Data((alg == "RS256" ? rsa.publicKey.pemRepresentation : ec.publicKey.pemRepresentation).utf8))
        let confusedInput = header(#"{"alg":"HS256","kid":"k","typ":"JWT"}"#) + "." + parts[1]
        let confused = confusedInput + "." + Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(confusedInput.utf8), using: hmacKey))
        var cases: [(String, String)] = [
            ("a bit of the header", flip(0, at: 3)), ("a bit of the payload", flip(1, at: 5)),
            ("a bit of the signature", flip(2, at: 7)), ("the signature's last byte", flip(2, at: -1 + 512)),
            ("another payload under the signature", [parts[0], otherClaims, parts[2]].joined(separator: ".")),
            ("alg none, no signature", header(#"{"alg":"none","kid":"k"}"#) + "." + parts[1] + "."),
            ("HS256 keyed with the public key", confused),
            ("another kid", try oursSigns(alg, header: ["alg": alg, "kid": "other"])),
            ("the other algorithm's name", try oursSigns(alg, header: ["alg": alg == "RS256" ? "ES256" : "RS256", "kid": "k"])),
            ("a critical extension", try oursSigns(alg, header: ["alg": alg, "kid": "k", "crit": "b64"])),
            ("an empty signature", parts[0] + "." + parts[1] + "."),
            ("a truncated signature", parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(4))),
            ("two segments", parts[0] + "." + parts[1]),
            ("four segments", token + "." + parts[2]),
            ("padding on the signature", token + "=="),
            ("a space inside", parts[0] + ". " + parts[1] + "." + parts[2]),
            ("standard base64 characters", token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")),
            ("the payload not JSON", parts[0] + "." + Base64URL.encode(Array("hello".utf8)) + "." + parts[2]),
        ]
        // Two `alg` members: a reader that keeps the last sees `none`, one that keeps the first sees ours.
        let duplicateInput = header("{\"alg\":\"\(alg)\",\"kid\":\"k\",\"alg\":\"\(alg)\"}") + "." + parts[1]
        let duplicate = alg == "RS256" ? try RS256.sign(duplicateInput, key: rsa) : try ES256.sign(duplicateInput, key: ec)
        cases.append(("duplicate alg in the header", duplicate))
        if alg == "ES256" {
            // The same signature DER-encoded rather than as r‖s (JWS wants the latter).
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(parts[2])!)
            cases.append(("a DER signature", parts[0] + "." + parts[1] + "." + Base64URL.encode(signature.derRepresentation)))
        }
        return cases
    }
}
