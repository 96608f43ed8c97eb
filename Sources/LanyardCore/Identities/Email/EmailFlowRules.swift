import Foundation
import LanyardStore

/// The pure rules of an email flow (reference section 18): when it can still be finished, and how a code try
/// counts.
enum EmailFlowRules {
    /// Wrong codes a flow survives.
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

    /// The match number as typed on the link's page: two digits once spaces are taken out, or nil.
    static func typedMatch(_ text: String) -> Int? {
        let digits = text.filter { $0 != " " }
        guard digits.count == 2, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
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
        let current = inWindow(counter, at: now)
        let sinceLast = now.timeIntervalSince(current.lastAt)
        if interval > 0, sinceLast < interval {
            return .failure(RetryAfter(seconds: Int((interval - sinceLast).rounded(.up))))
        }
        if let wait = exhausted(current, at: now) { return .failure(wait) }
        return .success(counting(current, at: now))
    }

    /// The counter after one more event (a wrong code), its window started again once over; never refused.
    func counting(_ counter: EmailLimitCounter, at now: Date) -> EmailLimitCounter {
        var counter = inWindow(counter, at: now)
        counter.count += 1
        counter.lastAt = now
        return counter
    }

    /// The counter with one event given back (a guess that proved right), within its window.
    func uncounting(_ counter: EmailLimitCounter) -> EmailLimitCounter {
        var counter = counter
        counter.count = max(0, counter.count - 1)
        return counter
    }

    /// The wait until the window is over when it already holds `perWindow`, else nil.
    func exhausted(_ counter: EmailLimitCounter?, at now: Date) -> RetryAfter? {
        guard let counter else { return nil }
        let current = inWindow(counter, at: now)
        guard current.count >= perWindow else { return nil }
        return RetryAfter(seconds: max(1, Int(current.windowStart.addingTimeInterval(window).timeIntervalSince(now).rounded(.up))))
    }

    private func inWindow(_ counter: EmailLimitCounter, at now: Date) -> EmailLimitCounter {
        guard now.timeIntervalSince(counter.windowStart) >= window else { return counter }
        return EmailLimitCounter(windowStart: now, count: 0, lastAt: counter.lastAt)
    }

    struct RetryAfter: Error, Equatable {
        var seconds: Int
    }
}
