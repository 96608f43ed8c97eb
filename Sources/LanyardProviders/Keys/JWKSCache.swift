import Crypto
import _CryptoExtras
import Foundation
import LanyardSupport
import Logging
import Synchronization

/// One provider signing key, its public key parsed once when the key set is fetched: a parsed key also
/// keeps the arithmetic set-up BoringSSL does on its first use, which parsing per token repeated each time.
public struct ProviderKey: Sendable {
    public let jwk: JWK
    /// `nil` when the JWK is not a usable RSA key.
    public let rsa: _RSA.Signing.PublicKey?
    /// `nil` when the JWK is not a usable P-256 key.
    public let p256: P256.Signing.PublicKey?

    public init(_ jwk: JWK) {
        self.jwk = jwk
        self.rsa = jwk.rsaPublicKey()
        self.p256 = jwk.p256PublicKey()
    }

    public var kid: String? { jwk.kid }

    /// Whether this key can check a signature made with `algorithm` (`RS256` or `ES256`): its type fits, and what
    /// it declares of its algorithm and use allows it.
    public func fits(_ algorithm: String) -> Bool {
        guard jwk.alg == nil || jwk.alg == algorithm, jwk.use == nil || jwk.use == "sig" else { return false }
        switch algorithm {
        case "RS256": return rsa != nil
        case "ES256": return p256 != nil
        default: return false
        }
    }
}

/// Provider signing keys per JWKS URL: cached for the provider's `max-age`, refetched at most once a minute
/// when a token names an unknown `kid`, and served stale, without waiting, while a refetch is under way or the
/// provider cannot be reached (reference section 8).
///
/// A lock, not an actor: a sign-in finds its key without leaving its executor; only a fetch is awaited.
public final class JWKSCache: Sendable {
    struct Entry {
        var keys: [String: ProviderKey]
        /// Every key of the set, those without a `kid` too, in the set's order.
        var all: [ProviderKey]
        var freshUntil: Date
        var fetchedAt: Date
    }

    struct State {
        var entries: [String: Entry] = [:]
        var lastAttempt: [String: Date] = [:]
        /// The fetch under way per URL, which every caller that needs it waits for.
        var inFlight: [String: Task<Void, any Error>] = [:]
        /// The last failed fetch per URL, until a fetch succeeds (the console's Providers page).
        var lastError: [String: KeySetStatus.Failure] = [:]
    }

    public static let defaultMaxAge: TimeInterval = 3600
    public static let maximumMaxAge: TimeInterval = 86_400
    public static let minimumRefetchInterval: TimeInterval = 60
    /// How often a key set past its max-age is fetched again while the provider fails.
    public static let staleRefetchInterval: TimeInterval = 30
    /// How often a provider with no cached keys is tried again: a sign-in in between answers
    /// `PROVIDER_UNAVAILABLE` at once instead of waiting for another timeout.
    public static let retryWithoutKeysInterval: TimeInterval = 5
    /// Keys kept of one set: real providers publish two to five; a set of thousands is not kept whole.
    public static let maximumKeysPerSet = 64

    private let fetcher: any JWKSFetching
    private let clock: any LanyardClock
    private let logger: Logger
    private let state = Mutex(State())

    public init(fetcher: any JWKSFetching, clock: any LanyardClock, logger: Logger = Logger(label: "lanyard.jwks")) {
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
    }

    private enum Lookup {
        case found(ProviderKey)
        case failed(any Error)
        case fetching(Task<Void, any Error>)
    }

    /// The key with this `kid` at this URL.
    /// - Throws: `ProviderTokenError(.unknownKey)` when the key set has no such key;
    ///   `ProviderUnavailableError` when nothing could be fetched and nothing is cached.
    public func key(id kid: String, url: String, provider: Provider?) async throws -> ProviderKey {
        let now = clock.now()
        let lookup = state.withLock { state -> Lookup in
            if let entry = state.entries[url] {
                if let key = entry.keys[kid] {
                    // Past its max-age, the key set is fetched again in the background while the cached key keeps
                    // sign-in working, however slow or broken the provider's key endpoint is.
                    if entry.freshUntil <= now, Self.canAttempt(url, now: now, in: state, every: Self.staleRefetchInterval) {
                        _ = self.startFetch(url, in: &state, now: now)
                    }
                    return .found(key)
                }
                // An unknown kid may mean the provider rotated keys: look again, but not more than once a minute,
                // or, once the set is past the max-age its provider gave it, as often as a set without keys.
                let interval = entry.freshUntil <= now ? Self.retryWithoutKeysInterval : Self.minimumRefetchInterval
                guard Self.canAttempt(url, now: now, in: state, every: interval) else {
                    return .failed(ProviderTokenError(.unknownKey))
                }
            } else if !Self.canAttempt(url, now: now, in: state, every: Self.retryWithoutKeysInterval), state.inFlight[url] == nil {
                return .failed(ProviderUnavailableError(provider: provider, underlying: "the last fetch failed moments ago"))
            }
            return .fetching(self.startFetch(url, in: &state, now: now))
        }
        let fetch: Task<Void, any Error>
        switch lookup {
        case .found(let key): return key
        case .failed(let error): throw error
        case .fetching(let task): fetch = task
        }

        do {
            try await fetch.value
        } catch {
            guard let stale = state.withLock({ $0.entries[url] }) else {
                throw ProviderUnavailableError(provider: provider, underlying: String(describing: error))
            }
            logger.warning("serving cached keys after a failed fetch", metadata: ["url": "\(url)", "error": "\(error)"])
            guard let key = stale.keys[kid] else { throw ProviderTokenError(.unknownKey) }
            return key
        }
        guard let key = state.withLock({ $0.entries[url]?.keys[kid] }) else { throw ProviderTokenError(.unknownKey) }
        return key
    }

