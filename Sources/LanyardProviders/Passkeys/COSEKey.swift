import Crypto
import _CryptoExtras

/// A credential public key in COSE form (RFC 9052, 9053): ES256 on P-256 or RS256, the two algorithms Lanyard
/// asks authenticators for.
public enum COSEKey: Sendable {
    case es256(P256.Signing.PublicKey)
    case rs256(_RSA.Signing.PublicKey)

    /// COSE algorithm identifiers.
    public static let es256Algorithm: Int64 = -7
    public static let rs256Algorithm: Int64 = -257
    public static let acceptedAlgorithms = [es256Algorithm, rs256Algorithm]

    public enum Failure: Error, Sendable, Equatable {
        /// An algorithm Lanyard did not ask for.
        case algorithm(Int64?)
        /// Not a key of its declared type and curve.
        case malformed(String)
    }

    public var algorithm: Int64 {
        switch self {
        case .es256: Self.es256Algorithm
        case .rs256: Self.rs256Algorithm
        }
    }

    /// The key a COSE_Key map holds, checked against its declared type, curve and algorithm.
    public init(_ item: CBOR) throws(Failure) {
        guard case .map = item else { throw .malformed("the COSE key is not a map") }
        let alg = item[int: 3]?.integer
        guard let alg, Self.acceptedAlgorithms.contains(alg) else { throw .algorithm(alg) }
        switch (item[int: 1]?.integer, alg) {
        case (2, Self.es256Algorithm):
            guard item[int: -1]?.integer == 1 else { throw .malformed("an ES256 key not on P-256") }
            guard case .bytes(let x)? = item[int: -2], case .bytes(let y)? = item[int: -3], x.count == 32, y.count == 32,
                  let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
            else { throw .malformed("an EC2 key without a point on P-256") }
            self = .es256(key)
        case (3, Self.rs256Algorithm):
            guard case .bytes(let n)? = item[int: -1], case .bytes(let e)? = item[int: -2], (256...512).contains(n.count),
                  (1...8).contains(e.count), let key = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { throw .malformed("an RSA key without a 2048 to 4096 bit modulus and an exponent") }
            self = .rs256(key)
        default:
            throw .malformed("key type \(item[int: 1]?.integer.map(String.init) ?? "none") for algorithm \(alg)")
        }
    }

    /// Whether `signature` (DER for ES256, PKCS #1 v1.5 for RS256) signs `data` under this key.
    public func verifies(_ signature: [UInt8], of data: [UInt8]) -> Bool {
        switch self {
        case .es256(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: SHA256.hash(data: data))
        case .rs256(let key):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: data),
                                        padding: .insecurePKCS1v1_5)
        }
    }
}
