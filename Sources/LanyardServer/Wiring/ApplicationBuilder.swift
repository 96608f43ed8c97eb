import Hummingbird
import LanyardCore
import Logging
import ServiceLifecycle

extension LanyardRuntime {
    /// The router: middleware first (outermost first), then every route family.
    public func router() -> Router<LanyardRequestContext> {
        let router = Router(context: LanyardRequestContext.self)
        router.add(middleware: RequestLogMiddleware())
        if !configuration.corsOrigins.isEmpty {
            // Outside the error middleware, so that error answers carry the headers the page needs to read them.
            router.add(middleware: CORSMiddleware(origins: Set(configuration.corsOrigins)))
        }
        router.add(middleware: MetricsMiddleware(metrics: metrics))
        router.add(middleware: ErrorMiddleware(metrics: metrics))
        let api = APIContext(dependencies: dependencies, trustedProxies: configuration.trustedProxies, metrics: metrics,
                             appleCodes: appleCodes, redirectFlows: redirectFlows)
        AuthRoutes(api: api).register(on: router)
        MigrationRoutes(api: api).register(on: router)
        ProviderRoutes(api: api).register(on: router)
        RedirectRoutes(api: api).register(on: router)
        // Always served: without an SMTP server outside dev mode, email answers UNSUPPORTED_PROVIDER.
        EmailRoutes(api: api).register(on: router)
        EmailLinkPageRoutes(api: api).register(on: router)
        // Always served: without LANYARD_WEBAUTHN_RP_ID outside dev mode, passkeys answer UNSUPPORTED_PROVIDER.
        PasskeyRoutes(api: api).register(on: router)
        UserRoutes(api: api).register(on: router)
        MergeRoutes(api: api).register(on: router)
        DataRoutes(api: api).register(on: router)
        GroupRoutes(api: api).register(on: router)
        GroupDataRoutes(api: api).register(on: router)
        JoinPageRoutes().register(on: router)
        ChangeRoutes(api: api, hub: changeHub, stalls: streamStalls, settings: streamSettings).register(on: router)
        ProviderNotificationRoutes(api: api).register(on: router)
        WellKnownRoutes(keys: keyRing, issuer: issuer,
                        providers: dependencies.signInMethods.offered.filter { $0.kind == .idToken }.map(\.provider.rawValue),
                        passkeys: configuration.passkeys).register(on: router)
        OperationsRoutes(database: database, metrics: metrics).register(on: router)
        SDKRoutes().register(on: router)
        if let adminKey = configuration.adminKey {
            AdminRoutes(api: api, key: adminKey).register(on: router)
            ConsoleRoutes().register(on: router)
        }
        if configuration.servesGoTrue {
            GoTrueRoutes(api: api, keys: keyRing, anonKey: configuration.gotrueAnonKey).register(on: router)
        }
        if let minter {
            EmulatorRoutes(minter: minter, oidcProviders: Self.emulatedOIDCProviders(configuration),
                           baseURL: Self.localBaseURL(configuration)).register(on: router)
            MailboxRoutes(api: api).register(on: router)
            if let legacyMinter { LegacyEmulatorRoutes(minter: legacyMinter).register(on: router) }
            if let authorizationEmulator {
                EmulatorAuthorizeRoutes(minter: minter, authorizations: authorizationEmulator,
                                        oidcProviders: Self.emulatedOIDCProviders(configuration)).register(on: router)
            }
            if let appleEmulator, let apple, let authorizationEmulator {
                AppleEmulatorRoutes(apple: appleEmulator, authorizations: authorizationEmulator, team: apple.clientSecret,
                                    clock: dependencies.clock, minter: minter, client: httpClient,
                                    serverURL: Self.localBaseURL(configuration)).register(on: router)
            }
        }
        return router
    }

    /// The streams' timing from the configuration.
    var streamSettings: StreamSettings {
        var settings = StreamSettings()
        settings.heartbeat = .milliseconds(Int64(configuration.streamHeartbeat * 1000))
        return settings
    }

    public func application(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> Application<RouterResponder<LanyardRequestContext>> {
        Application(
            router: router(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port),
                                 serverName: "Lanyard"),
            services: backgroundServices(),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// What runs beside the API in every instance: the database's own work, the signing-key refresher, stalled
    /// streams' watchdog, merges' retention and, when configured, webhook delivery, change notifications between
    /// instances, Apple's code redemptions and revocations. Graceful shutdown stops them in reverse order, after
    /// the HTTP server has answered its last request: the database last.
    func backgroundServices() -> [any Service] {
        var services: [any Service] = [DatabaseService(database: database), SigningKeyRefresher(
            keyRing: keyRing, interval: SigningKeyRefresher.interval(publishDelay: configuration.keyPublishDelay),
            logger: logger)]
        if let url = configuration.webhookURL, let secret = configuration.webhookSecret {
            services.append(WebhookDelivery(url: url, secret: secret, database: database, client: httpClient,
                                            clock: dependencies.clock, random: dependencies.random,
                                            pollInterval: .milliseconds(Int64(configuration.outboxPollInterval * 1000)),
                                            attemptTimeout: configuration.webhookTimeout, metrics: metrics, logger: logger))
        }
        if let changeNotifier {
            services.append(ChangeNotificationService(notifier: changeNotifier, logger: logger))
        }
        services.append(StreamStallService(stalls: streamStalls, logger: logger))
        services.append(MergeRetention(dependencies: dependencies, logger: logger))
        if let mailer { services.append(mailer) }
        if let appleCodes { services.append(appleCodes) }
        if let apple {
            services.append(AppleRevocations(lifecycle: apple, pollInterval: .milliseconds(Int64(configuration.outboxPollInterval * 1000)),
                                             logger: logger))
        }
        return services
    }
}
