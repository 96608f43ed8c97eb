import Crypto
import Foundation

/// Every setting of a Lanyard server, read once at start-up from the environment (reference section 2).
public struct LanyardConfiguration: Sendable {
    public enum UserIDStrategy: String, Sendable { case random, derived }

    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var database: DatabaseLocation = .sqliteFile(path: ".lanyard/lanyard.sqlite")
    /// Connections to PostgreSQL per instance, opened at start and kept. Lanyard addition:
    /// `LANYARD_DATABASE_POOL_SIZE`.
    public var databasePoolSize = 10
    /// How long a request waits for the database before it is answered `503 SERVICE_UNAVAILABLE` (reference section 8).
    public var databaseTimeout: TimeInterval = 2
    /// `nil` means `http://HOST:PORT`, resolved once the port is known.
    public var issuer: String?
    public var appleClientIDs: [String] = []
    public var googleClientIDs: [String] = []
    public var appleJWKSURL: String = "https://appleid.apple.com/auth/keys"
    /// How long one fetch of a provider's keys may take, body included (reference section 8: a sign-in without
    /// usable keys answers within 5 s). Not an environment variable: the test suite raises it, where a starved
    /// machine can take longer to answer its own emulator's keys.
    public var providerKeyFetchTimeout: TimeInterval = 2
    public var googleJWKSURL: String = "https://www.googleapis.com/oauth2/v3/certs"
    public var appleRequiresNonce = false
    public var googleRequiresNonce = false
    /// `LANYARD_OIDC_PROVIDERS` and each name's settings, in the order named (reference section 20).
    public var oidcProviders: [OIDCProviderConfiguration] = []
    /// Email codes and links (reference section 20).
    public var email = EmailSettings()
    public var passkeys = PasskeySettings()
    /// Switching day: the bridge's keys, the legacy id claim (reference section 24).
    public var migration = MigrationSettings()
    /// Redirect sign-in (reference section 23): where a flow may return to, and each provider's web client.
    public var redirect = RedirectSettings()
    public var accessTokenTTL: TimeInterval = 900
    public var refreshTokenTTL: TimeInterval = 2_592_000
    public var refreshReuseGrace: TimeInterval = 10
    public var reauthWindow: TimeInterval = 600
    /// After `lanyard keys rotate`, how long the new key is published before it signs (longer than the JWKS's
    /// `max-age` of 300 s, so caches downstream know it first).
    public var keyPublishDelay: TimeInterval = 360
    public var rateLimits = RateLimitSettings()
    public var adminKey: String?
    /// The shortest `LANYARD_ADMIN_KEY` accepted (reference section 16: a guessable key is refused at start-up).
    public static let minimumAdminKeyLength = 32
    /// `LANYARD_CORS_ORIGINS`: web origins (`scheme://host[:port]`, exactly) whose pages may call the API.
    public var corsOrigins: [String] = []
    public var devMode = false
    /// Change streams (reference section 13): per account (the oldest is replaced past it), per instance (503 past
    /// it), and the idle heartbeat.
    public var streamMaxPerAccount = 10
    public var streamMax = 10_000
    public var streamHeartbeat: TimeInterval = 15
    /// Groups (reference section 14): members per group, groups per account.
    public var groupMaxMembers = 20
    public var groupsPerAccount = 20
    /// A stream whose write waited this long for its client is closed. Not an environment variable (reference
    /// section 13 says 30 s); tests shorten it.
    public var streamStallTimeout: TimeInterval = 30
    /// Base64 of 32 bytes; `nil` means "generate into the data directory" (SQLite only).
    public var masterKey: String?
    public var userIDStrategy: UserIDStrategy = .random
    public var trustedProxies: [CIDR] = []
    public var webhookURL: String?
    public var webhookSecret: String?
    /// How long a webhook receiver has to answer an attempt (reference section 7: 15 s).
    public var webhookTimeout: TimeInterval = 15
    /// How often each instance looks for webhook deliveries and Apple revocations that are due.
    public var outboxPollInterval: TimeInterval = 1
    /// Where generated secrets live (`master.key`, the emulator's keys). Lanyard addition: `LANYARD_DATA_DIR`.
    public var dataDirectory: String = ".lanyard"
    public var logLevel: String = "info"
    /// `LANYARD_TEST_PAUSE_AT` (dev mode only): where tests hold the server to kill it.
    public var pausePoints = PausePoints.none
    /// Apple account lifecycle (reference section 10): the team, the key's id and the .p8 key (PEM text).
    public var appleTeamID: String?
    public var appleKeyID: String?
    public var applePrivateKey: String?
    /// Apple's `/auth/token` and `/auth/revoke` live here; nil means Apple's own (the emulator's in dev mode).
    public var appleServicesURL: String?
    /// `LANYARD_GOTRUE_COMPAT`: nil follows dev mode (on there, off elsewhere).
    public var gotrueCompat: Bool?
    /// `LANYARD_GOTRUE_ANON_KEY`: the `apikey` the GoTrue-compatible surface requires, when set.
    public var gotrueAnonKey: String?

