import Synchronization
import Testing
@testable import LanyardStore

/// The batching rule behind `GET /v1/users/me` on PostgreSQL, with a fetch that records what it was asked.
@Suite struct RequestBatcherTests {
    /// A fetch that answers every key with its uppercased self, except the ones it is told to leave out, and
    /// can be held until released.
    final class RecordingFetch: Sendable {
        private let state = Mutex<(batches: [[String]], running: Int, mostRunning: Int)>(([], 0, 0))
        private let held = Mutex<[CheckedContinuation<Void, Never>]>([])
        private let holding = Mutex(false)
        let missing: Set<String>
        let failing: Set<String>

        init(missing: Set<String> = [], failing: Set<String> = []) {
            self.missing = missing
            self.failing = failing
        }

        var batches: [[String]] { state.withLock { $0.batches } }
        var mostRunning: Int { state.withLock { $0.mostRunning } }

        func hold() { holding.withLock { $0 = true } }

        func release() {
            holding.withLock { $0 = false }
            for waiter in held.withLock({ held in defer { held = [] }; return held }) { waiter.resume() }
        }

        func callAsFunction(_ keys: [String]) async throws -> [String: String] {
            state.withLock {
                $0.batches.append(keys)
                $0.running += 1
                $0.mostRunning = max($0.mostRunning, $0.running)
            }
            defer { state.withLock { $0.running -= 1 } }
            if holding.withLock({ $0 }) {
                await withCheckedContinuation { continuation in held.withLock { $0.append(continuation) } }
            }
            for _ in 0..<3 { await Task.yield() }
            if keys.contains(where: failing.contains) { throw TestSetupError("batch \(keys) failed") }
            return Dictionary(uniqueKeysWithValues: keys.filter { !missing.contains($0) }.map { ($0, $0.uppercased()) })
        }
    }

    func batcher(_ fetch: RecordingFetch, batch: Int = 16, inFlight: Int = 1) -> RequestBatcher<String, String> {
        RequestBatcher(maximumBatch: batch, maximumInFlight: inFlight) { try await fetch($0) }
    }

    /// Waits (yielding, bounded) until `condition` holds.
    func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<200_000 where !condition() { await Task.yield() }
        guard condition() else { throw TestSetupError("condition never held") }
    }

    @Test func aLoneReadIsSentAtOnceAndAlone() async throws {
        let fetch = RecordingFetch()
        let batcher = batcher(fetch)
        #expect(try await batcher.run("a") == "A")
        #expect(try await batcher.run("b") == "B")
        #expect(fetch.batches == [["a"], ["b"]])
    }

    /// Reads `first`, holds its batch in flight until every read of `queued` waits, then lets them all go;
    /// the answers in the order given, `first`'s first.
    func readsQueuedBehindABusyBatch(_ batcher: RequestBatcher<String, String>, _ fetch: RecordingFetch, first: String,
                                     queued: [String]) async throws -> [Result<String?, any Error>] {
        fetch.hold()
        async let firstAnswer = Self.outcome { try await batcher.run(first) }
        try await eventually { fetch.batches.count == 1 }
        var answers = try await withThrowingTaskGroup(of: (Int, Result<String?, any Error>).self) { group in
            for (index, key) in queued.enumerated() {
                group.addTask { (index, await Self.outcome { try await batcher.run(key) }) }
            }
            try await eventually { batcher.waitingCount == queued.count }
            #expect(fetch.batches.count == 1)
            fetch.release()
            var answers = [Result<String?, any Error>?](repeating: nil, count: queued.count)
            for try await (index, answer) in group { answers[index] = answer }
            return answers.compactMap { $0 }
        }
        answers.insert(await firstAnswer, at: 0)
        return answers
    }

    static func outcome(_ read: @Sendable () async throws -> String?) async -> Result<String?, any Error> {
        do { return .success(try await read()) } catch { return .failure(error) }
    }

    @Test func readsArrivingWhileTheBatchesAreBusyShareTheNextOne() async throws {
        let fetch = RecordingFetch()
        let answers = try await readsQueuedBehindABusyBatch(batcher(fetch), fetch, first: "a", queued: ["b", "c", "d", "b"])
        #expect(try answers.map { try $0.get() } == ["A", "B", "C", "D", "B"])
        // The second batch asked for each key once, however many reads waited for it.
        #expect(fetch.batches.count == 2)
        #expect(fetch.batches.last.map { $0.sorted() } == ["b", "c", "d"])
    }

    @Test func aBatchHoldsAtMostItsMaximumOfKeys() async throws {
        let fetch = RecordingFetch()
        let answers = try await readsQueuedBehindABusyBatch(batcher(fetch, batch: 2), fetch, first: "a", queued: ["c", "d", "e"])
        #expect(try answers.map { try $0.get() } == ["A", "C", "D", "E"])
        #expect(fetch.batches.map(\.count) == [1, 2, 1])
    }

    @Test func aKeyTheFetchLeavesOutReadsAsNothing() async throws {
        let batcher = batcher(RecordingFetch(missing: ["gone"]))
        #expect(try await batcher.run("gone") == nil)
        #expect(try await batcher.run("here") == "HERE")
    }

    @Test func aFailedBatchFailsOnlyTheReadsInIt() async throws {
        let fetch = RecordingFetch(failing: ["bad"])
        let batcher = batcher(fetch, batch: 1)
        let answers = try await readsQueuedBehindABusyBatch(batcher, fetch, first: "x", queued: ["bad", "y"])
        #expect(try answers[0].get() == "X")
        #expect(throws: TestSetupError.self) { try answers[1].get() }
        #expect(try answers[2].get() == "Y")
        // A failure leaves the batcher working.
        #expect(try await batcher.run("z") == "Z")
    }

    @Test func aReadCancelledWhileItWaitsLeavesAtOnceAndIsNotSent() async throws {
        let fetch = RecordingFetch()
        let batcher = batcher(fetch)
        fetch.hold()
        async let first = Self.outcome { try await batcher.run("a") }
        try await eventually { fetch.batches.count == 1 }
        let queued = Task { try await batcher.run("b") }
        try await eventually { batcher.waitingCount == 1 }
        queued.cancel()
        // Answered while the batch ahead of it is still held.
        await #expect(throws: CancellationError.self) { try await queued.value }
        #expect(batcher.waitingCount == 0)
        fetch.release()
        #expect(try await first.get() == "A")
        #expect(try await batcher.run("c") == "C")
        #expect(fetch.batches == [["a"], ["c"]])
    }

    @Test func aReadCancelledBeforeItRunsIsNeverSent() async throws {
        let fetch = RecordingFetch()
        let batcher = batcher(fetch)
        let read = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await batcher.run("a")
        }
        await #expect(throws: CancellationError.self) { try await read.value }
        #expect(fetch.batches.isEmpty)
    }

    @Test func noMoreBatchesRunAtOnceThanAllowedAndEveryReadIsAnswered() async throws {
        let fetch = RecordingFetch()
        let batcher = batcher(fetch, batch: 4, inFlight: 2)
        let answers = try await withThrowingTaskGroup(of: (String, String?).self) { group in
            for index in 0..<200 {
                let key = "k\(index % 50)"
                group.addTask { (key, try await batcher.run(key)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 200)
        #expect(answers.allSatisfy { $0.1 == $0.0.uppercased() })
        #expect(fetch.mostRunning <= 2)
        #expect(fetch.batches.allSatisfy { $0.count <= 4 && Set($0).count == $0.count })
    }
}
