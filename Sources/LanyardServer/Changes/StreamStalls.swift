import NIOCore
import ServiceLifecycle
import Logging
import Synchronization

/// Closes a stream whose pending write its client has not taken within `timeout` (reference section 13), which
/// fails the write and ends the stream. Writes only note when they start and end; one sweep for the whole
/// instance, a quarter of the timeout apart, looks for the stalled ones. No timer per stream or per write.
final class StreamStalls: Sendable {
    /// One stream's connection and the start of its pending write.
    final class Watch: Sendable {
        let channel: any Channel
        /// `NIODeadline.now()`'s nanoseconds when the pending write started; 0 when none is pending.
        private let writingSince = Atomic<Int64>(0)

        init(channel: any Channel) {
            self.channel = channel
        }

        func writing() { writingSince.store(Int64(NIODeadline.now().uptimeNanoseconds), ordering: .relaxed) }
        func written() { writingSince.store(0, ordering: .relaxed) }

        func isStalled(now: UInt64, timeout: UInt64) -> Bool {
            let since = writingSince.load(ordering: .relaxed)
            return since != 0 && now >= UInt64(since) + timeout
        }
    }

    let timeout: Duration
    private let watches = Mutex<[ObjectIdentifier: Watch]>([:])

    init(timeout: Duration) {
        self.timeout = timeout
    }

    func watch(_ channel: any Channel) -> Watch {
        let watch = Watch(channel: channel)
        watches.withLock { $0[ObjectIdentifier(watch)] = watch }
        return watch
    }

    func forget(_ watch: Watch) {
        _ = watches.withLock { $0.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    /// Closes the connections of stalled streams; returns how many.
    @discardableResult
    func sweep() -> Int {
        let now = NIODeadline.now().uptimeNanoseconds
        let limit = UInt64(TimeAmount(timeout).nanoseconds)
        let stalled = watches.withLock { $0.values.filter { $0.isStalled(now: now, timeout: limit) } }
        for watch in stalled { watch.channel.close(promise: nil) }
        return stalled.count
    }
}

/// `StreamStalls`'s sweep as a service of the server's `ServiceGroup`.
struct StreamStallService: Service {
    let stalls: StreamStalls
    let logger: Logger

    func run() async throws {
        await repeatUntilShutdown(every: stalls.timeout / 4, logger: logger, failure: "stream stall sweep") {
            stalls.sweep()
        }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension StreamStallService: CustomStringConvertible {
    var description: String { "StreamStallService" }
}
