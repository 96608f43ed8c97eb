import Foundation
import Synchronization

/// The last refused token of each provider, in this instance's memory: what the console's Providers page shows
/// beside the key fetches, so "why is sign-in with X failing" has an answer without reading logs. The token itself
/// is never kept.
public final class TokenRefusals: Sendable {
    public struct Refusal: Sendable, Equatable {
        public var at: Date
        /// The reference's `details.reason` (`no_kid`, `audience`, …).
        public var reason: String
        /// The `kid` the token's header named, if any.
        public var keyID: String?

        public init(at: Date, reason: String, keyID: String?) {
            (self.at, self.reason, self.keyID) = (at, reason, keyID)
        }
    }

    private let last = Mutex<[Provider: Refusal]>([:])

    public init() {}

    public func record(_ refusal: Refusal, for provider: Provider) {
        last.withLock { $0[provider] = refusal }
    }

    public func last(for provider: Provider) -> Refusal? {
        last.withLock { $0[provider] }
    }
}
