import Foundation
import LanyardStore
import LanyardSupport

/// Fixed-window limits counted in the database, so they hold across instances.
public struct RateLimiter: Sendable {
    public enum Action: String, Sendable {
        case link
        case anonymous
        case signIn = "signin"
        /// Admin requests with a wrong or missing key.
        case adminKey = "admin_key"
        /// Wrong invite codes (previewed or accepted), per account and per client IP.
        case inviteCode = "invite_code"
    }

    let database: any Database
    let clock: any LanyardClock
    let settings: RateLimitSettings

    public init(database: any Database, clock: any LanyardClock, settings: RateLimitSettings) {
        self.database = database
        self.clock = clock
        self.settings = settings
    }

    /// Counts one attempt for `key` (an account id or client IP) and refuses it past the limit.
    public func check(_ action: Action, key: String?) async throws {
        try await enforce(action, key: key, counting: true)
    }

    /// Refuses `key` while it is past the limit, without counting an attempt (for checks that must not even
    /// be tried once the limit is reached, such as comparing an admin key).
    public func refuseIfLimited(_ action: Action, key: String?) async throws {
        try await enforce(action, key: key, counting: false)
    }

    /// Counts an attempt (or only reads the count) in the window that contains now, and refuses past the limit.
    private func enforce(_ action: Action, key: String?, counting: Bool) async throws {
        guard settings.enabled, let key else { return }
        let rate = rate(for: action)
        let now = clock.now()
        let decision = Self.window(for: now, rate: rate)
        let bucket = "\(action.rawValue):\(key)"
        let refused = if counting {
            try await RateLimitStore.hit(bucket: bucket, windowStart: decision.start, in: database) > rate.limit
        } else {
            try await database.read { try await RateLimitStore($0).hits(bucket: bucket, windowStart: decision.start) }
                >= rate.limit
        }
        if refused {
            throw LanyardError.rateLimited(retryAfter: max(1, Int(decision.end.timeIntervalSince(now).rounded(.up))))
        }
    }

    private func rate(for action: Action) -> RateLimitSettings.Rate {
        switch action {
        case .link: settings.link
        case .anonymous: settings.anonymous
        case .signIn: settings.signIn
        case .adminKey: settings.adminKey
        case .inviteCode: settings.inviteCode
        }
    }

    /// The fixed window that contains `now`.
    public static func window(for now: Date, rate: RateLimitSettings.Rate) -> (start: Date, end: Date) {
        let seconds = now.timeIntervalSince1970
        let start = (seconds / rate.window).rounded(.down) * rate.window
        return (Date(timeIntervalSince1970: start), Date(timeIntervalSince1970: start + rate.window))
    }
}
