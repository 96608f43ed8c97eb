import LanyardSupport

/// reference section 4: the app sends its raw nonce; the token carries either that raw value (Google SDKs)
/// or its SHA-256 as lower-case hex (Apple's iOS API takes the hashed value). Both are accepted.
public enum NonceRule {
    public static func check(tokenNonce: String?, providedNonce: String?, required: Bool) throws(ProviderTokenError) {
        guard let tokenNonce else {
            if required { throw ProviderTokenError(.nonceMissing) }
            // The app expected replay protection, but this token carries none.
            if providedNonce != nil { throw ProviderTokenError(.nonceMismatch) }
            return
        }
        guard let providedNonce, !providedNonce.isEmpty else { throw ProviderTokenError(.nonceMissing) }
        if tokenNonce == providedNonce || tokenNonce == Hashing.sha256Hex(providedNonce) { return }
        throw ProviderTokenError(.nonceMismatch)
    }
}
