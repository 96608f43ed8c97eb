import _CryptoExtras
import ArgumentParser
import Crypto
import Foundation
import LanyardCore
import LanyardWire
import LanyardStore
import LanyardSupport

/// The hot pieces alone, on one core, in whatever build this runs in (use `-c release`).
struct Micro: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Micro-benchmarks of the signature work and hot paths.")

    @Option(help: "Seconds per measurement") var seconds: Double = 2
    @Option(help: "Append results here as JSON lines") var json: String?

    struct Measurement: Codable {
        var name: String
        var operationsPerSecond: Double
        var microsecondsPerOperation: Double
    }

    func run() async throws {
        var results: [Measurement] = []
        func measure(_ name: String, _ body: () throws -> Void) rethrows {
            for _ in 0..<50 { try body() }
            var operations = 0
            let start = ContinuousClock.now
            let end = start + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < end {
                for _ in 0..<20 { try body() }
                operations += 20
            }
            let elapsed = (ContinuousClock.now - start).milliseconds / 1000
            let measurement = Measurement(name: name, operationsPerSecond: Double(operations) / elapsed,
                                          microsecondsPerOperation: elapsed * 1e6 / Double(operations))
            results.append(measurement)
            print(String(format: "%-34@ %10.0f ops/s  %8.2f µs/op", name as NSString, measurement.operationsPerSecond,
                         measurement.microsecondsPerOperation))
        }

        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let idToken = try RS256.sign(try CompactJWS.signingInput(
            header: ["alg": "RS256", "kid": "k"],
            claims: ["iss": "https://accounts.google.com", "aud": "client", "sub": "123", "exp": 9_999_999_999] as [String: JSONValue]),
            key: rsaKey)
        let jws = CompactJWS(idToken)!
        try measure("rs256_verify (ID token)") {
            guard RS256.isValid(signature: jws.signature, for: jws.signingInput, key: rsaKey.publicKey) else { throw BenchError("bad") }
        }
        try measure("id_token_parse (split + JSON)") {
            guard CompactJWS(idToken) != nil else { throw BenchError("bad") }
        }
        let ecKey = P256.Signing.PrivateKey()
        let claimsInput = try CompactJWS.signingInput(header: ["alg": "ES256", "kid": "k", "typ": "JWT"],
                                                      claims: ["sub": "3f1c…", "sid": "…", "exp": 1_900_000_000] as [String: JSONValue])
        try measure("es256_sign (access token)") { _ = try ES256.sign(claimsInput, key: ecKey) }
        let accessToken = try ES256.sign(claimsInput, key: ecKey)
        let accessJWS = CompactJWS(accessToken)!
        try measure("es256_verify (access token)") {
            guard ES256.isValid(signature: accessJWS.signature, for: accessJWS.signingInput, key: ecKey.publicKey) else {
                throw BenchError("bad")
            }
        }
        let session = UUID().uuidString.lowercased()
        let refreshToken = RefreshTokens.generate(session: session, SystemRandomSource())
        measure("refresh_token_storage_key") { _ = RefreshTokens.storageKey(refreshToken) }
        measure("refresh_token_generate") { _ = RefreshTokens.generate(session: session, SystemRandomSource()) }

        let now = Date()
        let user = User(
            user: UserRecord(id: UUID().uuidString.lowercased(), createdAt: now, isAnonymous: false, displayName: "Ada Lovelace"),
            identities: [IdentityRecord(id: "i", userID: "u", provider: "apple", providerUserID: "001", email: "ada@example.com",
                                        emailVerified: true, isPrivateEmail: false, linkedAt: now, lastSignInAt: now)])
        let response = SessionResponse(accessToken: accessToken, expiresIn: 900, refreshToken: refreshToken, user: user,
                                       isNewUser: false)
        // The hand-written writer the server uses for this answer, and what `JSONEncoder` would cost instead.
        measure("session_response_json_write") { _ = JSONWriter.write(response) }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamps.format(date))
        }
        try measure("session_response_json_encoder") { _ = try encoder.encode(response) }

        if let json {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            var data = Data()
            for result in results {
                data.append(try encoder.encode(result))
                data.append(0x0A)
            }
            try data.write(to: URL(fileURLWithPath: json))
        }
    }
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