    public init() {}

    /// Whether the email identity is offered: with an SMTP server, or in dev mode (the emulator's mailbox).
    public var offersEmail: Bool { email.smtp != nil || devMode }
    /// Whether passkeys are offered: with a relying party, or in dev mode (`localhost`).
    public var offersPasskeys: Bool { passkeys.rpID != nil || devMode }

    /// Whether `/auth/v1` (reference section 12) is served.
    public var servesGoTrue: Bool { gotrueCompat ?? devMode }

    /// The issuer as configured, or `http://HOST:PORT` for the port actually bound.
    public func resolvedIssuer(boundPort: Int? = nil) -> String {
        if let issuer { return issuer }
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "http://\(host):\(boundPort ?? port)"
    }

    /// Reads the configuration from environment variables; every problem names its variable.
    public static func load(environment: [String: String]) throws(ConfigurationError) -> LanyardConfiguration {
        let reader = EnvironmentReader(environment: environment)
        var config = LanyardConfiguration()
        config.devMode = try reader.flag("LANYARD_DEV") ?? false
        try loadServer(reader, into: &config)
        try loadProviders(reader, into: &config)
        try loadSessions(reader, into: &config)
        try loadLimits(reader, into: &config)
        try loadSecrets(reader, into: &config)
        try loadAppleLifecycle(reader, into: &config)
        config.email = try EmailSettings.read(reader, devMode: config.devMode)
        config.passkeys = try PasskeySettings.read(reader)
        config.redirect = try RedirectSettings.read(reader, devMode: config.devMode)
        config.migration = try MigrationSettings.read(reader)
        config.gotrueCompat = try reader.flag("LANYARD_GOTRUE_COMPAT")
        config.gotrueAnonKey = reader.string("LANYARD_GOTRUE_ANON_KEY")
        try loadOperations(reader, into: &config)
        return config
    }

