import Foundation
import Hummingbird
import LanyardCore
import LanyardSupport
import LanyardWire
import NIOCore
import ServiceLifecycle

/// The stream's timing (reference section 13); tests shorten them.
struct StreamSettings: Sendable {
    /// A comment this often while idle (`LANYARD_STREAM_HEARTBEAT`).
    var heartbeat: Duration = .seconds(15)
    /// The feed and the session are read again at least this often, woken or not: a lost wake-up delays, never loses.
    var reread: Duration = .seconds(30)
    /// `token_expiring` this long before the access token's `exp`.
    var expiryWarning: TimeInterval = 60
    /// Changes per read of the feed: what a stream holds for a client that stops reading.
    var pageSize = 100
}

/// One `GET /v1/changes/stream`: a loop with a cursor and a wake-up. It reads the feed after its cursor, writes
/// what it found, says `ready` once caught up, then waits for a wake-up (a commit, an access change, the hub
/// ending it), a heartbeat, the token's expiry or the periodic re-read. It keeps no queue: a page at a time, the
/// next read only after the previous page was written, so a client that stops reading costs one page.
struct ChangeStream: Sendable {
    let caller: Caller
    let waiter: FeedWaiter
    let hub: ChangeHub
    let stalls: StreamStalls
    let dependencies: CoreDependencies
    let settings: StreamSettings
    let metrics: ServerMetrics
    let channel: any Channel
    /// Where the client resumes; `nil` for a cursor this feed never issued (the stream says `resync_required`).
    let start: FeedCursor?

    /// Writes the stream until it ends; the hub forgets the waiter afterwards, whatever happened.
    func run(_ writer: inout any ResponseBodyWriter) async throws {
        metrics.streamOpened()
        // nil: the client went away or stopped reading (`disconnected` in the metrics).
        var ended: StreamEndReason?
        defer {
            hub.unregister(waiter)
            metrics.streamClosed(reason: ended)
        }
        do {
            ended = try await withGracefulShutdownHandler {
                try await loop(&writer)
            } onGracefulShutdown: { [hub] in
                hub.shutDown()
            }
        } catch {
            // The client went away or stopped reading: nothing more can be written to it.
            return
        }
        try await writer.finish(nil)
    }

