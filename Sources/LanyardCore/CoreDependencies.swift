import Crypto
import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport

/// What the account and session rules need, built once at start-up and passed down explicitly.
public struct CoreDependencies: Sendable {
    public let database: any Database
    /// A session with its account: the read behind every bearer check and `GET /v1/users/me`.
    let sessionAccounts: SessionAccountReader
    /// A presented refresh token with its session and account, by hash.
    let refreshTargets: RefreshTargetReader
    /// A sign-in's or link's identity with its account, by provider and subject.
    let identityOwners: IdentityOwnerReader
    /// Refresh-token rotations.
    let refreshRotations: RefreshRotations
    public let clock: any LanyardClock
    public let random: any RandomSource
    public let accessTokens: AccessTokens
    public let providerTokens: ProviderTokens
    public let rateLimiter: RateLimiter
    public let refreshTokenTTL: TimeInterval
    public let refreshReuseGrace: TimeInterval
    public let reauthWindow: TimeInterval
    public let userIDStrategy: LanyardConfiguration.UserIDStrategy
    /// Whether account events go to the webhook outbox (`LANYARD_WEBHOOK_URL` is set).
    public let webhooksEnabled: Bool
    /// Groups' limits (reference section 14).
    public let groupMaxMembers: Int
    public let groupsPerAccount: Int
    /// Where tests hold a request to kill the server (`LANYARD_TEST_PAUSE_AT`, dev mode only).
    public let pausePoints: PausePoints
    /// Derives a refresh token's successor, so a just-rotated token can be answered again within the grace.
    let refreshSuccessorKey: SecretBytes
    /// Wakes an account's live readers after a commit (the server's change hub); silent elsewhere.
    public var signals: any AccountSignals = SilentAccountSignals()
    /// Email codes and links (reference section 18): the settings, whether the identity is offered, the keyed
    /// hashes and sealing of flows and mails, and the nudge that wakes this instance's mailer after a commit.
    public let email: EmailSettings
    let emailSecrets: EmailSecrets
    public var mailQueued: @Sendable () -> Void = {}
    /// Passkeys (reference section 19): the relying party as configured; dev mode adds `localhost`.
    public let passkeys: PasskeySettings
    /// Redirect sign-in's settings: where flows may return to (reference section 23).
    public let redirect: RedirectSettings
    public let devMode: Bool
    /// The ways in this server offers and every rule that differs between them (reference section 17).
    public let signInMethods: SignInMethods
    /// The bridge's verifier of old systems' sessions, and whether access tokens carry `legacy_id` (reference
    /// section 24).
    public let legacySessions: LegacySessions
    public let tokenLegacyID: Bool

    public init(database: any Database, clock: any LanyardClock, random: any RandomSource, accessTokens: AccessTokens,
                providerTokens: ProviderTokens, rateLimiter: RateLimiter, masterKey: MasterKey,
                configuration: LanyardConfiguration, legacySessions: LegacySessions? = nil) {
        let legacySessions = legacySessions ?? LegacySessions(
            verifier: LegacySessionVerifier(verifier: providerTokens.verifier, settings: configuration.migration, clock: clock),
            clock: clock)
        self.legacySessions = legacySessions
        self.tokenLegacyID = configuration.migration.tokenLegacyID
        self.database = database
        self.sessionAccounts = SessionAccountReader(database: database)
        self.refreshTargets = RefreshTargetReader(database: database)
        let signInMethods = SignInMethods(idTokenProviders: providerTokens.all, offersEmail: configuration.offersEmail,
                                          offersPasskeys: configuration.offersPasskeys, bridges: legacySessions.offered)
        self.signInMethods = signInMethods
        self.identityOwners = IdentityOwnerReader(database: database, providers: signInMethods.offered
            .filter { $0.kind == .idToken }.map(\.provider.rawValue))
        self.refreshRotations = RefreshRotations(database: database)
        self.clock = clock
        self.random = random
        self.accessTokens = accessTokens
        self.providerTokens = providerTokens
        self.rateLimiter = rateLimiter
        self.refreshTokenTTL = configuration.refreshTokenTTL
        self.refreshReuseGrace = configuration.refreshReuseGrace
        self.groupMaxMembers = configuration.groupMaxMembers
        self.groupsPerAccount = configuration.groupsPerAccount
        self.pausePoints = configuration.pausePoints
        self.reauthWindow = configuration.reauthWindow
        self.userIDStrategy = configuration.userIDStrategy
        self.webhooksEnabled = configuration.webhookURL != nil
        self.refreshSuccessorKey = SecretBytes(masterKey.derivedKey(purpose: "lanyard refresh token successor v1"))
        self.email = configuration.email
        self.emailSecrets = EmailSecrets(masterKey: masterKey)
        self.passkeys = configuration.passkeys
        self.redirect = configuration.redirect
        self.devMode = configuration.devMode
    }
}

/// Who made the request, as far as the network tells.
public struct ClientInfo: Sendable {
    public var ip: String?
    public var userAgent: String?

    public init(ip: String?, userAgent: String?) {
        self.ip = ip
        self.userAgent = userAgent
    }
}

extension CoreDependencies {
    /// The audit log of one transaction; with webhooks configured it also writes their events to the outbox in
    /// that transaction.
    func audit(_ connection: any DatabaseConnection, at date: Date, clientIP: String?) -> AuditLog {
        AuditLog(connection, at: date, clientIP: clientIP, outbox: webhooksEnabled ? WebhookOutbox(connection, random: random) : nil)
    }
}

/// Everything a service needs, keys included: never described in full (a service printed in a log line would
/// otherwise print every key it can reach).
extension CoreDependencies: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "CoreDependencies" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