    /// Where it listens and what it stores in: address, database, issuer.
    private static func loadServer(_ reader: EnvironmentReader, into config: inout LanyardConfiguration) throws(ConfigurationError) {
        config.host = reader.string("LANYARD_HOST") ?? config.host
        config.port = try reader.integer("LANYARD_PORT", in: 0...65535) ?? config.port
        if let url = reader.string("LANYARD_DATABASE_URL") {
            guard let location = DatabaseLocation(url: url) else {
                throw ConfigurationError(variable: "LANYARD_DATABASE_URL",
                                         problem: "expected sqlite:PATH, sqlite::memory: or postgres://user:pass@host:port/db (query: sslmode=disable|prefer|require, prepared_statements=on|off)")
            }
            config.database = location
        }
        config.databasePoolSize = try reader.integer("LANYARD_DATABASE_POOL_SIZE", in: 1...500) ?? config.databasePoolSize
        config.databaseTimeout = try reader.seconds("LANYARD_DATABASE_TIMEOUT", minimum: 1) ?? config.databaseTimeout
        if let issuer = reader.string("LANYARD_ISSUER") {
            guard let url = URL(string: issuer), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ConfigurationError(variable: "LANYARD_ISSUER", problem: "expected an http(s) URL")
            }
            config.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        }
        config.dataDirectory = reader.string("LANYARD_DATA_DIR") ?? config.dataDirectory
    }

    /// Apple's, Google's and the OpenID Connect providers' audiences, keys and nonce rules.
    private static func loadProviders(_ reader: EnvironmentReader, into config: inout LanyardConfiguration) throws(ConfigurationError) {
        config.appleClientIDs = reader.list("LANYARD_APPLE_CLIENT_IDS")
        config.googleClientIDs = reader.list("LANYARD_GOOGLE_CLIENT_IDS")
        config.appleJWKSURL = try reader.url("LANYARD_APPLE_JWKS_URL") ?? config.appleJWKSURL
        config.googleJWKSURL = try reader.url("LANYARD_GOOGLE_JWKS_URL") ?? config.googleJWKSURL
        config.appleRequiresNonce = try reader.flag("LANYARD_APPLE_REQUIRE_NONCE") ?? false
        config.googleRequiresNonce = try reader.flag("LANYARD_GOOGLE_REQUIRE_NONCE") ?? false
        config.oidcProviders = try OIDCProviderConfiguration.read(reader)
        if !config.devMode, let unusable = config.oidcProviders.first(where: { $0.clientIDs.isEmpty }) {
            throw ConfigurationError(variable: "LANYARD_OIDC_\(unusable.name.uppercased())_CLIENT_IDS",
                                     problem: "is required for \(unusable.name) (the audiences its tokens are accepted for)")
        }
    }

    /// Tokens' and sessions' lifetimes, keys' publication, streams and groups.
    private static func loadSessions(_ reader: EnvironmentReader, into config: inout LanyardConfiguration) throws(ConfigurationError) {
        config.accessTokenTTL = try reader.seconds("LANYARD_ACCESS_TOKEN_TTL", minimum: 1) ?? config.accessTokenTTL
        config.refreshTokenTTL = try reader.seconds("LANYARD_REFRESH_TOKEN_TTL", minimum: 1) ?? config.refreshTokenTTL
        config.refreshReuseGrace = try reader.seconds("LANYARD_REFRESH_REUSE_GRACE", minimum: 0) ?? config.refreshReuseGrace
        config.reauthWindow = try reader.seconds("LANYARD_REAUTH_WINDOW", minimum: 1) ?? config.reauthWindow
        config.keyPublishDelay = try reader.seconds("LANYARD_KEY_PUBLISH_DELAY", minimum: 0) ?? config.keyPublishDelay
        if let strategy = reader.string("LANYARD_USER_ID_STRATEGY") {
            guard let parsed = UserIDStrategy(rawValue: strategy) else {
                throw ConfigurationError(variable: "LANYARD_USER_ID_STRATEGY", problem: "expected random or derived")
            }
            config.userIDStrategy = parsed
        }
        config.streamMaxPerAccount = try reader.integer("LANYARD_STREAM_MAX_PER_ACCOUNT", in: 1...1000)
            ?? config.streamMaxPerAccount
        config.streamMax = try reader.integer("LANYARD_STREAM_MAX", in: 1...1_000_000) ?? config.streamMax
        config.streamHeartbeat = try reader.seconds("LANYARD_STREAM_HEARTBEAT", minimum: 1) ?? config.streamHeartbeat
        config.groupMaxMembers = try reader.integer("LANYARD_GROUP_MAX_MEMBERS", in: 2...10_000) ?? config.groupMaxMembers
        config.groupsPerAccount = try reader.integer("LANYARD_GROUPS_PER_ACCOUNT", in: 1...1000) ?? config.groupsPerAccount
    }

    /// The rate limits.
    private static func loadLimits(_ reader: EnvironmentReader, into config: inout LanyardConfiguration) throws(ConfigurationError) {
        if let value = reader.string("LANYARD_RATE_LIMITS") {
            switch value.lowercased() {
            case "on": config.rateLimits.enabled = true
            case "off": config.rateLimits.enabled = false
            default: throw ConfigurationError(variable: "LANYARD_RATE_LIMITS", problem: "expected on or off")
            }
        }
        config.rateLimits.link = try reader.rate("LANYARD_RATE_LIMIT_LINK") ?? config.rateLimits.link
        config.rateLimits.anonymous = try reader.rate("LANYARD_RATE_LIMIT_ANONYMOUS") ?? config.rateLimits.anonymous
        config.rateLimits.signIn = try reader.rate("LANYARD_RATE_LIMIT_SIGNIN") ?? config.rateLimits.signIn
        config.rateLimits.adminKey = try reader.rate("LANYARD_RATE_LIMIT_ADMIN") ?? config.rateLimits.adminKey
        config.rateLimits.inviteCode = try reader.rate("LANYARD_RATE_LIMIT_INVITE") ?? config.rateLimits.inviteCode
    }

    /// The admin key, the master key, webhooks' target and secret.
    private static func loadSecrets(_ reader: EnvironmentReader, into config: inout LanyardConfiguration) throws(ConfigurationError) {
        if let key = reader.string("LANYARD_ADMIN_KEY") {
            guard key.count >= minimumAdminKeyLength else {
                throw ConfigurationError(variable: "LANYARD_ADMIN_KEY", problem: """
                    must be at least \(minimumAdminKeyLength) characters (try: openssl rand -hex 32)
                    """)
            }
            config.adminKey = key
        }
        if let key = reader.string("LANYARD_MASTER_KEY") {
            do {
                _ = try MasterKey(base64: key)
            } catch {
                throw ConfigurationError(variable: "LANYARD_MASTER_KEY", problem: "\(error) (expected base64 of 32 bytes)")
            }
            config.masterKey = key
        } else if config.database.isPostgres {
            throw ConfigurationError(variable: "LANYARD_MASTER_KEY",
                                     problem: "is required with PostgreSQL (every instance needs the same one)")
        }
        config.webhookURL = try reader.url("LANYARD_WEBHOOK_URL")
        if let secret = reader.string("LANYARD_WEBHOOK_SECRET") {
            guard secret.hasPrefix("whsec_"), Data(base64Encoded: String(secret.dropFirst(6))) != nil else {
                throw ConfigurationError(variable: "LANYARD_WEBHOOK_SECRET", problem: "expected whsec_ followed by base64")
            }
            config.webhookSecret = secret
        }
        if config.webhookURL != nil, config.webhookSecret == nil {
            throw ConfigurationError(variable: "LANYARD_WEBHOOK_SECRET",
                                     problem: "is required with LANYARD_WEBHOOK_URL (deliveries are signed with it)")
        }
        config.webhookTimeout = try reader.seconds("LANYARD_WEBHOOK_TIMEOUT", minimum: 1) ?? config.webhookTimeout
    }

    /// Who may call from a browser, which proxies are believed, the log, and tests' pause points.
    private static func loadOperations(_ reader: EnvironmentReader, into config: inout LanyardConfiguration) throws(ConfigurationError) {
        config.corsOrigins = try reader.list("LANYARD_CORS_ORIGINS").map { (text) throws(ConfigurationError) in
            guard let origin = WebOrigin.canonical(text) else {
                throw ConfigurationError(variable: "LANYARD_CORS_ORIGINS", problem: """
                    expected exact origins such as https://app.example.com, comma separated, got \(text)
                    """)
            }
            return origin
        }
        config.trustedProxies = try reader.list("LANYARD_TRUSTED_PROXIES").map { (text) throws(ConfigurationError) in
            guard let cidr = CIDR(text) else {
                throw ConfigurationError(variable: "LANYARD_TRUSTED_PROXIES", problem: "\(text) is not a CIDR")
            }
            return cidr
        }
        let pauses = reader.list("LANYARD_TEST_PAUSE_AT")
        if !pauses.isEmpty {
            guard config.devMode else {
                throw ConfigurationError(variable: "LANYARD_TEST_PAUSE_AT", problem: "is for tests, and honoured only with LANYARD_DEV=1")
            }
            config.pausePoints = PausePoints(points: Set(try pauses.map { (name) throws(ConfigurationError) in
                guard let point = PausePoints.Point(rawValue: name) else {
                    throw ConfigurationError(variable: "LANYARD_TEST_PAUSE_AT", problem: """
                        expected some of \(PausePoints.Point.allCases.map(\.rawValue).joined(separator: ", ")), got \(name)
                        """)
                }
                return point
            }))
        }
        if let level = reader.string("LANYARD_LOG_LEVEL") {
            let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
            guard levels.contains(level) else {
                throw ConfigurationError(variable: "LANYARD_LOG_LEVEL", problem: "expected one of \(levels.joined(separator: ", "))")
            }
            config.logLevel = level
        }
    }
}

