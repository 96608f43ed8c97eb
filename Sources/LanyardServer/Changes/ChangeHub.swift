import LanyardCore
import enum LanyardWire.StreamEndReason
import NIOCore
import Synchronization

/// One live reader of an account's feed (a stream or a long-poll), as the hub knows it: woken after a commit that
/// concerns the account, and told to end when the hub ends it (`replaced`, `shutdown`). Holds no changes: the
/// reader reads the feed itself when woken, so a reader costs the same however many changes it missed.
final class FeedWaiter: Sendable {
    let userID: String
    let id: UInt64

    /// Changes carried by wake-ups, kept for the reader up to this many; past it the reader reads the feed.
    static let carriedLimit = 32

    private struct State {
        var recordsChanged = false
        /// The committed changes the wake-ups carried, and whether any wake-up came without them.
        var carried: [FeedChange] = []
        var uncarried = false
        var accessChanged = false
        var end: StreamEndReason?
        var continuation: CheckedContinuation<Void, Never>?
        var timedOut = false
        /// The pending timer, kept across waits: a wait that ends no sooner reuses it, so a reader woken by every
        /// commit schedules no timer per wake-up. `timerID` tells a replaced timer that fired anyway from the current one.
        var timer: Scheduled<Void>?
        var timerDeadline: NIODeadline?
        var timerID: UInt64 = 0
    }

    private let state = Mutex(State())

    init(userID: String, id: UInt64) {
        self.userID = userID
        self.id = id
    }

    /// What happened since the last `take()`.
    struct Wake: Sendable {
        var recordsChanged: Bool
        var accessChanged: Bool
        var end: StreamEndReason?
        var carried: [FeedChange] = []
        /// Some change may not be in `carried`: read the feed.
        var uncarried = false
    }

    func wake(records: Bool, access: Bool, written: [FeedChange] = []) {
        let continuation = state.withLock { state in
            if records {
                if written.isEmpty || state.uncarried || state.carried.count + written.count > Self.carriedLimit {
                    state.uncarried = true
                    state.carried = []
                } else {
                    state.carried += written
                }
            }
            state.recordsChanged = state.recordsChanged || records
            state.accessChanged = state.accessChanged || access
            return state.continuation.take()
        }
        continuation?.resume()
    }

    func end(_ reason: StreamEndReason) {
        let continuation = state.withLock { state in
            if state.end == nil { state.end = reason }
            return state.continuation.take()
        }
        continuation?.resume()
    }

    /// Takes what happened since the last call, and clears it.
    func take() -> Wake {
        state.withLock { state in
            defer {
                (state.recordsChanged, state.accessChanged) = (false, false)
                (state.carried, state.uncarried) = ([], false)
            }
            return Wake(recordsChanged: state.recordsChanged, accessChanged: state.accessChanged, end: state.end,
                        carried: state.carried, uncarried: state.uncarried)
        }
    }

    /// Returns when woken or ended (at once when that already happened since the last `take()`), at the latest
    /// after `timeout`, or when the task is cancelled. The timeout is a timer on `eventLoop` (the connection's), not
    /// a task: an idle reader is a suspended task and nothing else. A timer still pending from an earlier wait that
    /// fires no later is kept, so the wait may end early: the reader then finds nothing new and waits again.
    func wait(timeout: Duration, on eventLoop: any EventLoop) async {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        let (replaced, newTimerID) = state.withLock { state -> (Scheduled<Void>?, UInt64?) in
            state.timedOut = false
            if let pending = state.timerDeadline, pending <= deadline { return (nil, nil) }
            state.timerID &+= 1
            state.timerDeadline = deadline
            defer { state.timer = nil }
            return (state.timer, state.timerID)
        }
        replaced?.cancel()
        if let newTimerID {
            let timer = eventLoop.scheduleTask(deadline: deadline) { self.timeUp(newTimerID) }
            state.withLock { state in
                if state.timerID == newTimerID, state.timerDeadline != nil { state.timer = timer }
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.recordsChanged || state.accessChanged || state.end != nil || state.timedOut
                        || Task.isCancelled { return true }
                    state.continuation = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.continuation.take() }?.resume()
        }
    }

    /// Cancels the pending timer: the reader is done.
    func close() {
        state.withLock { state in
            state.timerDeadline = nil
            return state.timer.take()
        }?.cancel()
    }

    private func timeUp(_ timerID: UInt64) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.timerID == timerID, state.timerDeadline != nil else { return nil }
            (state.timer, state.timerDeadline) = (nil, nil)
            state.timedOut = true
            return state.continuation.take()
        }
        continuation?.resume()
    }
}

/// The instance's live readers by account: wakes them after commits (`HubSignals`, and notifications from other
/// instances), and keeps the bounds of reference section 13: at most `maximumPerAccount` streams per account (the
/// oldest is `replaced`) and `maximumStreams` on the instance. Long-polls are waiters too, not counted as streams.
final class ChangeHub: Sendable {
    let maximumStreams: Int
    let maximumPerAccount: Int

