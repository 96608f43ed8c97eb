import Foundation
import LanyardCore
import LanyardEmulator
import LanyardProviders
import LanyardStore
import LanyardSupport
import struct LanyardWire.SessionResponse
import Logging

/// Lanyard's core services on a real database, without HTTP: provider tokens are signed with the emulator's keys
/// and verified by the production verifier, whose key set is handed over in process instead of fetched.
struct CoreHarness: Sendable {
    let dependencies: CoreDependencies
    let clock: ManualClock
    let minter: TokenMinter
    private let database: any Database
    private let cleanup: @Sendable () async -> Void

    /// Runs `body` with services on a fresh database of `kind`, closed afterwards.
    static func with(_ kind: TestDatabase, _ body: (CoreHarness) async throws -> Void) async throws {
        let harness = try await CoreHarness(kind)
        do {
            try await body(harness)
        } catch {
            await harness.close()
            throw error
        }
        await harness.close()
    }

    private init(_ kind: TestDatabase) async throws {
        let (url, cleanup) = try await kind.makeFresh()
        guard let location = DatabaseLocation(url: url) else { throw TestSetupError("bad database URL \(url)") }
        let logger = Logger(label: "core-harness")
        let database = try await DatabaseFactory.open(location, poolSize: 4, logger: logger)
        let clock = ManualClock()
        try await Migrator(database: database, logger: logger).migrate(now: clock.now())
        let random = SystemRandomSource()
        let masterKey = try MasterKey(rawBytes: Array(repeating: 7, count: 32))
        var configuration = LanyardConfiguration()
        configuration.rateLimits.enabled = false
        let keyRing = try await SigningKeyRing.load(database: database, masterKey: masterKey, clock: clock, random: random,
                                                    accessTokenTTL: configuration.accessTokenTTL)
        let minter = TokenMinter(keys: TestServer.sharedKeys, clock: clock)
        let keys = JWKSCache(fetcher: InProcessKeys(minter: minter), clock: clock)
        let settings = [ProviderSettings.apple(clientIDs: [EmulatedProvider.apple.defaultClientID], jwksURL: "apple"),
                        ProviderSettings.google(clientIDs: [EmulatedProvider.google.defaultClientID], jwksURL: "google")]
        dependencies = CoreDependencies(
            database: database, clock: clock, random: random,
            accessTokens: AccessTokens(keys: keyRing, issuer: "http://lanyard.test", ttl: configuration.accessTokenTTL,
                                       clock: clock, random: random),
            providerTokens: ProviderTokens(verifier: IDTokenVerifier(keys: keys, clock: clock), settings: settings),
            rateLimiter: RateLimiter(database: database, clock: clock, settings: configuration.rateLimits),
            masterKey: masterKey, configuration: configuration)
        self.clock = clock
        self.minter = minter
        self.database = database
        self.cleanup = cleanup
    }

    private func close() async {
        await database.close()
        await cleanup()
    }

    /// A provider ID token, really signed.
    func idToken(_ provider: EmulatedProvider, sub: String, name: String? = nil) throws -> String {
        try minter.mint(provider, MintRequest(sub: sub, name: name))
    }

    /// The caller an access token speaks for, as the server's bearer check finds it.
    func caller(_ session: SessionResponse) async throws -> Caller {
        try await Authenticator(dependencies).authenticateAllowingMerged(bearer: session.accessToken)
    }

    static let client = ClientInfo(ip: "192.0.2.1", userAgent: "core-tests")

    /// The emulator's key sets, by provider name in place of a URL.
    private struct InProcessKeys: JWKSFetching {
        let minter: TokenMinter

        func fetch(url: String) async throws -> FetchedJWKS {
            guard let provider = EmulatedProvider(rawValue: url) else { throw TestSetupError("no keys at \(url)") }
            return FetchedJWKS(keys: minter.jwks(for: provider), maxAge: 3600)
        }
    }
}