extension LanyardConfiguration {
    /// `LANYARD_APPLE_TEAM_ID`, `LANYARD_APPLE_KEY_ID`, `LANYARD_APPLE_PRIVATE_KEY` (PEM text or `@/path/to/key.p8`):
    /// all three or none; `LANYARD_APPLE_SERVICES_URL`.
    fileprivate static func loadAppleLifecycle(_ reader: EnvironmentReader,
                                               into config: inout LanyardConfiguration) throws(ConfigurationError) {
        config.appleServicesURL = try reader.url("LANYARD_APPLE_SERVICES_URL")
        let team = reader.string("LANYARD_APPLE_TEAM_ID"), keyID = reader.string("LANYARD_APPLE_KEY_ID")
        var key = reader.string("LANYARD_APPLE_PRIVATE_KEY")
        guard team != nil || keyID != nil || key != nil else { return }
        for (name, value) in [("LANYARD_APPLE_TEAM_ID", team), ("LANYARD_APPLE_KEY_ID", keyID),
                              ("LANYARD_APPLE_PRIVATE_KEY", key) as (String, String?)] where value == nil {
            throw ConfigurationError(variable: name, problem: "is required with the other LANYARD_APPLE_* key settings")
        }
        if let path = key, path.hasPrefix("@") {
            guard let contents = try? String(contentsOfFile: String(path.dropFirst()), encoding: .utf8) else {
                throw ConfigurationError(variable: "LANYARD_APPLE_PRIVATE_KEY", problem: "cannot read \(path.dropFirst())")
            }
            key = contents
        }
        guard let pem = key, (try? P256.Signing.PrivateKey(pemRepresentation: pem)) != nil else {
            throw ConfigurationError(variable: "LANYARD_APPLE_PRIVATE_KEY",
                                     problem: "expected the .p8 key from Apple (PEM text, or @/path/to/key.p8)")
        }
        (config.appleTeamID, config.appleKeyID, config.applePrivateKey) = (team, keyID, pem)
    }
}

