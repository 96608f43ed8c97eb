import LanyardSupport
import Synchronization

/// Request ids for logs and error envelopes: unique, not secret, so a counter behind a per-process random
/// prefix (24 hex characters) rather than fresh randomness per request.
enum RequestIDs {
    private static let prefix = SystemRandomSource().hexString(byteCount: 4)
    private static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        let value = counter.add(1, ordering: .relaxed).newValue
        let hex = String(value, radix: 16)
        return prefix + String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }
}
