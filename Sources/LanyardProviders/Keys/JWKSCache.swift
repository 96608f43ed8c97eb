import Foundation
import LanyardSupport
import Logging

/// Provider signing keys per JWKS URL: cached for the provider's `max-age`, refetched at most once a minute
/// when a token names an unknown `kid`, and served stale while the provider cannot be reached.
public actor JWKSCache {
    struct Entry {
        var keys: [String: JWK]
        var freshUntil: Date
    }

    public static let defaultMaxAge: TimeInterval = 3600
    public static let maximumMaxAge: TimeInterval = 86_400
    public static let minimumRefetchInterval: TimeInterval = 60

    private let fetcher: any JWKSFetching
    private let clock: any LanyardClock
    private let logger: Logger
    private var entries: [String: Entry] = [:]
    private var lastAttempt: [String: Date] = [:]
    private var inFlight: [String: Task<FetchedJWKS, any Error>] = [:]

    public init(fetcher: any JWKSFetching, clock: any LanyardClock, logger: Logger = Logger(label: "lanyard.jwks")) {
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
    }

    /// The key with this `kid` at this URL.
    /// - Throws: `ProviderTokenError(.unknownKey)` when the key set has no such key;
    ///   `ProviderUnavailableError` when nothing could be fetched and nothing is cached.
    public func key(id kid: String, url: String, provider: Provider?) async throws -> JWK {
        let now = clock.now()
        if let entry = entries[url], entry.freshUntil > now {
            if let key = entry.keys[kid] { return key }
            // An unknown kid may mean the provider rotated keys: look again, but not more than once a minute.
            guard canAttempt(url, now: now) else { throw ProviderTokenError(.unknownKey) }
        } else if entries[url] == nil, !canAttempt(url, now: now), inFlight[url] == nil {
            throw ProviderUnavailableError(provider: provider, underlying: "last fetch failed less than a minute ago")
        }
        do {
            try await refresh(url)
        } catch {
            guard let stale = entries[url] else {
                throw ProviderUnavailableError(provider: provider, underlying: String(describing: error))
            }
            logger.warning("serving cached keys after a failed fetch", metadata: ["url": "\(url)", "error": "\(error)"])
            guard let key = stale.keys[kid] else { throw ProviderTokenError(.unknownKey) }
            return key
        }
        guard let key = entries[url]?.keys[kid] else { throw ProviderTokenError(.unknownKey) }
        return key
    }

    private func canAttempt(_ url: String, now: Date) -> Bool {
        guard let last = lastAttempt[url] else { return true }
        return now.timeIntervalSince(last) >= Self.minimumRefetchInterval
    }

    /// Fetches the key set once, however many callers wait for it.
    private func refresh(_ url: String) async throws {
        let task: Task<FetchedJWKS, any Error>
        if let running = inFlight[url] {
            task = running
        } else {
            lastAttempt[url] = clock.now()
            let fetcher = self.fetcher
            task = Task { try await fetcher.fetch(url: url) }
            inFlight[url] = task
        }
        defer { inFlight[url] = nil }
        let fetched = try await task.value
        let maxAge = min(fetched.maxAge ?? Self.defaultMaxAge, Self.maximumMaxAge)
        var keys: [String: JWK] = [:]
        for key in fetched.keys.keys {
            if let kid = key.kid { keys[kid] = key }
        }
        entries[url] = Entry(keys: keys, freshUntil: clock.now().addingTimeInterval(maxAge))
        logger.debug("fetched provider keys", metadata: ["url": "\(url)", "count": "\(keys.count)"])
    }
}