    private func loop(_ writer: inout any ResponseBodyWriter) async throws -> StreamEndReason {
        let watch = stalls.watch(channel)
        defer { stalls.forget(watch) }
        var output = Output(metrics: metrics, watch: watch)
        output.opening()
        try await output.flush(&writer)
        guard var cursor = start else { return try await close(.resyncRequired, into: nil, &writer, &output) }
        let feed = ChangeFeed(dependencies)
        var sources = try await feed.sources(userID: caller.userID)
        hub.watch(waiter, accounts: sources.sharingAccounts)
        // Groups the account left while the app was away: it drops their records before anything else.
        cursor = Self.dropRemoved(from: cursor, sources: sources, into: &output)
        var live = false
        var warned = false
        var lastAccessCheck = ContinuousClock.now
        var lastRead = ContinuousClock.now
        var lastWrite = ContinuousClock.now
        while true {
            let wake = waiter.take()
            if let end = wake.end { return try await close(end, into: nil, &writer, &output) }
            let now = dependencies.clock.now()
            if now.timeIntervalSince(caller.tokenExpiresAt) > -1 {
                return try await close(.tokenExpired, into: nil, &writer, &output)
            }
            var sourcesChanged = false
            if wake.accessChanged || ContinuousClock.now - lastAccessCheck >= settings.reread {
                lastAccessCheck = ContinuousClock.now
                if let (end, into) = try await accessEnded() {
                    return try await close(end, into: into, &writer, &output)
                }
                let fresh = try await feed.sources(userID: caller.userID)
                if fresh != sources {
                    for removed in fresh.accessRemoved(since: sources) {
                        output.accessRemoved(group: removed.group, collection: removed.collection, cursor: cursor)
                    }
                    (sources, sourcesChanged) = (fresh, true)
                    hub.watch(waiter, accounts: sources.sharingAccounts)
                    cursor = Self.dropRemoved(from: cursor, sources: sources, into: &output)
                }
            }
            let page: FeedPage
            if live, !sourcesChanged, wake.recordsChanged, !wake.uncarried,
               let carried = Self.next(wake.carried, after: cursor, sources: sources) {
                // The wake-up carried exactly what follows the cursor (writes on this instance): no need to read.
                page = FeedPage(entries: carried, nextCursor: carried.last?.cursor ?? cursor, hasMore: false)
            } else if live, !sourcesChanged, !wake.recordsChanged, ContinuousClock.now - lastRead < settings.reread {
                // A heartbeat, a timer or an access change: nothing was written, and the periodic re-read is not due.
                page = FeedPage(entries: [], nextCursor: cursor, hasMore: false)
            } else {
                lastRead = ContinuousClock.now
                do {
                    page = try await feed.page(userID: caller.userID, after: cursor, limit: settings.pageSize,
                                               sources: sources)
                } catch let error as LanyardError where error.details["reason"] == "resync_required" {
                    // A feed that went away under the stream (a guest's, merged into an account) says why, if its
                    // account or session ended, rather than asking for a resync.
                    let (reason, into) = try await accessEnded() ?? (.resyncRequired, nil)
                    return try await close(reason, into: into, &writer, &output)
                }
            }
            for entry in page.entries { output.change(entry, live: live, now: now) }
            cursor = page.nextCursor
            if page.hasMore {
                try await output.flush(&writer)
                lastWrite = ContinuousClock.now
                continue
            }
            if !live {
                live = true
                output.ready(cursor)
            }
            if !warned, caller.tokenExpiresAt.timeIntervalSince(now) <= settings.expiryWarning {
                warned = true
                output.tokenExpiring(in: caller.tokenExpiresAt.timeIntervalSince(now))
            }
            if output.isEmpty, ContinuousClock.now - lastWrite >= settings.heartbeat { output.heartbeat() }
            if !output.isEmpty {
                try await output.flush(&writer)
                lastWrite = ContinuousClock.now
            }
            let due = min(lastRead, lastAccessCheck) + settings.reread
            await waiter.wait(timeout: idleWait(now: dependencies.clock.now(), warned: warned, lastWrite: lastWrite,
                                                rereadDue: due), on: channel.eventLoop)
        }
    }

    /// The cursor without the groups and shared collections the account no longer reads: `group_removed` for each
    /// group (the app drops its records; nothing of it follows), `share_removed` for a collection no longer shared.
    private static func dropRemoved(from cursor: FeedCursor, sources: FeedSources, into output: inout Output) -> FeedCursor {
        var cursor = cursor
        for group in cursor.groups.subtracting(sources.groups).sorted() {
            cursor = cursor.removing(group: group)
            output.groupRemoved(group, cursor: cursor)
        }
        for source in cursor.positions.keys where !sources.contains(source) {
            cursor = cursor.removing(source)
            output.shareRemoved(source, cursor: cursor)
        }
        return cursor
    }

    /// The carried changes after `cursor`, each with the cursor after it, when each follows its source's place
    /// without a gap; `nil` when one is missing or comes from a source this stream does not read yet, so the feed
    /// must be read. Changes at or before the cursor were sent.
    static func next(_ carried: [FeedChange], after cursor: FeedCursor, sources: FeedSources) -> [FeedEntry]? {
        var position = cursor
        var entries: [FeedEntry] = []
        for change in carried.filter({ $0.sequence > cursor[$0.source] }).sorted(by: { $0.sequence < $1.sequence }) {
            guard sources.contains(change.source), change.sequence == position[change.source] + 1 else { return nil }
            position = position.advanced(change.source, to: change.sequence)
            // A collection the account may not read: passed over, never sent.
            if sources.mayRead(change) { entries.append(FeedEntry(change: change, cursor: position)) }
        }
        return entries
    }

    /// Until the next thing due: a heartbeat, the expiry warning, the expiry itself, the periodic re-read.
    private func idleWait(now: Date, warned: Bool, lastWrite: ContinuousClock.Instant,
                          rereadDue: ContinuousClock.Instant) -> Duration {
        let clock = ContinuousClock.now
        var wait = min(settings.heartbeat - (clock - lastWrite), rereadDue - clock)
        let untilExpiry = caller.tokenExpiresAt.timeIntervalSince(now)
        let untilWarning = warned ? untilExpiry : untilExpiry - settings.expiryWarning
        wait = min(wait, .milliseconds(Int64(max(0, untilWarning) * 1000)))
        return max(wait, .milliseconds(10))
    }

