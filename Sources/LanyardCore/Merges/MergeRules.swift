import Foundation
import LanyardProviders
import LanyardSupport
import LanyardWire

/// The pure rules of a full merge.
enum MergeRules {
    /// Whether the `current` account's version wins a clash, by `rule`.
    static func currentWins(_ rule: MergeConflictRule, current: Date, other: Date, survivorIsCurrent: Bool) -> Bool {
        switch rule {
        case .current: true
        case .other: false
        case .newer: current == other ? survivorIsCurrent : current > other
        }
    }

    /// Providers both accounts hold a different identity of, that `release` does not let go: the merge is refused.
    /// Methods an account may hold several of (passkeys, `allowsSeveral`) never collide.
    static func collisions(survivor: [String], absorbed: [String], release: Set<String>,
                           allowsSeveral: (String) -> Bool) -> [String] {
        Set(survivor).intersection(absorbed).subtracting(release).filter { !allowsSeveral($0) }.sorted()
    }

    /// Providers of the absorbed account to detach: those in `release` that the survivor also holds.
    static func released(survivor: [String], absorbed: [String], release: Set<String>,
                         allowsSeveral: (String) -> Bool) -> Set<String> {
        Set(survivor).intersection(absorbed).intersection(release).filter { !allowsSeveral($0) }
    }
}

extension LanyardError {
    public static func mergeConflict(_ reason: String, _ message: String, details: [String: JSONValue] = [:]) -> LanyardError {
        var all = details
        all["reason"] = .string(reason)
        return LanyardError(.mergeConflict, message, details: all)
    }

    /// A token of an account that a full merge absorbed (reference section 15).
    public static func accountMerged(into: String) -> LanyardError {
        LanyardError(.accountMerged, "This account was merged into another; sign in again",
                     details: ["merged_into": .string(into)])
    }
}