    /// For a token that names no `kid` (RFC 7515 allows it; one-key issuers omit it): the one key of the set at
    /// `url` that fits `algorithm`, fetching the set when none is cached. Refused as `no_kid` when none or several
    /// fit: a key is never guessed.
    public func onlyKey(fitting algorithm: String, url: String, provider: Provider?) async throws -> ProviderKey {
        let now = clock.now()
        let lookup = state.withLock { state -> Lookup? in
            if let entry = state.entries[url] {
                if entry.freshUntil <= now, Self.canAttempt(url, now: now, in: state, every: Self.staleRefetchInterval) {
                    _ = self.startFetch(url, in: &state, now: now)
                }
                return nil
            }
            if !Self.canAttempt(url, now: now, in: state, every: Self.retryWithoutKeysInterval), state.inFlight[url] == nil {
                return .failed(ProviderUnavailableError(provider: provider, underlying: "the last fetch failed moments ago"))
            }
            return .fetching(self.startFetch(url, in: &state, now: now))
        }
        switch lookup {
        case .failed(let error): throw error
        case .fetching(let task):
            do { try await task.value } catch {
                throw ProviderUnavailableError(provider: provider, underlying: String(describing: error))
            }
        case .found, nil: break
        }
        let fitting = state.withLock { $0.entries[url]?.all.filter { $0.fits(algorithm) } } ?? []
        guard fitting.count == 1, let key = fitting.first else { throw ProviderTokenError(.noKeyID) }
        return key
    }

    private static func canAttempt(_ url: String, now: Date, in state: State, every interval: TimeInterval) -> Bool {
        guard let last = state.lastAttempt[url] else { return true }
        return now.timeIntervalSince(last) >= interval
    }

    /// The fetch of this URL's key set under way, or a new one: one fetch, however many callers wait for it.
    private func startFetch(_ url: String, in state: inout State, now: Date) -> Task<Void, any Error> {
        if let running = state.inFlight[url] { return running }
        state.lastAttempt[url] = now
        let task = Task { [fetcher, clock, logger, self] in
            defer { self.state.withLock { _ = $0.inFlight.removeValue(forKey: url) } }
            let fetched: FetchedJWKS
            do {
                fetched = try await fetcher.fetch(url: url)
            } catch {
                let failure = KeySetStatus.Failure(at: clock.now(), message: String(describing: error))
                // The wait before the next attempt counts from the failure, not from when this attempt began: a
                // fetch that hung until its deadline is not tried again at once by the next request.
                self.state.withLock {
                    $0.lastError[url] = failure
                    $0.lastAttempt[url] = failure.at
                }
                logger.warning("provider keys could not be fetched", metadata: ["url": "\(url)", "error": "\(error)"])
                throw error
            }
            let maxAge = min(fetched.maxAge ?? Self.defaultMaxAge, Self.maximumMaxAge)
            let all = fetched.keys.keys.prefix(Self.maximumKeysPerSet).map(ProviderKey.init)
            var keys: [String: ProviderKey] = [:]
            for key in all {
                if let kid = key.kid { keys[kid] = key }
            }
            let fetchedAt = clock.now()
            let entry = Entry(keys: keys, all: all, freshUntil: fetchedAt.addingTimeInterval(maxAge), fetchedAt: fetchedAt)
            self.state.withLock {
                $0.entries[url] = entry
                $0.lastError[url] = nil
            }
            logger.debug("fetched provider keys", metadata: ["url": "\(url)", "count": "\(keys.count)"])
        }
        state.inFlight[url] = task
        return task
    }

    /// What is known of one key set: for operators, never on a request's path.
    public func status(url: String) -> KeySetStatus {
        state.withLock { state in
            let entry = state.entries[url]
            return KeySetStatus(keyIDs: entry.map { $0.keys.keys.sorted() } ?? [], fetchedAt: entry?.fetchedAt,
                                freshUntil: entry?.freshUntil, lastError: state.lastError[url])
        }
    }
}

/// A key set as the cache holds it: which keys, when they were fetched, and the last fetch that failed since.
public struct KeySetStatus: Sendable, Equatable {
    public struct Failure: Sendable, Equatable {
        public var at: Date
        public var message: String
    }

    public var keyIDs: [String]
    public var fetchedAt: Date?
    public var freshUntil: Date?
    public var lastError: Failure?
}