    /// Why the stream must end now that its session or account changed (with the survivor of a merge), if it must.
    private func accessEnded() async throws -> (StreamEndReason, String?)? {
        switch try await FeedAccess.check(userID: caller.userID, sessionID: caller.sessionID, dependencies) {
        case .open: nil
        case .sessionEnded: (.signedOut, nil)
        case .accountDisabled: (.accountDisabled, nil)
        case .accountDeleted: (.accountDeleted, nil)
        case .accountMerged(let into): (.accountMerged, into)
        }
    }

    private func close(_ reason: StreamEndReason, into: String?, _ writer: inout any ResponseBodyWriter,
                       _ output: inout Output) async throws -> StreamEndReason {
        output.end(reason, into: into)
        try await output.flush(&writer)
        return reason
    }
}

/// What the stream has to send before its next write, as SSE text (`text/event-stream`).
private struct Output {
    let metrics: ServerMetrics
    /// A write the client has not taken within the stall timeout closes the connection, which fails the write.
    let watch: StreamStalls.Watch
    var buffer = ByteBuffer()

    var isEmpty: Bool { buffer.readableBytes == 0 }

    mutating func opening() {
        buffer.writeString("retry: 2000\n: lanyard change stream\n\n")
    }

    mutating func change(_ entry: FeedEntry, live: Bool, now: Date) {
        let change = entry.change
        buffer.writeString("event: change\nid: \(entry.cursor.text)\ndata: ")
        buffer.writeBytes(JSONWriter.write(change))
        buffer.writeString("\n\n")
        metrics.streamEvent("change")
        // Commit-to-send for changes that arrived live; catching up is not latency.
        if live { metrics.recordStreamLatency(now.timeIntervalSince(change.record.updatedAt)) }
    }

    mutating func ready(_ cursor: FeedCursor) {
        event(.ready, StreamReady(cursor: cursor.text))
    }

    /// The account left the group (or was removed, or the group dissolved): nothing of it follows.
    mutating func groupRemoved(_ group: String, cursor: FeedCursor) {
        event(.groupRemoved, StreamRemoval(groupID: group), id: cursor)
    }

    /// The account may no longer read `collection` of `group` (a policy or its role changed): the app drops those
    /// records; nothing of the collection follows.
    mutating func accessRemoved(group: String, collection: String, cursor: FeedCursor) {
        event(.accessRemoved, StreamRemoval(groupID: group, collection: collection), id: cursor)
    }

    /// A member stopped sharing a collection with one of the account's groups.
    mutating func shareRemoved(_ source: FeedSource, cursor: FeedCursor) {
        guard case .share(let group, let member, let collection) = source else { return }
        event(.shareRemoved, StreamRemoval(groupID: group, collection: collection, sharedBy: member), id: cursor)
    }

    mutating func tokenExpiring(in seconds: TimeInterval) {
        event(.tokenExpiring, StreamTokenExpiring(expiresIn: max(0, Int(seconds))))
    }

    mutating func heartbeat() {
        buffer.writeString(": heartbeat\n\n")
    }

    mutating func end(_ reason: StreamEndReason, into: String?) {
        event(.end, StreamEnded(reason: reason, into: into.map { User.ID($0) }))
    }

    /// A control event: its data is the wire type the SDKs decode (rare, so `JSONEncoder` is no cost).
    private mutating func event(_ name: StreamEventName, _ data: some Encodable, id: FeedCursor? = nil) {
        let json = (try? WireCoding.encoder().encode(data)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        buffer.writeString("event: \(name.rawValue)\n" + (id.map { "id: \($0.text)\n" } ?? "") + "data: \(json)\n\n")
        metrics.streamEvent(name.rawValue)
    }

    mutating func flush(_ writer: inout any ResponseBodyWriter) async throws {
        guard !isEmpty else { return }
        let bytes = buffer
        buffer = ByteBuffer()
        watch.writing()
        defer { watch.written() }
        try await writer.write(bytes)
    }
}
