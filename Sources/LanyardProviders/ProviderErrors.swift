/// Why an ID token was refused; the raw values are the reference's `details.reason` strings.
public struct ProviderTokenError: Error, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case malformed
        case signature
        case unknownKey = "unknown_key"
        /// The token names no `kid`, and not exactly one key of the provider's set fits its algorithm.
        case noKeyID = "no_kid"
        case algorithm
        case issuer
        case audience
        case expired
        case notYetValid = "not_yet_valid"
        case nonceMissing = "nonce_missing"
        case nonceMismatch = "nonce_mismatch"
        /// The header names or carries a key (`jku`, `x5u`, `jwk`, `x5c`).
        case keyReference = "key_reference"
        /// A Microsoft tenant `LANYARD_OIDC_MICROSOFT_TENANTS` does not allow; a Firebase token of a tenant.
        case tenant
        // The bridge's (reference section 24).
        /// A Supabase key that is not a user's session (`anon`, `service_role`).
        case role
        /// A Clerk session an operator impersonates (`act`).
        case impersonation
        /// A Clerk session with a step still pending (`sts: "pending"`).
        case pending
        /// A `sub` of the wrong form (not a UUID for Supabase, not `user_…` for Clerk).
        case subject
    }

    public let reason: Reason

    public init(_ reason: Reason) {
        self.reason = reason
    }

    public var description: String { "ID token refused: \(reason.rawValue)" }
}

/// The provider's keys could not be fetched and none are cached.
public struct ProviderUnavailableError: Error, CustomStringConvertible {
    public let provider: Provider?
    public let underlying: String

    public init(provider: Provider?, underlying: String) {
        self.provider = provider
        self.underlying = underlying
    }

    public var description: String { "keys of \(provider?.rawValue ?? "a provider") unavailable: \(underlying)" }
}
