import AsyncHTTPClient
import Foundation
import Hummingbird
import LanyardCore
import LanyardEmulator
import LanyardMail
import LanyardProviders
import LanyardStore
import LanyardSupport
import Logging

/// Everything a running Lanyard holds, built once from the configuration: the database (migrated),
/// signing keys, provider verification, the core services and, in dev mode, the emulator.
public struct LanyardRuntime: Sendable {
    public let configuration: LanyardConfiguration
    public let issuer: String
    public let database: any Database
    public let dependencies: CoreDependencies
    public let keyRing: SigningKeyRing
    public let minter: TokenMinter?
    /// The emulator's Firebase, Supabase and Clerk sessions, in dev mode (reference section 24).
    public let legacyMinter: LegacyTokenMinter?
    public let metrics: ServerMetrics
    /// Apple's account lifecycle, when a key is configured (or dev mode made one).
    public let apple: AppleLifecycle?
    /// Apple's side of the lifecycle, in dev mode.
    public let appleEmulator: AppleAccountEmulator?
    /// Dev mode: the providers' sign-in pages and token endpoints for redirect sign-in.
    public let authorizationEmulator: AuthorizationEmulator?
    /// Redirect sign-in (reference section 23).
    public let redirectFlows: RedirectFlows
    /// The queue of Apple authorization codes to redeem, with `apple`.
    let appleCodes: AppleCodeRedemptions?
    let httpClient: HTTPClient
    public let logger: Logger
    /// This instance's live readers of change feeds, and, on PostgreSQL, how the other instances hear of changes.
    let changeHub: ChangeHub
    let streamStalls: StreamStalls
    let changeNotifier: ChangeNotifier?
    /// Sends the mail outbox, when email is offered.
    let mailer: EmailDelivery?

    /// A start that fails after the database is open closes it (and the HTTP client) before it throws: a
    /// PostgreSQL connection freed open is dropped without a word to the server, and a debug build stops on it.
    public static func start(configuration: LanyardConfiguration, logger: Logger,
                             clock: any LanyardClock = SystemClock(), random: any RandomSource = SystemRandomSource()
    ) async throws -> LanyardRuntime {
        let masterKey = try MasterKeyLoader.load(configuration, random: random)
        let database: any Database
        do {
            database = try await DatabaseFactory.open(configuration.database, poolSize: configuration.databasePoolSize,
                                                 timeout: .seconds(configuration.databaseTimeout),
                                                 background: .runByOwner, logger: logger)
        } catch {
            throw cannotOpen(configuration, error)
        }
        do {
            try await Migrator(database: database, logger: logger).migrate(now: clock.now())
        } catch {
            await database.close()
            throw cannotOpen(configuration, error)
        }
        // A client of its own: provider key fetches never queue behind other traffic in a shared pool. It follows
        // no redirect: key fetches check each one themselves (same scheme and host only), and webhooks and Apple's
        // endpoints go exactly where they were configured.
        let httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                                    configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
        do {
            return try await assemble(configuration: configuration, logger: logger, clock: clock, random: random,
                                      masterKey: masterKey, database: database, httpClient: httpClient)
        } catch {
            try? await httpClient.shutdown()
            await database.close()
            throw error
        }
    }

    static func cannotOpen(_ configuration: LanyardConfiguration, _ error: any Error) -> ConfigurationError {
        ConfigurationError(variable: "LANYARD_DATABASE_URL",
                           problem: "cannot open \(configuration.database): \(String(describing: error).prefix(300))")
    }

