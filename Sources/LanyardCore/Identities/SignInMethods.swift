import LanyardProviders
import LanyardSupport
import LanyardWire

/// One way into an account (reference section 17): what kind of proof it takes, how many an account may hold,
/// whether it may create an account, and what detaching it owes. Every rule that differs between ways in reads
/// it from here, so a new way in is one entry (and a case of `IdentityProof`), not a name compared in five files.
public struct SignInMethod: Sendable {
    /// How the person proves they hold the identity.
    public enum Kind: String, Sendable {
        /// An ID token from the provider's own SDK or any OpenID Connect library.
        case idToken = "id_token"
        /// A code or a link in one mail.
        case email
        /// A WebAuthn assertion.
        case passkey
        /// A signed-in session of the system the app moves from (reference section 24): the bridge's. It proves
        /// the person's account there (a legacy id), not an identity, so it is never held by an account, never
        /// listed among the ways in an app shows, and never linked.
        case legacySession = "legacy_session"
    }

    /// What the provider keeps of the person beyond the token (reference section 10).
    public enum Lifecycle: Sendable {
        case none
        /// Apple's: an authorization code redeemed for a refresh token, which detaching the identity (unlink, a
        /// merge's release, deletion) revokes.
        case apple
    }

    public let provider: Provider
    /// The name a person reads: "Apple", "Microsoft", what `LANYARD_OIDC_<NAME>_DISPLAY_NAME` says.
    public let displayName: String
    public let kind: Kind
    /// How many identities of this method one account may hold: one, or up to the passkey cap.
    public let perAccount: Int
    /// Whether signing in with an identity nobody holds creates an account (a passkey never does: it is only ever
    /// registered to an account).
    public let createsAccounts: Bool
    public let lifecycle: Lifecycle
    /// The ID-token verifier's settings, for `idToken` methods.
    public let idToken: ProviderSettings?

    /// The web client redirect sign-in runs with (reference section 23), where it is configured.
    public var redirect: RedirectClient? { idToken?.redirect }

    /// Whether an account may hold several (passkeys).
    public var manyPerAccount: Bool { perAccount > 1 }

    /// How `GET /v1/providers` names the kind: the provider's SDK (`apple`, `google`, `oidc`), `email` or `passkey`.
    public var offeredKind: OfferedProvider.Kind {
        switch kind {
        case .idToken: OfferedProvider.Kind(rawValue: idToken?.kind.rawValue ?? "oidc")
        case .email: .email
        case .passkey: .passkey
        case .legacySession: OfferedProvider.Kind(rawValue: kind.rawValue)
        }
    }

    static func idToken(_ settings: ProviderSettings) -> SignInMethod {
        SignInMethod(provider: settings.provider, displayName: settings.displayName, kind: .idToken, perAccount: 1,
                     createsAccounts: true, lifecycle: settings.kind == .apple ? .apple : .none, idToken: settings)
    }

    /// A method this server never knew, as a stored identity may name one: one per account, nothing owed.
    static func unknown(_ provider: Provider) -> SignInMethod {
        SignInMethod(provider: provider, displayName: provider.rawValue, kind: .idToken, perAccount: 1,
                     createsAccounts: true, lifecycle: .none, idToken: nil)
    }

    /// The bridge from `source`: it makes accounts only for the old system's guests and for the identities a
    /// Firebase token names (the rest must be imported first).
    static func bridge(_ source: LegacySource) -> SignInMethod {
        let name = switch source {
        case .firebase: "Firebase"
        case .supabase: "Supabase"
        case .clerk: "Clerk"
        }
        return SignInMethod(provider: Provider(rawValue: source.rawValue), displayName: name, kind: .legacySession,
                            perAccount: 0, createsAccounts: true, lifecycle: .none, idToken: nil)
    }

    static let email = SignInMethod(provider: .email, displayName: "Email", kind: .email, perAccount: 1,
                                    createsAccounts: true, lifecycle: .none, idToken: nil)
    static let passkey = SignInMethod(provider: .passkey, displayName: "Passkey", kind: .passkey,
                                      perAccount: Passkeys.maximumPerAccount, createsAccounts: false, lifecycle: .none,
                                      idToken: nil)
}

