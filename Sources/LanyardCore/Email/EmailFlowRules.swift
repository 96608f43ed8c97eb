import Foundation
import LanyardStore

/// The pure rules of an email flow (reference section 18): when it can still be finished, and how a code try
/// counts.
enum EmailFlowRules {
    /// Wrong codes (or wrong numbers picked on the confirm page) a flow survives.
    static let maxWrongCodes = 5

    /// Why the flow can no longer be finished, or nil while it can: `used`, `undeliverable`, `flow_dead` (five
    /// wrong codes), `expired`; the first that applies.
    static func refusal(_ flow: EmailFlowRecord, at now: Date) -> String? {
        if flow.usedAt != nil { return "used" }
        if flow.undeliverableAt != nil { return "undeliverable" }
        if flow.wrongCodes >= maxWrongCodes { return "flow_dead" }
        if flow.expiresAt <= now { return "expired" }
        return nil
    }

    /// The error for a wrong code that left `wrongCodes` counted.
    static func wrongCode(after wrongCodes: Int) -> LanyardError {
        let left = max(0, maxWrongCodes - wrongCodes)
        return LanyardError.invalidCode(reason: left == 0 ? "flow_dead" : "wrong_code", attemptsLeft: left)
    }

    /// The refusal's error, with the tries a flow has left.
    static func error(for reason: String, _ flow: EmailFlowRecord) -> LanyardError {
        LanyardError.invalidCode(reason: reason, attemptsLeft: reason == "wrong_code" ? max(0, maxWrongCodes - flow.wrongCodes) : 0)
    }

    /// A code as typed: digits only once spaces and dashes are taken out, six of them.
    static func normalizedCode(_ text: String) -> String? {
        let digits = text.filter { $0 != " " && $0 != "-" }
        guard digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return digits
    }
}

/// One limit on mails (reference section 18): at most `perWindow` in `window`, and none within `interval` of the
/// last. Pure: the store reads and writes the counter; this says what happens to it.
struct EmailLimitRule: Sendable, Equatable {
    var interval: TimeInterval
    var perWindow: Int
    var window: TimeInterval

    /// The counter after one more mail, or the whole seconds until one is allowed.
    func take(_ counter: EmailLimitCounter, at now: Date) -> Result<EmailLimitCounter, RetryAfter> {
        var counter = counter
        if now.timeIntervalSince(counter.windowStart) >= window {
            counter.windowStart = now
            counter.count = 0
        }
        let sinceLast = now.timeIntervalSince(counter.lastAt)
        if interval > 0, sinceLast < interval {
            return .failure(RetryAfter(seconds: Int((interval - sinceLast).rounded(.up))))
        }
        if counter.count >= perWindow {
            return .failure(RetryAfter(seconds: max(1, Int((counter.windowStart.addingTimeInterval(window).timeIntervalSince(now)).rounded(.up)))))
        }
        counter.count += 1
        counter.lastAt = now
        return .success(counter)
    }

    struct RetryAfter: Error, Equatable {
        var seconds: Int
    }
}
