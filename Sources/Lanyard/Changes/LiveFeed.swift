import Foundation
import Synchronization

/// The client's one live connection to the account's change feed, shared by every watcher: `client.changes()` and
/// each collection's `changes()`. It connects when the first watcher arrives and closes when the last one leaves; it
/// resumes from one cursor kept in the client's storage (per account), and hands each change to the watchers whose
/// filter takes it. An app watching twenty collections holds one stream.
///
/// Each watcher waits on a bounded queue (`waitingLimit` changes): a watcher that falls that far behind is ended with
/// a network error rather than let the queue grow, and a collection's watcher catches up again by itself from its
/// own cursor (`LiveCollectionChanges`).
final class LiveFeed: Sendable {
    static let waitingLimit = 1000

    private struct Watcher: Sendable {
        /// Whether it reads the whole feed (`client.changes()`), not one collection.
        let wholeFeed: Bool
        let filter: @Sendable (LiveChange) -> Bool
        let continuation: AsyncThrowingStream<LiveChange, any Error>.Continuation
    }

    private struct State {
        var watchers: [Int: Watcher] = [:]
        var nextID = 0
        var task: Task<Void, Never>?
        /// Counts the connections' runs, so that a run that ended is not mistaken for the current one.
        var generation = 0
    }

    private let state = Mutex(State())
    private let live = LiveState()
    /// The client, weakly: the client holds this feed.
    private let owner = Mutex<WeakClient>(WeakClient())

    private final class WeakClient: @unchecked Sendable {
        weak var client: LanyardClient?
    }

    func attach(_ client: LanyardClient) {
        owner.withLock { $0.client = client }
    }

    /// Whether the shared connection has caught up and is delivering changes as they happen.
    var isLive: Bool { live.isLive }

    /// How many watchers share the connection now.
    var watcherCount: Int { state.withLock { $0.watchers.count } }

    /// A new watcher of the changes `filter` takes, from now on; the connection starts with the first watcher: where
    /// this device left off, else, the first time, at the feed's beginning for a whole-feed watcher and at its end
    /// (`since=now`) when only collections watch (they catch up on their own).
    func watch(wholeFeed: Bool = false,
               _ filter: @escaping @Sendable (LiveChange) -> Bool) -> AsyncThrowingStream<LiveChange, any Error> {
        let (changes, continuation) = AsyncThrowingStream.makeStream(
            of: LiveChange.self, bufferingPolicy: .bufferingOldest(Self.waitingLimit))
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.watchers[state.nextID] = Watcher(wholeFeed: wholeFeed, filter: filter, continuation: continuation)
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in self?.stopWatching(id) }
        startIfNeeded()
        return changes
    }

    private func startIfNeeded() {
        guard let client = owner.withLock({ $0.client }) else { return }
        state.withLock { state in
            guard state.task == nil, !state.watchers.isEmpty else { return }
            state.generation += 1
            let generation = state.generation
            let from = state.watchers.values.contains(where: \.wholeFeed) ? nil : "now"
            state.task = Task { [self] in await run(client, from: from, generation: generation) }
        }
    }

    private func stopWatching(_ id: Int) {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.watchers[id] = nil
            guard state.watchers.isEmpty, let task = state.task else { return nil }
            state.task = nil
            return task
        }
        task?.cancel()
    }

    /// Reads the feed until the last watcher leaves, the session ends (every watcher gets the error) or another
    /// stream of the account replaced this one (every watcher ends).
    private func run(_ client: LanyardClient, from start: String?, generation: Int) async {
        var reader = FeedReader(client: client, since: start, persistsCursor: true, live: live)
        var ending: (any Error)?
        do {
            while let change = try await reader.next() { deliver(change) }
        } catch is CancellationError {
            reader.close()
            return
        } catch {
            ending = error
        }
        reader.close()
        let watchers = state.withLock { state -> [Watcher] in
            guard state.generation == generation else { return [] }
            state.task = nil
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.continuation.finish(throwing: ending) }
    }

    private func deliver(_ change: LiveChange) {
        for watcher in state.withLock({ Array($0.watchers.values) }) where watcher.filter(change) {
            if case .dropped = watcher.continuation.yield(change) {
                watcher.continuation.finish(throwing: LanyardError.network(URLError(.dataLengthExceedsMaximum)))
            }
        }
    }
}
