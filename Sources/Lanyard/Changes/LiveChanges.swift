import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension LanyardClient {
    /// The account's changes, across its collections and groups, first those since `cursor` and then live as other
    /// devices make them. Reconnects by itself (with growing, jittered pauses) after a dropped connection or a
    /// restarting server, refreshes the session when the server says its token expired, and resumes after the last
    /// change it delivered, so nothing is lost and nothing comes twice.
    ///
    /// Without `cursor` it joins the client's one live connection (shared with every collection's `changes()`),
    /// which resumes from the place kept in the client's storage for this account (the beginning the first time on a
    /// device). With a `cursor` it reads from there on a connection of its own, and keeps no place.
    ///
    /// ```swift
    /// let changes = client.changes()
    /// for try await change in changes {
    ///     apply(change)                  // catching up first, then live
    ///     if changes.isLive { hideSpinner() }
    /// }
    /// ```
    ///
    /// - Returns: the changes; iterating ends (nil) when another stream of the account replaced this one, and
    ///   throws when the session is over (`.invalidRefreshToken`, `.accountDisabled`, …: the client signed out).
    public nonisolated func changes(since cursor: String? = nil) -> LiveChanges {
        LiveChanges(client: self, source: cursor.map { .own(since: $0) } ?? .shared)
    }
}

/// The live feed of `LanyardClient.changes(since:)`: an `AsyncSequence` of `LiveChange` with `isLive`.
///
/// ```swift
/// for try await change in client.changes() { print(change.collection, change.id, change.isDeleted) }
/// ```
public struct LiveChanges: AsyncSequence, Sendable {
    public typealias Element = LiveChange

    /// The client's shared connection, or one of its own from a cursor.
    enum Source: Sendable {
        case shared
        case own(since: String)
    }

    let client: LanyardClient
    let source: Source
    private let state = LiveState()

    init(client: LanyardClient, source: Source) {
        self.client = client
        self.source = source
    }

    /// Whether the feed has caught up and is delivering changes as they happen; false while catching up and while
    /// reconnecting.
    ///
    /// ```swift
    /// statusLabel.text = changes.isLive ? "Up to date" : "Syncing…"
    /// ```
    public var isLive: Bool {
        switch source {
        case .shared: client.liveFeed.isLive
        case .own: state.isLive
        }
    }

    public func makeAsyncIterator() -> Iterator {
        switch source {
        case .shared: Iterator(shared: client.liveFeed.watch(wholeFeed: true) { _ in true }.makeAsyncIterator())
        case .own(let since): Iterator(own: FeedReader(client: client, since: since, persistsCursor: false, live: state))
        }
    }

    /// Reads the shared connection's changes, or a connection of its own.
    public struct Iterator: AsyncIteratorProtocol {
        private var shared: AsyncThrowingStream<LiveChange, any Error>.AsyncIterator?
        private var own: FeedReader?

        init(shared: AsyncThrowingStream<LiveChange, any Error>.AsyncIterator) {
            self.shared = shared
        }

        init(own: FeedReader) {
            self.own = own
        }

        public mutating func next() async throws -> LiveChange? {
            if shared != nil { return try await shared?.next() }
            do {
                let change = try await own?.next()
                if change == nil { own?.close() }
                return change
            } catch {
                own?.close()
                throw error
            }
        }
    }
}

/// Reads `GET /v1/changes/stream` for one consumer, reconnecting as needed: the loop behind the shared connection
/// (`LiveFeed`) and behind `changes(since:)` from a cursor.
struct FeedReader {
    let client: LanyardClient
    /// Whether the place reached is kept in the client's storage (the shared connection's, per account).
    let persistsCursor: Bool
    let live: LiveState
    private let since: String?
    private var connection: EventSourceConnection?
    private var events: AsyncThrowingStream<ServerSentEvent, any Error>.Iterator?
    private var cursor: String?
    private var account: User.ID?
    private var started = false
    private var bearer: String?
    private var failures = 0
    private var refusedOnce = false
    private var finished = false

    init(client: LanyardClient, since: String?, persistsCursor: Bool, live: LiveState) {
        (self.client, self.since, self.persistsCursor, self.live) = (client, since, persistsCursor, live)
        cursor = since
    }

    /// The next change, or nil when another stream of the account replaced this one.
    mutating func next() async throws -> LiveChange? {
        while !finished {
            try Task.checkCancellation()
            do {
                if events == nil { try await connect() }
                guard let event = try await events?.next() else {
                    // Closed without an `end`: the connection dropped.
                    try await reconnectAfterPause()
                    continue
                }
                if let change = try await handle(event) { return change }
            } catch let error as LanyardError {
                disconnect()
                try await recover(from: error)
            }
        }
        return nil
    }

    mutating func close() {
        disconnect()
    }