/// Limits per window for each rate-limited action (reference section 3, `RATE_LIMITED`).
public struct RateLimitSettings: Sendable {
    public struct Rate: Sendable, Equatable {
        public var limit: Int
        public var window: TimeInterval
        public init(limit: Int, window: TimeInterval) {
            self.limit = limit
            self.window = window
        }
    }

    public var enabled = true
    /// Link attempts per account.
    public var link = Rate(limit: 5, window: 3600)
    /// Anonymous accounts per client IP.
    public var anonymous = Rate(limit: 30, window: 3600)
    /// Sign-ins and refreshes per client IP.
    public var signIn = Rate(limit: 150, window: 300)
    /// Admin requests with a wrong or missing key, per client IP.
    public var adminKey = Rate(limit: 10, window: 300)
    /// Wrong invite codes, per account and per client IP (reference section 14).
    public var inviteCode = Rate(limit: 20, window: 3600)

    public init() {}
}

/// A setting that cannot be used; its description is the one line printed at start-up.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var variable: String
    public var problem: String

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "\(variable): \(problem)" }
}

/// Typed reads of environment variables; empty values count as unset.
struct EnvironmentReader {
    let environment: [String: String]

    func string(_ name: String) -> String? {
        guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    func list(_ name: String) -> [String] {
        (string(name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(variable: name, problem: "expected a whole number from \(range.lowerBound) to \(range.upperBound), got \(text)")
        }
        return value
    }

    func seconds(_ name: String, minimum: Int) throws(ConfigurationError) -> TimeInterval? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text), value >= minimum else {
            throw ConfigurationError(variable: name, problem: "expected a number of seconds, at least \(minimum), got \(text)")
        }
        return TimeInterval(value)
    }

    func flag(_ name: String) throws(ConfigurationError) -> Bool? {
        guard let text = string(name) else { return nil }
        switch text.lowercased() {
        case "1", "true", "on", "yes": return true
        case "0", "false", "off", "no": return false
        default: throw ConfigurationError(variable: name, problem: "expected 1 or 0, got \(text)")
        }
    }

    func url(_ name: String) throws(ConfigurationError) -> String? {
        guard let text = string(name) else { return nil }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ConfigurationError(variable: name, problem: "expected an http(s) URL, got \(text)")
        }
        return text
    }

    /// `LIMIT/SECONDS`, e.g. `5/3600`.
    func rate(_ name: String) throws(ConfigurationError) -> RateLimitSettings.Rate? {
        guard let text = string(name) else { return nil }
        let parts = text.split(separator: "/")
        guard parts.count == 2, let limit = Int(parts[0]), limit > 0, let window = Int(parts[1]), window > 0 else {
            throw ConfigurationError(variable: name, problem: "expected LIMIT/SECONDS such as 5/3600, got \(text)")
        }
        return .init(limit: limit, window: TimeInterval(window))
    }
}

/// The configuration holds every secret an operator sets: it is never described in full.
extension LanyardConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "LanyardConfiguration(issuer: \(issuer ?? "default"), dev: \(devMode))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
