import Crypto
import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport

/// What the account and session rules need, built once at start-up and passed down explicitly.
public struct CoreDependencies: Sendable {
    public let database: any Database
    /// The read behind `GET /v1/users/me`, batched on PostgreSQL.
    let sessionAccounts: SessionAccountReader
    /// A presented refresh token with its session and account, by hash; batched on PostgreSQL.
    let refreshTargets: BatchedRead<RefreshTarget>
    /// A sign-in's identity with its account, by provider and subject; batched on PostgreSQL.
    let identityOwners: IdentityOwnerReader
    /// Refresh-token rotations, batched on PostgreSQL.
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
    /// Derives a refresh token's successor, so a just-rotated token can be answered again within the grace.
    let refreshSuccessorKey: [UInt8]

    public init(database: any Database, clock: any LanyardClock, random: any RandomSource, accessTokens: AccessTokens,
                providerTokens: ProviderTokens, rateLimiter: RateLimiter, masterKey: MasterKey,
                configuration: LanyardConfiguration) {
        self.database = database
        self.sessionAccounts = SessionAccountReader(database: database)
        self.refreshTargets = BatchedRead(database: database) { connection, keys in
            try await RefreshTokenStore(connection).findForRefresh(tokenKeys: keys)
        }
        self.identityOwners = IdentityOwnerReader(database: database, providers: Provider.allCases.map(\.rawValue))
        self.refreshRotations = RefreshRotations(database: database)
        self.clock = clock
        self.random = random
        self.accessTokens = accessTokens
        self.providerTokens = providerTokens
        self.rateLimiter = rateLimiter
        self.refreshTokenTTL = configuration.refreshTokenTTL
        self.refreshReuseGrace = configuration.refreshReuseGrace
        self.reauthWindow = configuration.reauthWindow
        self.userIDStrategy = configuration.userIDStrategy
        self.webhooksEnabled = configuration.webhookURL != nil
        self.refreshSuccessorKey = masterKey.derivedKey(purpose: "lanyard refresh token successor v1")
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
