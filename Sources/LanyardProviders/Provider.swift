/// A sign-in provider Lanyard accepts ID tokens from.
public enum Provider: String, Sendable, Codable, CaseIterable, Hashable {
    case apple
    case google

    /// The `iss` values the real provider uses; the emulator signs with the same ones.
    public var issuers: Set<String> {
        switch self {
        case .apple: ["https://appleid.apple.com", "https://account.apple.com"]
        case .google: ["https://accounts.google.com", "accounts.google.com"]
        }
    }

    /// The issuer the emulator (and, today, the real provider) puts in new tokens.
    public var canonicalIssuer: String {
        switch self {
        case .apple: "https://appleid.apple.com"
        case .google: "https://accounts.google.com"
        }
    }

    public var displayName: String {
        switch self {
        case .apple: "Apple"
        case .google: "Google"
        }
    }
}

/// What one provider is configured with: accepted audiences, where its keys are, whether a nonce is required.
public struct ProviderSettings: Sendable {
    public var provider: Provider
    public var clientIDs: [String]
    public var jwksURL: String
    public var requiresNonce: Bool

    public init(provider: Provider, clientIDs: [String], jwksURL: String, requiresNonce: Bool = false) {
        self.provider = provider
        self.clientIDs = clientIDs
        self.jwksURL = jwksURL
        self.requiresNonce = requiresNonce
    }
}
