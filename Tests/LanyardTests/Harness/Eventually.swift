import Foundation

/// Waits for the event `condition` tells of, asking every `interval`, for at most `seconds` of real time: a bound
/// only a hang reaches. Tests wait for what they mean this way rather than sleeping for a guess; speed is the
/// benchmark's business.
func eventually(within seconds: Double = 30, every interval: Duration = .milliseconds(20),
                _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Runs CPU-bound work (seconds of signing, say) on a thread of its own, so that it does not hold one of the few
/// cooperative threads every test and in-process server of a whole-suite run shares.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
