import _CryptoExtras
import AsyncHTTPClient
import Foundation
import LanyardSupport

/// Mints Google-shaped ID tokens exactly like the allauth peer's fake identity provider does (same key, kid,
/// issuer, audience and claims), so both servers verify the very same token shapes. Minting happens before
/// the timed phase.
struct TokenFactory: Sendable {
    let key: _RSA.Signing.PrivateKey
    let kid: String
    let audience: String
    let issuer: String
    /// The name the sign-in path takes: `apple`, `google`, or an OpenID Connect provider's (`acme`).
    let provider: String

    /// Reads the key from the fake IdP's `keys/` folder and its `kid` from the JWKS it serves.
    static func fakeIdP(keysDirectory: String, provider: String, jwksURL: String, audience: String,
                        client: HTTPClient) async throws -> TokenFactory {
        let pem = try String(contentsOfFile: "\(keysDirectory)/\(provider).pem", encoding: .utf8)
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        let response = try await client.execute(HTTPClientRequest(url: jwksURL), timeout: .seconds(5))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard let jwks = JWKS.decodeLeniently(Array(body.readableBytesView)), let kid = jwks.keys.first?.kid else {
            throw BenchError("no key set at \(jwksURL)")
        }
        let issuer = switch provider {
        case "apple": "https://appleid.apple.com"
        case "google": "https://accounts.google.com"
        default: String(jwksURL.dropLast("/keys".count))  // key_server.py's issuer of an OpenID Connect provider
        }
        return TokenFactory(key: key, kid: kid, audience: audience, issuer: issuer, provider: provider)
    }

    /// `acme`, an OpenID Connect provider served by key_server.py (discovery and keys under `/acme`), as
    /// `LANYARD_OIDC_ACME_*` in Benchmarks/compare.sh configure it.
    static func oidc(keysDirectory: String, idp: String, client: HTTPClient) async throws -> TokenFactory {
        try await fakeIdP(keysDirectory: keysDirectory, provider: "acme", jwksURL: idp + "/acme/keys",
                          audience: "acme-bench", client: client)
    }

    /// `nonce`: for a merge's proof (the server's challenge).
    /// The fake IdP's Google and Apple factories, with the audiences the benchmark's servers accept.
    static func fakeProviders(keysDirectory: String, idp: String,
                              client: HTTPClient) async throws -> (google: TokenFactory, apple: TokenFactory) {
        (try await fakeIdP(keysDirectory: keysDirectory, provider: "google", jwksURL: idp + "/google/oauth2/v3/certs",
                           audience: "example-client-id.apps.googleusercontent.com", client: client),
         try await fakeIdP(keysDirectory: keysDirectory, provider: "apple", jwksURL: idp + "/apple/auth/keys",
                           audience: "com.example.app", client: client))
    }

    func mint(sub: String, email: String, nonce: String? = nil) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(sub),
            "iat": .number(Double(now)), "exp": .number(Double(now + 3600)), "email": .string(email),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        if provider != "apple" {
            claims["azp"] = .string(audience)
            claims["email_verified"] = .bool(true)
            claims["name"] = "Bench User"
            claims["given_name"] = "Bench"
            claims["family_name"] = "User"
            claims["jti"] = .string(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))
        } else {
            claims["email_verified"] = "true"
        }
        return try RS256.sign(try CompactJWS.signingInput(header: ["alg": "RS256", "kid": kid, "typ": "JWT"], claims: claims),
                              key: key)
    }

    /// Mints `count` tokens on all cores.
    func mintMany(count: Int, sub: @escaping @Sendable (Int) -> String) async throws -> [String] {
        let chunks = max(1, ProcessInfo.processInfo.activeProcessorCount)
        return try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for chunk in 0..<chunks {
                group.addTask {
                    var tokens: [String] = []
                    for index in stride(from: chunk, to: count, by: chunks) {
                        tokens.append(try mint(sub: sub(index), email: "\(sub(index))@example.com"))
                    }
                    return (chunk, tokens)
                }
            }
            var byChunk: [Int: [String]] = [:]
            for try await (chunk, tokens) in group { byChunk[chunk] = tokens }
            var ordered: [String] = []
            for index in 0..<count { ordered.append(byChunk[index % chunks]![index / chunks]) }
            return ordered
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
