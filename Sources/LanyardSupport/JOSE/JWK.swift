import Crypto
import _CryptoExtras
import Foundation

/// One JSON Web Key as published in a JWKS (RSA for providers, EC P-256 for Lanyard's own tokens).
public struct JWK: Codable, Sendable, Hashable {
    public var kty: String
    public var kid: String?
    public var use: String?
    public var alg: String?
    // RSA
    public var n: String?
    public var e: String?
    // EC
    public var crv: String?
    public var x: String?
    public var y: String?

    public init(kty: String, kid: String?, use: String?, alg: String?,
                n: String? = nil, e: String? = nil, crv: String? = nil, x: String? = nil, y: String? = nil) {
        self.kty = kty
        self.kid = kid
        self.use = use
        self.alg = alg
        self.n = n
        self.e = e
        self.crv = crv
        self.x = x
        self.y = y
    }

    public static func rsa(_ key: _RSA.Signing.PublicKey, kid: String) throws -> JWK {
        let primitives = try key.getKeyPrimitives()
        return JWK(kty: "RSA", kid: kid, use: "sig", alg: "RS256",
                   n: Base64URL.encode(primitives.modulus), e: Base64URL.encode(primitives.publicExponent))
    }

    public static func p256(_ key: P256.Signing.PublicKey, kid: String) -> JWK {
        let raw = Array(key.rawRepresentation)
        return JWK(kty: "EC", kid: kid, use: "sig", alg: "ES256", crv: "P-256",
                   x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))
    }

    /// The RSA public key, or `nil` when this is not a usable RSA key.
    public func rsaPublicKey() -> _RSA.Signing.PublicKey? {
        guard kty == "RSA", let n = n.flatMap(Base64URL.decode), let e = e.flatMap(Base64URL.decode) else { return nil }
        return try? _RSA.Signing.PublicKey(n: n, e: e)
    }

    public func p256PublicKey() -> P256.Signing.PublicKey? {
        guard kty == "EC", crv == "P-256", let x = x.flatMap(Base64URL.decode), let y = y.flatMap(Base64URL.decode),
              x.count == 32, y.count == 32 else { return nil }
        return try? P256.Signing.PublicKey(rawRepresentation: x + y)
    }
}

public struct JWKS: Codable, Sendable, Hashable {
    public var keys: [JWK]

    public init(keys: [JWK]) {
        self.keys = keys
    }

    /// Decodes a key set, skipping any key this server cannot read rather than refusing the whole set.
    public static func decodeLeniently(_ data: some DataProtocol) -> JWKS? {
        guard let loose = try? JSONDecoder().decode(Loose.self, from: Data(data)) else { return nil }
        return JWKS(keys: loose.keys.compactMap(\.key))
    }
}

private struct Loose: Decodable { var keys: [Lossy] }

private struct Lossy: Decodable {
    var key: JWK?
    init(from decoder: any Decoder) throws { key = try? JWK(from: decoder) }
}