    /// A change to deliver, or nil when the event was about the stream itself.
    private mutating func handle(_ event: ServerSentEvent) async throws -> LiveChange? {
        switch StreamEventName(rawValue: event.name) {
        case .change:
            guard let change = LiveChange(event: event) else { return nil }
            remember(change.cursor)
            (failures, refusedOnce) = (0, false)
            return change
        case .groupRemoved, .shareRemoved, .accessRemoved:
            guard let removal = LiveChange(removal: event) else { return nil }
            remember(removal.cursor)
            return removal
        case .ready:
            // The caught-up place: a connection that drops before any change resumes here, not where it began
            // (`since=now` for collections alone would skip what was committed in between).
            if let ready = Self.decode(StreamReady.self, event) { remember(ready.cursor) }
            live.isLive = true
            (failures, refusedOnce) = (0, false)
        case .tokenExpiring:
            _ = try? await client.accessToken()
        case .end:
            disconnect()
            try await ended(reason: Self.decode(StreamEnded.self, event)?.reason)
        case nil:
            break
        }
        return nil
    }

    static func decode<Event: Decodable>(_ type: Event.Type, _ event: ServerSentEvent) -> Event? {
        try? WireCoding.decoder().decode(type, from: Data(event.data.utf8))
    }

    /// What each `end` reason asks of the client (nil: a reason this SDK does not know, handled as a session's end).
    private mutating func ended(reason: StreamEndReason?) async throws {
        switch reason {
        case .tokenExpired:
            if let bearer { _ = try await client.refreshedSession(replacing: bearer) }
        case .shutdown:
            // The instance is stopping: another answers at once behind a load balancer.
            try await Task.sleep(for: .milliseconds(Int64.random(in: 50...500)))
        case .replaced:
            finished = true
        case .resyncRequired:
            remember(nil)
        case .accountDeleted:
            await client.endSession(ifStillUsing: bearer, because: .accountDeleted)
            throw LanyardError.notSignedIn
        case .accountDisabled:
            await client.endSession(ifStillUsing: bearer, because: .accountDisabled)
            throw LanyardError.accountDisabled
        case .signedOut, .accountMerged, nil:
            // This session is over. A client that holds another one (a guest's device that signed in to the
            // account it merged into) goes on with it; otherwise the refresh tells, and signs the client out when
            // the session ended.
            if let bearer, let current = try? await client.accessToken(), current != bearer { return }
            if let bearer { _ = try await client.refreshedSession(replacing: bearer) }
        }
    }

    private mutating func connect() async throws {
        let token = try await client.accessToken()
        let user = client.user?.id
        if account != user || !started {
            // The shared connection starts where this device left off, else at `since`; one of its own at `since`. A
            // client that now holds another account (a guest merged into it) goes on from that account's own place.
            account = user
            cursor = persistsCursor ? (storedCursor() ?? since) : (started ? nil : since)
            started = true
        }
        var request = URLRequest(url: client.url.appendingPathComponent("v1/changes/stream"))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue(Transport.clientInfo, forHTTPHeaderField: "X-Client-Info")
        if let cursor { request.setValue(cursor, forHTTPHeaderField: "Last-Event-ID") }
        let connection = EventSourceConnection(request: request)
        self.connection = connection
        events = connection.events.makeAsyncIterator()
        bearer = token
    }

    private mutating func disconnect() {
        connection?.cancel()
        connection = nil
        events = nil
        live.isLive = false
    }

    /// Network trouble and a busy or restarting server are waited out; a refused token is refreshed once; the
    /// session's end is thrown.
    private mutating func recover(from error: LanyardError) async throws {
        switch error {
        case .unauthorized where !refusedOnce:
            refusedOnce = true
            if let bearer { _ = try await client.refreshedSession(replacing: bearer) }
        case .network, .serviceUnavailable, .providerUnavailable, .invalidResponse, .server, .rateLimited:
            try await reconnectAfterPause()
        default:
            throw error
        }
    }

    /// Waits 0.25 s, doubling with each failure in a row up to 30 s, each pause between half and all of it.
    private mutating func reconnectAfterPause() async throws {
        disconnect()
        failures += 1
        let ceiling = Swift.min(30, 0.25 * pow(2, Double(Swift.min(failures, 10) - 1)))
        try await Task.sleep(for: .milliseconds(Int64(Double.random(in: ceiling / 2...ceiling) * 1000)))
    }

    private var storageKey: String? {
        guard persistsCursor else { return nil }
        return account.map { "changes.\($0)" }
    }

    private func storedCursor() -> String? {
        guard let storageKey else { return nil }
        return (try? client.storage.data(forKey: storageKey)).flatMap { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    private mutating func remember(_ cursor: String?) {
        self.cursor = cursor
        if let storageKey { try? client.storage.setData(cursor.map { Data($0.utf8) }, forKey: storageKey) }
    }
}

/// `isLive`, shared by the sequence and its iterator.
final class LiveState: Sendable {
    private let live = Mutex(false)

    var isLive: Bool {
        get { live.withLock { $0 } }
        set { live.withLock { $0 = newValue } }
    }
}

extension LanyardClient {
    /// Signs out with `reason` when the held session is still the one whose token was `bearer`.
    func endSession(ifStillUsing bearer: String?, because reason: SignOutReason) {
        guard let session, bearer == nil || session.accessToken == bearer else { return }
        hold(nil, [.signedOut(reason)])
    }
}