    private struct State {
        var waiters: [String: [UInt64: FeedWaiter]] = [:]
        /// Readers of other accounts' writes, by the writing account: collections it shares with their groups.
        var watchers: [String: [UInt64: FeedWaiter]] = [:]
        var watched: [UInt64: [String]] = [:]
        /// Each account's streams, oldest first.
        var streams: [String: [FeedWaiter]] = [:]
        var streamCount = 0
        var nextID: UInt64 = 0
        var shuttingDown = false
    }

    private let state = Mutex(State())

    init(maximumStreams: Int, maximumPerAccount: Int) {
        self.maximumStreams = maximumStreams
        self.maximumPerAccount = maximumPerAccount
    }

    enum Refusal: Error {
        /// `maximumStreams` are open: `503 SERVICE_UNAVAILABLE` with `Retry-After`.
        case full
        /// The instance is stopping.
        case shuttingDown
    }

    var openStreams: Int { state.withLock { $0.streamCount } }

    /// A waiter for the account's feed; a stream also counts against the bounds, and may replace the account's oldest.
    func register(userID: String, stream: Bool) throws(Refusal) -> FeedWaiter {
        let (waiter, replaced) = try state.withLock { state throws(Refusal) -> (FeedWaiter, FeedWaiter?) in
            guard !state.shuttingDown else { throw .shuttingDown }
            if stream, state.streamCount >= maximumStreams { throw .full }
            state.nextID += 1
            let waiter = FeedWaiter(userID: userID, id: state.nextID)
            state.waiters[userID, default: [:]][waiter.id] = waiter
            var replaced: FeedWaiter?
            if stream {
                state.streams[userID, default: []].append(waiter)
                state.streamCount += 1
                if state.streams[userID]!.count > maximumPerAccount {
                    replaced = state.streams[userID]!.removeFirst()
                    state.streamCount -= 1
                }
            }
            return (waiter, replaced)
        }
        replaced?.end(.replaced)
        return waiter
    }

    /// Wakes `waiter` also after writes of `accounts` (members sharing a collection with the reader's groups); replaces
    /// what it watched before.
    func watch(_ waiter: FeedWaiter, accounts: [String]) {
        state.withLock { state in
            Self.unwatch(waiter, &state)
            guard !accounts.isEmpty else { return }
            state.watched[waiter.id] = accounts
            for account in accounts { state.watchers[account, default: [:]][waiter.id] = waiter }
        }
    }

    private static func unwatch(_ waiter: FeedWaiter, _ state: inout State) {
        for account in state.watched.removeValue(forKey: waiter.id) ?? [] {
            state.watchers[account]?[waiter.id] = nil
            if state.watchers[account]?.isEmpty == true { state.watchers[account] = nil }
        }
    }

    func unregister(_ waiter: FeedWaiter) {
        waiter.close()
        state.withLock { state in
            Self.unwatch(waiter, &state)
            state.waiters[waiter.userID]?[waiter.id] = nil
            if state.waiters[waiter.userID]?.isEmpty == true { state.waiters[waiter.userID] = nil }
            if let index = state.streams[waiter.userID]?.firstIndex(where: { $0 === waiter }) {
                state.streams[waiter.userID]!.remove(at: index)
                state.streamCount -= 1
                if state.streams[waiter.userID]!.isEmpty { state.streams[waiter.userID] = nil }
            }
        }
    }

    /// Wakes the accounts' readers; `nil` wakes every reader (a notification listener that reconnected, and may
    /// have missed some).
    /// `written`: the committed changes themselves, when they are one account's and the writer has them.
    /// Watchers of the accounts are woken without the changes: what they read of them is a shared collection,
    /// in a place of its own.
    func wake(_ userIDs: [String]?, records: Bool, access: Bool, written: [FeedChange] = []) {
        let (woken, watching) = state.withLock { state -> ([FeedWaiter], [FeedWaiter]) in
            guard let userIDs else { return (state.waiters.values.flatMap(\.values), []) }
            return (userIDs.flatMap { state.waiters[$0].map { Array($0.values) } ?? [] },
                    userIDs.flatMap { state.watchers[$0].map { Array($0.values) } ?? [] })
        }
        for waiter in woken { waiter.wake(records: records, access: access, written: written) }
        for waiter in watching { waiter.wake(records: records, access: access) }
    }

    /// Ends every stream with `shutdown` and refuses new ones: graceful shutdown does not wait on open streams.
    func shutDown() {
        let all = state.withLock { state -> [FeedWaiter] in
            state.shuttingDown = true
            return state.waiters.values.flatMap(\.values)
        }
        for waiter in all { waiter.end(.shutdown) }
    }
}

extension TimeAmount {
    /// `duration` for NIO's timers, to the nanosecond.
    init(_ duration: Duration) {
        self = .nanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
