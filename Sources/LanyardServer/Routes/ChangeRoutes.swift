import Foundation
import HTTPTypes
import Hummingbird
import LanyardCore

/// `GET /v1/changes` (a page of the account's feed, long-polled with `wait`) and `GET /v1/changes/stream` (the same
/// feed as Server-Sent Events): reference section 13.
struct ChangeRoutes {
    let api: APIContext
    let hub: ChangeHub
    let stalls: StreamStalls
    let settings: StreamSettings
    static let maximumWait = 30

    func register(on router: Router<LanyardRequestContext>) {
        let changes = router.group("v1/changes").add(middleware: BearerAuthentication(api, .required))
        changes.get(use: page)
        changes.get("stream", use: stream)
    }

    /// A request that may be held open (a long-poll): timed by nobody, counted as any.
    static func isLongPoll(_ request: Request) -> Bool {
        request.uri.path == "/v1/changes" && request.uri.queryParameters["wait"].map { $0 != "0" } == true
    }

    @Sendable func page(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let query = request.uri.queryParameters
        let since = query["since"].map(String.init)
        let cursor = since == ChangeFeed.now ? try await ChangeFeed(api.dependencies).end(userID: caller.userID)
                                             : try ChangeFeed.cursor(since)
        let limit = try ChangeFeed.pageSize(try Self.integer(query["limit"].map(String.init), field: "limit"))
        let wait = try Self.integer(query["wait"].map(String.init), field: "wait") ?? 0
        guard (0...Self.maximumWait).contains(wait) else {
            throw LanyardError.invalidRequest(field: "wait", "wait must be from 0 to \(Self.maximumWait) seconds")
        }
        let feed = ChangeFeed(api.dependencies)
        // Registered before the first read, so a change committed between the read and the wait still wakes it. A
        // long-poll counts against the stream limits like a stream: it holds as much.
        let waiter: FeedWaiter?
        do {
            waiter = wait > 0 ? try hub.register(userID: caller.userID, stream: true) : nil
        } catch {
            throw LanyardError(.serviceUnavailable, "This server holds as many streams as it may; try again shortly",
                               retryAfter: 5)
        }
        defer { waiter.map(hub.unregister) }
        let sources = try await feed.sources(userID: caller.userID)
        if let waiter { hub.watch(waiter, accounts: sources.sharingAccounts) }
        var page = try await feed.page(userID: caller.userID, after: cursor, limit: limit, sources: sources)
        if let waiter, page.entries.isEmpty, page.removedGroups.isEmpty {
            let deadline = ContinuousClock.now + .seconds(wait)
            while page.entries.isEmpty, page.removedGroups.isEmpty, ContinuousClock.now < deadline {
                await waiter.wait(timeout: deadline - ContinuousClock.now, on: context.channel.eventLoop)
                let wake = waiter.take()
                if wake.end != nil { break }
                if wake.accessChanged, try await FeedAccess.check(userID: caller.userID, sessionID: caller.sessionID,
                                                                  api.dependencies) != .open {
                    throw LanyardError.sessionEnded
                }
                if wake.recordsChanged || wake.accessChanged || ContinuousClock.now >= deadline {
                    // An access change may be a group joined or left: the sources are read again.
                    page = try await feed.page(userID: caller.userID, after: cursor, limit: limit)
                }
            }
        }
        return JSONResponse.make(page)
    }

    @Sendable func stream(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        // `Last-Event-ID` (a reconnecting EventSource) wins over `since`; neither: from the beginning.
        let text = request.headers[.lastEventID] ?? request.uri.queryParameters["since"].map(String.init)
        let start = if text == ChangeFeed.now { try await ChangeFeed(api.dependencies).end(userID: caller.userID) }
                    else if text?.isEmpty ?? true { FeedCursor.start } else { FeedCursor(text!) }
        let waiter: FeedWaiter
        do {
            waiter = try hub.register(userID: caller.userID, stream: true)
        } catch {
            throw LanyardError(.serviceUnavailable, "This server holds as many streams as it may; try again shortly",
                               retryAfter: 5)
        }
        let stream = ChangeStream(caller: caller, waiter: waiter, hub: hub, stalls: stalls, dependencies: api.dependencies, settings: settings,
                                  metrics: api.metrics, channel: context.channel, start: start)
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store, no-transform",
                                   .xAccelBuffering: "no"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in try await stream.run(&writer) })
    }

    static func integer(_ text: String?, field: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text) else { throw LanyardError.invalidRequest(field: field, "\(field) must be a whole number") }
        return value
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
    static let xAccelBuffering = Self("X-Accel-Buffering")!
}
