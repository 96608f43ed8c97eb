import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct ConfigurationTests {
    @Test func defaultsFollowTheDesign() throws {
        let configuration = try LanyardConfiguration.load(environment: [:])
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.database == .sqliteFile(path: ".lanyard/lanyard.sqlite"))
        #expect(configuration.databasePoolSize == 10)
        #expect(!configuration.migration.supabaseKeepIDs)
        #expect(configuration.resolvedIssuer() == "http://127.0.0.1:8080")
        #expect(configuration.accessTokenTTL == 900)
        #expect(configuration.refreshTokenTTL == 2_592_000)
        #expect(configuration.refreshReuseGrace == 10)
        #expect(configuration.reauthWindow == 600)
        #expect(configuration.rateLimits.enabled)
        #expect(configuration.rateLimits.link == .init(limit: 5, window: 3600))
        #expect(configuration.appleJWKSURL == "https://appleid.apple.com/auth/keys")
        #expect(configuration.googleJWKSURL == "https://www.googleapis.com/oauth2/v3/certs")
        #expect(configuration.userIDStrategy == .random)
    }

    @Test func valuesAreParsed() throws {
        let configuration = try LanyardConfiguration.load(environment: [
            "LANYARD_DATABASE_URL": "postgres://lanyard:s%40cret@db.internal:6543/auth?sslmode=disable",
            "LANYARD_MASTER_KEY": Data(repeating: 1, count: 32).base64EncodedString(),
            "LANYARD_APPLE_CLIENT_IDS": "com.example.app, com.example.web ",
            "LANYARD_USER_ID_STRATEGY": "derived",
            "LANYARD_TRUSTED_PROXIES": "10.0.0.0/8,fd00::/8",
            "LANYARD_RATE_LIMIT_LINK": "3/60",
            "LANYARD_DATABASE_POOL_SIZE": "32",
            "LANYARD_SUPABASE_KEEP_IDS": "1",
        ])
        #expect(configuration.database == .postgres(.init(host: "db.internal", port: 6543, username: "lanyard",
                                                          password: "s@cret", database: "auth", tlsMode: "disable")))
        #expect(configuration.appleClientIDs == ["com.example.app", "com.example.web"])
        #expect(configuration.userIDStrategy == .derived)
        #expect(configuration.trustedProxies.count == 2)
        #expect(configuration.rateLimits.link == .init(limit: 3, window: 60))
        #expect(configuration.databasePoolSize == 32)
        #expect(configuration.migration.supabaseKeepIDs && !configuration.migration.tokenLegacyID)
    }

    @Test func thePostgresURLCarriesPreparedStatementsAndASocketDirectory() throws {
        let key = Data(repeating: 1, count: 32).base64EncodedString()
        func location(_ url: String) throws -> DatabaseLocation {
            try LanyardConfiguration.load(environment: ["LANYARD_DATABASE_URL": url, "LANYARD_MASTER_KEY": key]).database
        }
        guard case .postgres(let plain) = try location("postgres://u@h/db"),
              case .postgres(let pooled) = try location("postgres://u@h:6543/db?sslmode=require&prepared_statements=off")
        else { Issue.record("not postgres"); return }
        #expect(plain.preparedStatements)
        #expect(!pooled.preparedStatements)
        #expect(pooled.tlsMode == "require" && pooled.port == 6543)
        guard case .postgres(let local) = try location("postgres://lanyard@/auth?host=/run/postgresql&port=5433")
        else { Issue.record("not postgres"); return }
        #expect(local.socketDirectory == "/run/postgresql" && local.port == 5433 && local.database == "auth")
    }

    @Test(arguments: [
        ("LANYARD_PORT", "eighty"),
        ("LANYARD_PORT", "70000"),
        ("LANYARD_DATABASE_URL", "mysql://x"),
        ("LANYARD_ACCESS_TOKEN_TTL", "-5"),
        ("LANYARD_REFRESH_TOKEN_TTL", "1d"),
        ("LANYARD_MASTER_KEY", "not-base64!"),
        ("LANYARD_MASTER_KEY", Data(repeating: 1, count: 16).base64EncodedString()),
        ("LANYARD_APPLE_JWKS_URL", "ftp://keys"),
        ("LANYARD_USER_ID_STRATEGY", "sequential"),
        ("LANYARD_TRUSTED_PROXIES", "10.0.0.0/99"),
        ("LANYARD_RATE_LIMITS", "sometimes"),
        ("LANYARD_WEBHOOK_SECRET", "plain"),
        ("LANYARD_DATABASE_POOL_SIZE", "0"),
        ("LANYARD_DATABASE_URL", "postgres://u@h/db?prepared_statements=maybe"),
        ("LANYARD_DATABASE_URL", "postgres://u@/db"),
        ("LANYARD_DATABASE_URL", "postgres://u@/db?host=relative/dir"),
        ("LANYARD_DATABASE_URL", "postgres://u@/db?host=/run/postgresql&port=0"),
        // Origins and redirect targets of other schemes (reference section 25).
        ("LANYARD_WEBAUTHN_ORIGINS", "ftp://localhost"),
        ("LANYARD_WEBAUTHN_ORIGINS", "javascript://localhost"),
        ("LANYARD_EMAIL_REDIRECT_URLS", "javascript:alert(document.domain)"),
        ("LANYARD_EMAIL_REDIRECT_URLS", "data:text/html,hi"),
        ("LANYARD_EMAIL_REDIRECT_URLS", "ftp://files.example.com/done"),
        ("LANYARD_EMAIL_REDIRECT_URLS", "https:/no-host"),
    ])
    func aBadSettingNamesItsVariable(variable: String, value: String) {
        #expect {
            _ = try LanyardConfiguration.load(environment: [variable: value])
        } throws: { error in
            (error as? ConfigurationError)?.variable == variable
        }
    }

    @Test func originsAndRedirectsOfTheirOwnSchemesAreKept() throws {
        let configuration = try LanyardConfiguration.load(environment: [
            "LANYARD_WEBAUTHN_ORIGINS": "https://app.example.com,http://localhost:5173,android:apk-key-hash:abc",
            "LANYARD_EMAIL_REDIRECT_URLS": "https://app.example.com/done,com.example.app:/signed-in,myapp://signed-in",
        ])
        #expect(configuration.passkeys.origins.count == 3)
        #expect(configuration.email.redirectURLs == ["https://app.example.com/done", "com.example.app:/signed-in", "myapp://signed-in"])
    }

    @Test func postgresWithoutAMasterKeyIsRefused() {
        #expect(throws: ConfigurationError.self) {
            _ = try LanyardConfiguration.load(environment: ["LANYARD_DATABASE_URL": "postgres://u:p@localhost/db"])
        }
        do {
            _ = try LanyardConfiguration.load(environment: ["LANYARD_DATABASE_URL": "postgres://u:p@localhost/db"])
        } catch {
            #expect(error.variable == "LANYARD_MASTER_KEY")
        }
    }
}