/// The sign-in methods of this server, built once from the configuration (reference section 17): the ID-token
/// providers with client IDs (Apple, Google, then `LANYARD_OIDC_PROVIDERS`), email when mail can be sent, passkeys
/// when a relying party is set. `GET /v1/providers`, GoTrue's settings, the discovery document, the sign-in
/// metrics' labels and every rule that differs between ways in read it.
public struct SignInMethods: Sendable {
    /// The methods offered, in the order the app shows them.
    public let offered: [SignInMethod]
    /// The bridges configured (reference section 24): kept apart from `offered`, since no app shows them as a way in.
    public let bridges: [SignInMethod]
    private let byName: [Provider: SignInMethod]

    init(idTokenProviders: [ProviderSettings], offersEmail: Bool, offersPasskeys: Bool, bridges: [LegacySource] = []) {
        self.bridges = bridges.map(SignInMethod.bridge)
        offered = idTokenProviders.filter { !$0.clientIDs.isEmpty }.map(SignInMethod.idToken)
            + (offersEmail ? [SignInMethod.email] : []) + (offersPasskeys ? [SignInMethod.passkey] : [])
        // Every method an account may hold is known, offered or not: an address or a passkey an account has stays
        // its own (it unlinks, it counts) after an operator stops offering it, and so does a provider unconfigured.
        let known = idTokenProviders.map(SignInMethod.idToken) + [SignInMethod.email, SignInMethod.passkey] + self.bridges
        byName = Dictionary(known.map { ($0.provider, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The method of `provider`, offered or not; nil for a name this server never knew.
    public func method(_ provider: Provider) -> SignInMethod? {
        byName[provider]
    }

    /// Whether this server offers `provider` now.
    public func offers(_ provider: Provider) -> Bool {
        offered.contains { $0.provider == provider }
    }

    /// An offered provider that signs in by redirect (its web client configured), or `UNSUPPORTED_PROVIDER`.
    public func redirectMethod(named name: String) throws(LanyardError) -> SignInMethod {
        guard let provider = Provider(validName: name), offers(provider), let method = byName[provider], method.redirect != nil
        else { throw .unsupportedProvider(name) }
        return method
    }

    /// An offered ID-token provider by the name a path or body gives, or `UNSUPPORTED_PROVIDER`.
    public func idTokenProvider(named name: String) throws(LanyardError) -> Provider {
        guard let provider = Provider(validName: name), let method = byName[provider], method.kind == .idToken,
              offers(provider) else { throw .unsupportedProvider(name) }
        return provider
    }

    /// A configured bridge by the name a path gives (`firebase`, `supabase`, `clerk`), or `UNSUPPORTED_PROVIDER`.
    public func bridge(named name: String) throws(LanyardError) -> LegacySource {
        guard let source = LegacySource(rawValue: name), bridges.contains(where: { $0.provider.rawValue == name }) else {
            throw .unsupportedProvider(name)
        }
        return source
    }

    /// A method an account may hold, by name, for removing it: an offered provider, or `email` and `passkey`
    /// (removable even when no longer offered); `UNSUPPORTED_PROVIDER` otherwise.
    public func heldMethod(named name: String) throws(LanyardError) -> SignInMethod {
        guard let provider = Provider(validName: name), let method = byName[provider], method.kind != .legacySession,
              method.kind != .idToken || offers(provider) else { throw .unsupportedProvider(name) }
        return method
    }

    /// The name to show a person.
    public func displayName(_ provider: Provider) -> String {
        byName[provider]?.displayName ?? provider.rawValue
    }

    /// Whether an account may hold several identities of `provider` (a stored identity's provider name).
    public func allowsSeveral(_ provider: String) -> Bool {
        byName[Provider(rawValue: provider)]?.manyPerAccount ?? false
    }

    /// Whether detaching an identity of `provider` owes Apple its token's revocation.
    public func owesAppleRevocation(_ provider: String) -> Bool {
        if case .apple = byName[Provider(rawValue: provider)]?.lifecycle { return true }
        return false
    }
}