    /// The rest of `start`, on the database (migrated) and the HTTP client it opened.
    private static func assemble(configuration: LanyardConfiguration, logger: Logger, clock: any LanyardClock,
                                 random: any RandomSource, masterKey: MasterKey, database: any Database,
                                 httpClient: HTTPClient) async throws -> LanyardRuntime {
        let issuer = configuration.resolvedIssuer()
        let keyRing = try await SigningKeyRing.load(database: database, masterKey: masterKey, clock: clock, random: random,
                                                    accessTokenTTL: configuration.accessTokenTTL)
        var minter: TokenMinter?
        var legacyMinter: LegacyTokenMinter?
        var appleEmulator: AppleAccountEmulator?
        // What the bridge verifies with: as configured, or in dev mode the emulator's keys (reference section 24).
        var effective = configuration
        effective.migration = migrationSettings(configuration)
        var authorizationEmulator: AuthorizationEmulator?
        if configuration.devMode {
            let keys = try EmulatorKeys.loadOrCreate(directory: configuration.dataDirectory, random: random)
            minter = TokenMinter(keys: keys, clock: clock)
            legacyMinter = LegacyTokenMinter(keys: keys, clock: clock, settings: effective.migration,
                                             baseURL: localBaseURL(configuration))
            appleEmulator = AppleAccountEmulator(keys: keys, random: random, clock: clock)
            authorizationEmulator = AuthorizationEmulator(keys: keys, random: random, clock: clock)
        }
        let jwksCache = JWKSCache(fetcher: HTTPJWKSFetcher(client: httpClient,
                                                           timeout: .milliseconds(Int64(configuration.providerKeyFetchTimeout * 1000))),
                                  clock: clock, logger: logger)
        let providerTokens = ProviderTokens(verifier: IDTokenVerifier(keys: jwksCache, clock: clock),
                                            settings: providerSettings(configuration), clock: clock, logger: logger)
        var dependencies = CoreDependencies(
            database: database, clock: clock, random: random,
            accessTokens: AccessTokens(keys: keyRing, issuer: issuer, ttl: configuration.accessTokenTTL, clock: clock,
                                       random: random),
            providerTokens: providerTokens,
            rateLimiter: RateLimiter(database: database, clock: clock, settings: configuration.rateLimits),
            masterKey: masterKey, configuration: effective)
        let changeHub = ChangeHub(maximumStreams: configuration.streamMax, maximumPerAccount: configuration.streamMaxPerAccount)
        let flowWaits = EmailFlowWaits()
        let changeNotifier = (database as? any DatabaseNotifications).map {
            ChangeNotifier(database: $0, hub: changeHub, flows: flowWaits)
        }
        dependencies.signals = HubSignals(hub: changeHub, flows: flowWaits, notifier: changeNotifier)
        let mailWakeUp = MailWakeUp()
        dependencies.mailQueued = { mailWakeUp.nudge() }
        let apple = try appleLifecycle(configuration, dependencies: dependencies, masterKey: masterKey,
                                       httpClient: httpClient, random: random)
        let metrics = ServerMetrics()
        let mailer = try configuration.offersEmail ? EmailDelivery(
            outbox: EmailOutbox(dependencies),
            smtp: configuration.email.smtp.map { try SMTPClient(endpoint: $0, caFile: configuration.email.smtpCAFile) },
            settings: configuration.email, wakeUp: mailWakeUp,
            // Its own instance's mail wakes it at once; the poll is for retries and other instances' mail.
            pollInterval: .milliseconds(Int64(max(1, configuration.outboxPollInterval) * 1000)), metrics: metrics,
            logger: logger) : nil
        let redirectFlows = RedirectFlows(dependencies, codes: AuthorizationCodes(client: httpClient),
                                          appleSecret: apple?.clientSecret, masterKey: masterKey, issuer: issuer)
        return LanyardRuntime(configuration: configuration, issuer: issuer, database: database, dependencies: dependencies,
                              keyRing: keyRing, minter: minter, legacyMinter: legacyMinter, metrics: metrics, apple: apple,
                              appleEmulator: appleEmulator, authorizationEmulator: authorizationEmulator,
                              redirectFlows: redirectFlows,
                              appleCodes: apple.map { AppleCodeRedemptions(lifecycle: $0, metrics: metrics, logger: logger) },
                              httpClient: httpClient, logger: logger, changeHub: changeHub,
                              streamStalls: StreamStalls(timeout: .milliseconds(Int64(configuration.streamStallTimeout * 1000))),
                              changeNotifier: changeNotifier, mailer: mailer)
    }

    /// The configured Apple key, or in dev mode one made for the emulator (kept in the data directory), and where
    /// Apple's token endpoints are: Apple's, or the emulator's in dev mode.
    static func appleLifecycle(_ configuration: LanyardConfiguration, dependencies: CoreDependencies, masterKey: MasterKey,
                               httpClient: HTTPClient, random: any RandomSource) throws -> AppleLifecycle? {
        var secret: AppleClientSecret?
        if let team = configuration.appleTeamID, let keyID = configuration.appleKeyID, let pem = configuration.applePrivateKey {
            secret = try AppleClientSecret(teamID: team, keyID: keyID, pem: pem)
        } else if configuration.devMode {
            secret = try AppleClientSecret(teamID: "DEVTEAM001", keyID: "DEVKEY0001",
                                           pem: try EmulatorKeys.loadOrCreateAppleTeamKey(directory: configuration.dataDirectory))
        }
        guard let secret else { return nil }
        let base = configuration.appleServicesURL
            ?? (configuration.devMode ? localBaseURL(configuration) + "/_emulator/apple" : "https://appleid.apple.com")
        return AppleLifecycle(dependencies, services: AppleServices(client: httpClient, baseURL: base), clientSecret: secret,
                              masterKey: masterKey)
    }

