import Crypto
import _CryptoExtras
import Foundation

/// RS256 (RSASSA-PKCS1-v1_5 with SHA-256), the only algorithm Apple and Google sign ID tokens with.
public enum RS256 {
    public static func isValid(signature: [UInt8], for signingInput: [UInt8], key: _RSA.Signing.PublicKey) -> Bool {
        let digest = SHA256.hash(data: signingInput)
        return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: digest,
                                    padding: .insecurePKCS1v1_5)
    }

    public static func sign(_ signingInput: String, key: _RSA.Signing.PrivateKey) throws -> String {
        let digest = SHA256.hash(data: Data(signingInput.utf8))
        let signature = try key.signature(for: digest, padding: .insecurePKCS1v1_5)
        return "\(signingInput).\(Base64URL.encode(signature.rawRepresentation))"
    }
}

/// ES256 (ECDSA P-256 with SHA-256), what Lanyard signs its access tokens with.
public enum ES256 {
    public static func sign(_ signingInput: String, key: P256.Signing.PrivateKey) throws -> String {
        let signature = try key.signature(for: Data(signingInput.utf8))
        return "\(signingInput).\(Base64URL.encode(signature.rawRepresentation))"
    }

    public static func isValid(signature: [UInt8], for signingInput: [UInt8], key: P256.Signing.PublicKey) -> Bool {
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(ecdsa, for: signingInput)
    }
}

/// HS256 (HMAC with SHA-256): only for Supabase's legacy JWT secret, and only there (reference section 24): a
/// provider's public key must never become an HMAC secret, so no other verifier accepts it.
public enum HS256 {
    public static func isValid(signature: [UInt8], for signingInput: [UInt8], secret: SymmetricKey) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: secret)
    }

    public static func sign(_ signingInput: String, secret: SymmetricKey) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: secret)
        return "\(signingInput).\(Base64URL.encode(Array(mac)))"
    }
}
