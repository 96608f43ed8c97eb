import Crypto
import Foundation

/// When a failed delivery is tried again (reference section 7): the Standard Webhooks schedule, about a day in all.
public enum WebhookSchedule {
    /// The waits after the first, second, … failed attempt; after the last one the event is marked failed.
    public static let delays: [TimeInterval] = [5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400]

    /// When to try again after `attempts` attempts (this one included) failed, or nil when they are used up.
    /// - Parameters:
    ///   - retryAfter: the receiver's `Retry-After`, honoured when it asks for longer (up to a day).
    ///   - jitter: a number in 0..<1; the wait varies by ±10% with it, so retries of many events spread out.
    public static func nextAttempt(after attempts: Int, at now: Date, retryAfter: TimeInterval?, jitter: Double) -> Date? {
        guard attempts >= 1, attempts <= delays.count else { return nil }
        let base = delays[attempts - 1] * (0.9 + 0.2 * jitter)
        return now.addingTimeInterval(max(base, min(retryAfter ?? 0, 86_400)))
    }
}

/// The Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the secret
/// (`whsec_` + base64 of the key).
public enum WebhookSignature {
    public static func sign(id: String, timestamp: Int64, body: String, secret: String) -> String? {
        let encoded = secret.hasPrefix("whsec_") ? String(secret.dropFirst(6)) : secret
        guard let key = Data(base64Encoded: encoded) else { return nil }
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).\(body)".utf8), using: SymmetricKey(data: key))
        return "v1," + Data(mac).base64EncodedString()
    }
}