    /// Apple, Google and the OpenID Connect providers as configured. In dev mode each also accepts the emulator's
    /// client ID and takes its keys from the emulator, over HTTP, through the production verification path (an
    /// OpenID Connect provider through its discovery document); an issuer on this machine (a test's, a local
    /// Keycloak) is used as it is.
    static func providerSettings(_ configuration: LanyardConfiguration) -> [ProviderSettings] {
        var apple = ProviderSettings.apple(clientIDs: configuration.appleClientIDs, jwksURL: configuration.appleJWKSURL,
                                           requiresNonce: configuration.appleRequiresNonce)
        var google = ProviderSettings.google(clientIDs: configuration.googleClientIDs, jwksURL: configuration.googleJWKSURL,
                                             requiresNonce: configuration.googleRequiresNonce)
        var oidc = configuration.oidcProviders.compactMap(ProviderSettings.init)
        let redirect = configuration.redirect
        // Redirect sign-in's web clients (reference section 23); Apple's needs the team key of its lifecycle.
        let appleKey = configuration.appleTeamID != nil || configuration.devMode
        if let servicesID = redirect.appleServicesID, appleKey {
            apple.redirect = .apple(servicesID: servicesID, servicesURL: configuration.appleServicesURL ?? "https://appleid.apple.com")
        }
        if let clientID = redirect.googleWebClientID, let secret = redirect.googleWebClientSecret {
            google.redirect = .google(clientID: clientID, clientSecret: secret)
        }
        for index in oidc.indices {
            let configured = configuration.oidcProviders.first { $0.name == oidc[index].provider.rawValue }
            if let secret = configured?.clientSecret, let clientID = oidc[index].clientIDs.first, let discovery = configured?.discoveryURL {
                oidc[index].redirect = RedirectClient(clientID: clientID, secret: .fixed(secret), endpoints: .discovery(discovery))
            }
        }
        if configuration.devMode {
            let base = localBaseURL(configuration)
            let devSecret = AuthorizationEmulator.devClientSecret
            apple.jwksURL = base + EmulatedProvider.apple.keysPath
            apple.clientIDs.append(EmulatedProvider.apple.defaultClientID)
            if apple.redirect == nil {
                apple.redirect = .apple(servicesID: EmulatedProvider.apple.defaultClientID, servicesURL: base + "/_emulator/apple")
            }
            google.jwksURL = base + EmulatedProvider.google.keysPath
            google.clientIDs.append(EmulatedProvider.google.defaultClientID)
            if google.redirect == nil {
                google.redirect = .google(clientID: EmulatedProvider.google.defaultClientID, clientSecret: devSecret,
                                          authorization: base + "/_emulator/google/authorize", token: base + "/_emulator/google/token")
            }
            let emulated = Dictionary(uniqueKeysWithValues: emulatedOIDCProviders(configuration).map { ($0.name, $0) })
            for index in oidc.indices {
                guard let provider = emulated[oidc[index].provider.rawValue] else { continue }
                oidc[index].jwksURL = base + provider.discoveryPath
                oidc[index].clientIDs.append(provider.defaultClientID)
                oidc[index].redirect = RedirectClient(clientID: provider.defaultClientID, secret: .fixed(devSecret),
                                                      endpoints: .discovery(base + provider.discoveryPath))
            }
        }
        // A web client's id is an audience its ID tokens carry: accepted like the app's own client ids.
        if let id = apple.redirect?.clientID, !apple.clientIDs.contains(id) { apple.clientIDs.append(id) }
        if let id = google.redirect?.clientID, !google.clientIDs.contains(id) { google.clientIDs.append(id) }
        return [apple, google] + oidc
    }

    /// The bridge's settings: as configured; in dev mode each source takes its keys from the emulator (a Firebase
    /// project and Supabase's local secret stand in where none is set), through the production verification path.
    static func migrationSettings(_ configuration: LanyardConfiguration) -> MigrationSettings {
        var settings = configuration.migration
        guard configuration.devMode else { return settings }
        let base = localBaseURL(configuration)
        settings.firebaseProjectID = settings.firebaseProjectID ?? LegacyTokenMinter.devFirebaseProject
        settings.firebaseKeysURL = base + LegacyTokenMinter.keysPath(.firebase)
        settings.supabaseJWTSecret = settings.supabaseJWTSecret ?? MigrationSettings.supabaseDevSecret
        settings.supabaseJWKSURL = base + LegacyTokenMinter.keysPath(.supabase)
        settings.clerkJWKSURL = base + LegacyTokenMinter.keysPath(.clerk)
        return settings
    }

    /// The OpenID Connect providers the emulator imitates in dev mode: every configured one whose issuer is not on
    /// this machine.
    public static func emulatedOIDCProviders(_ configuration: LanyardConfiguration) -> [EmulatedOIDCProvider] {
        guard configuration.devMode else { return [] }
        return configuration.oidcProviders.filter { !$0.isLocal }.map { EmulatedOIDCProvider(name: $0.name, issuer: $0.issuer) }
    }

    /// How this server reaches itself.
    public static func localBaseURL(_ configuration: LanyardConfiguration) -> String {
        let host = switch configuration.host {
        case "0.0.0.0", "": "127.0.0.1"
        case "::", "[::]": "[::1]"
        case let host where host.contains(":"): "[\(host)]"
        case let host: host
        }
        return "http://\(host):\(configuration.port)"
    }

    public func shutdown() async {
        try? await httpClient.shutdown()
        await database.close()
    }
}
