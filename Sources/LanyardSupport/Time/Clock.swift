import Foundation
import Synchronization

/// The source of "now" for every rule that depends on time, so tests can move time instead of sleeping.
/// Both clocks answer in whole milliseconds, the precision times are stored with, so a time an answer
/// takes from memory is the time a later read of the database shows.
public protocol LanyardClock: Sendable {
    func now() -> Date
}

public struct SystemClock: LanyardClock {
    public init() {}
    public func now() -> Date { Date().wholeMilliseconds }
}

/// A clock that only moves when told to; for tests.
public final class ManualClock: LanyardClock {
    private let current: Mutex<Date>

    public init(_ start: Date = Date()) {
        self.current = Mutex(start)
    }

    public func now() -> Date { current.withLock { $0 }.wholeMilliseconds }

    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}

extension Date {
    /// Whole seconds since 1970, as stored in the database and in JWT claims.
    public var unixSeconds: Int64 { Int64(timeIntervalSince1970.rounded(.down)) }

    /// Milliseconds since 1970, as stored in the database.
    public var unixMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    public init(unixMilliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(unixMilliseconds) / 1000)
    }

    /// This time as the database stores it.
    public var wholeMilliseconds: Date { Date(unixMilliseconds: unixMilliseconds) }
}
