import Foundation
import Testing
import LanyardSupport

/// The account's change feed (reference section 13): `GET /v1/changes`, its long-poll, and the stream, end to end on
/// both databases.
@Suite struct ChangeFeedTests {
    static func put(_ server: TestServer, _ session: Session, _ collection: String, _ id: String,
                    _ data: [String: Any]) async throws {
        let answer = try await server.request(.PUT, "/v1/data/\(collection)/\(id)", json: ["data": data],
                                              bearer: session.accessToken)
        #expect(answer.status == 200, "\(answer.text)")
    }

    static func stream(_ server: TestServer, _ session: Session, since: String? = nil,
                       headers: [String: String] = [:]) async throws -> EventStreamClient {
        try await EventStreamClient(server.baseURL + "/v1/changes/stream" + (since.map { "?since=\($0)" } ?? ""),
                                    bearer: session.accessToken, headers: headers)
    }

    /// Fast idle timing, so tests see heartbeats and expiries in a second or two.
    static func quick(_ configuration: inout LanyardConfiguration) {
        configuration.streamHeartbeat = 0.3
    }

    @Test(arguments: TestDatabase.available)
    func theFeedListsEveryCollectionInCommitOrderAndCollectionCursorsStillWork(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let phone = try await server.signIn(.apple, sub: "feeder")
            try await Self.put(server, phone, "notes", "n1", ["text": "a"])
            try await Self.put(server, phone, "lists", "l1", ["items": []])
            try await Self.put(server, phone, "notes", "n2", ["text": "b"])
            try await Self.put(server, phone, "notes", "n1", ["text": "a2"])
            #expect(try await server.delete("/v1/data/lists/l1", bearer: phone.accessToken).status == 200)

            let all = try await server.get("/v1/changes", bearer: phone.accessToken)
            #expect(all.status == 200)
            let changes = try #require(all.json["changes"] as? [[String: Any]])
            // n1's first version was superseded: each record appears once, at its latest change.
            #expect(changes.map { "\($0["collection"]!)/\($0["id"]!)" } == ["notes/n2", "notes/n1", "lists/l1"])
            #expect(changes.last?["deleted"] as? Bool == true)
            #expect(changes.last?.keys.contains("data") == true)
            #expect(changes[1]["version"] as? Int == 2)
            #expect((changes[1]["data"] as? [String: Any])?["text"] as? String == "a2")
            #expect(changes.allSatisfy { $0["group_id"] is NSNull && $0["shared_by"] is NSNull })
            #expect(all.json["has_more"] as? Bool == false)

            // Paging with limit, then nothing after the end.
            let first = try await server.get("/v1/changes?limit=2", bearer: phone.accessToken)
            #expect(first.json["has_more"] as? Bool == true)
            let cursor = try #require(first.json["next_cursor"] as? String)
            let rest = try await server.get("/v1/changes?since=\(cursor)", bearer: phone.accessToken)
            #expect((rest.json["changes"] as? [[String: Any]])?.map { $0["id"] as? String } == ["l1"])
            let end = try #require(rest.json["next_cursor"] as? String)
            let after = try await server.get("/v1/changes?since=\(end)", bearer: phone.accessToken)
            #expect((after.json["changes"] as? [Any])?.isEmpty == true)
            #expect(after.json["next_cursor"] as? String == end)

            // The per-collection cursor is untouched.
            let notes = try await server.get("/v1/data/notes?since=0", bearer: phone.accessToken)
            #expect((notes.json["records"] as? [[String: Any]])?.map { $0["id"] as? String } == ["n2", "n1"])

            // Another account's feed is its own.
            let stranger = try await server.signIn(.google, sub: "not-feeder")
            #expect((try await server.get("/v1/changes", bearer: stranger.accessToken).json["changes"] as? [Any])?.isEmpty == true)

            // Cursors this feed never issued.
            for bad in ["abc", "-1", "99999"] {
                let refused = try await server.get("/v1/changes?since=\(bad)", bearer: phone.accessToken)
                #expect(refused.status == 400, "\(bad)")
                #expect(refused.errorReason == "resync_required", "\(bad)")
            }
            #expect(try await server.get("/v1/changes?limit=501", bearer: phone.accessToken).errorDetails["field"] as? String == "limit")
            #expect(try await server.get("/v1/changes?wait=31", bearer: phone.accessToken).errorDetails["field"] as? String == "wait")
            #expect(try await server.get("/v1/changes").status == 401)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aLongPollAnswersWhenAnotherDeviceWritesOrWhenItsWaitEnds(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let phone = try await server.signIn(.apple, sub: "poller")
            let tablet = try await server.signIn(.apple, sub: "poller")
            let start = try #require(try await server.get("/v1/changes", bearer: tablet.accessToken).json["next_cursor"] as? String)
            async let held = server.get("/v1/changes?since=\(start)&wait=30", bearer: tablet.accessToken)
            try await Task.sleep(for: .milliseconds(300))
            let began = ContinuousClock.now
            try await Self.put(server, phone, "notes", "from-phone", ["text": "hi"])
            let answer = try await held
            // Woken by the write, not by the end of its wait: a lost wake-up answers only at 30 s, and nothing else
            // (a starved machine included) takes this long.
            #expect(ContinuousClock.now - began < .seconds(25))
            #expect((answer.json["changes"] as? [[String: Any]])?.map { $0["id"] as? String } == ["from-phone"])

            // Nothing new: the wait ends with nothing and the same cursor.
            let cursor = try #require(answer.json["next_cursor"] as? String)
            let idle = try await server.get("/v1/changes?since=\(cursor)&wait=1", bearer: tablet.accessToken)
            #expect((idle.json["changes"] as? [Any])?.isEmpty == true)
            #expect(idle.json["next_cursor"] as? String == cursor)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aStreamCatchesUpSaysReadyThenDeliversLiveChanges(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.quick) { server in
            let phone = try await server.signIn(.apple, sub: "streamer")
            let tablet = try await server.signIn(.apple, sub: "streamer")
            try await Self.put(server, phone, "notes", "old1", ["n": 1])
            try await Self.put(server, phone, "notes", "old2", ["n": 2])

            let stream = try await Self.stream(server, tablet)
            #expect(stream.status == 200)
            #expect(stream.headers.first(name: "Content-Type") == "text/event-stream")
            #expect(stream.headers.first(name: "Cache-Control") == "no-store, no-transform")
            #expect(stream.headers.first(name: "X-Accel-Buffering") == "no")
            let catchUp = try await stream.events(until: "ready")
            #expect(catchUp.map(\.name) == ["change", "change", "ready"])
            #expect(catchUp.prefix(2).map { $0.json["id"] as? String } == ["old1", "old2"])
            #expect(catchUp[2].json["cursor"] as? String == catchUp[1].id)

            try await Self.put(server, phone, "notes", "live", ["n": 3])
            let live = try #require(try await stream.next())
            #expect(live.name == "change")
            #expect(live.json["id"] as? String == "live")
            #expect((live.json["data"] as? [String: Any])?["n"] as? Int == 3)
            // Idle: heartbeats (comments), no events. A busy machine may take a while to send the first.
            let deadline = ContinuousClock.now + .seconds(30)
            while !stream.receivedComments.contains("heartbeat"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(stream.receivedComments.contains("heartbeat"))
            #expect(stream.receivedComments.first == "lanyard change stream")

            // Another account's writes never reach it.
            let stranger = try await server.signIn(.google, sub: "stranger-stream")
            try await Self.put(server, stranger, "notes", "theirs", ["n": 0])
            try await Self.put(server, phone, "notes", "mine", ["n": 4])
            #expect(try await stream.next()?.json["id"] as? String == "mine")
            stream.close()

            let metrics = try await server.get("/metrics").text
            #expect(metrics.contains("lanyard_stream_events_total{event=\"change\"}"))
            #expect(metrics.contains("lanyard_streams_open"))
            #expect(metrics.contains("lanyard_stream_commit_to_send_seconds_bucket"))
        }
    }

    /// A few hundred changes while the reader drops and resumes with Last-Event-ID: each exactly once, in order.
    @Test(arguments: TestDatabase.available)
    func resumingAfterDroppedConnectionsLosesAndRepeatsNothing(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.quick) { server in
            let phone = try await server.signIn(.apple, sub: "resumer")
            let tablet = try await server.signIn(.apple, sub: "resumer")
            let total = 300
            let writer = Task {
                for index in 0..<total {
                    try await Self.put(server, phone, "items", "i\(index % 40)", ["n": index])
                }
            }
            var seen: [Int] = []
            var lastID: String?
            var stream = try await Self.stream(server, tablet)
            while seen.last != total - 1 {
                guard let event = try await stream.next() else { break }
                if event.name == "change" {
                    seen.append((event.json["data"] as? [String: Any])?["n"] as? Int ?? -1)
                    lastID = event.id
                }
                // Drop the connection every 37 changes and come back where we were.
                if event.name == "change", seen.count % 37 == 0, let lastID {
                    stream.close()
                    stream = try await Self.stream(server, tablet, headers: ["Last-Event-ID": lastID])
                }
            }
            try await writer.value
            stream.close()
            // Every value of n delivered at most once and in write order; the latest of each record delivered.
            #expect(seen == seen.sorted())
            #expect(Set(seen).count == seen.count)
            #expect(seen.last == total - 1)
            let latest = Set((0..<40).map { id in (0..<total).last { $0 % 40 == id }! })
            #expect(latest.isSubset(of: Set(seen)))
        }
    }

    @Test(arguments: TestDatabase.available)
    func streamsEndWithTheirReason(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            Self.quick(&$0)
            $0.adminKey = AdminTests.key
            $0.streamMaxPerAccount = 2
        }) { server in
            func endOf(_ stream: EventStreamClient) async throws -> [String: Any] {
                let end = try #require(try await stream.events(until: "end").last)
                #expect(try await stream.next() == nil, "the server closes after end")
                return end.json
            }
            // signed_out: the session's sign-out on another device, within 2 s.
            let phone = try await server.signIn(.apple, sub: "ender")
            let tablet = try await server.signIn(.apple, sub: "ender")
            let signedOut = try await Self.stream(server, tablet)
            _ = try await signedOut.events(until: "ready")
            #expect(try await server.post("/v1/auth/signout", ["scope": "others"], bearer: phone.accessToken).status == 204)
            #expect(try await endOf(signedOut)["reason"] as? String == "signed_out")

            // replaced: a third stream of one account ends the oldest.
            let first = try await Self.stream(server, phone)
            _ = try await first.events(until: "ready")
            let second = try await Self.stream(server, phone)
            _ = try await second.events(until: "ready")
            let third = try await Self.stream(server, phone)
            _ = try await third.events(until: "ready")
            #expect(try await endOf(first)["reason"] as? String == "replaced")
            second.close()
            third.close()

            // resync_required: a cursor this feed never issued.
            let bad = try await Self.stream(server, phone, headers: ["Last-Event-ID": "not-a-cursor"])
            #expect(try await endOf(bad)["reason"] as? String == "resync_required")
            let past = try await Self.stream(server, phone, since: "424242")
            #expect(try await endOf(past)["reason"] as? String == "resync_required")

            // token_expiring then token_expired: the access token's exp passes (the server's clock moves).
            let expiring = try await Self.stream(server, phone)
            _ = try await expiring.events(until: "ready")
            server.clock.advance(by: 900 - 30)
            let warning = try await expiring.events(until: "token_expiring")
            #expect((warning.last?.json["expires_in"] as? Int ?? 99) <= 60)
            server.clock.advance(by: 31)
            #expect(try await endOf(expiring)["reason"] as? String == "token_expired")

            // account_disabled by an operator.
            let disabled = try await server.signIn(.google, sub: "disabled-streamer")
            let disabledStream = try await Self.stream(server, disabled)
            _ = try await disabledStream.events(until: "ready")
            let patched = try await server.request(.PATCH, "/v1/admin/users/\(disabled.userID)", json: ["disabled": true],
                                                   bearer: AdminTests.key)
            #expect(patched.status == 200)
            #expect(try await endOf(disabledStream)["reason"] as? String == "account_disabled")

            // account_deleted by its person on another device.
            let leaving = try await server.signIn(.google, sub: "deleted-streamer")
            let leavingStream = try await Self.stream(server, leaving)
            _ = try await leavingStream.events(until: "ready")
            #expect(try await server.delete("/v1/users/me", bearer: leaving.accessToken).status == 204)
            #expect(try await endOf(leavingStream)["reason"] as? String == "account_deleted")

            // account_merged: a guest's stream ends when it is merged, and the account's stream gets its records.
            let owner = try await server.signIn(.google, sub: "merge-owner")
            let ownerStream = try await Self.stream(server, owner)
            _ = try await ownerStream.events(until: "ready")
            let guest = try await server.anonymous()
            try await Self.put(server, guest, "scores", "level9", ["best": 9])
            let guestStream = try await Self.stream(server, guest)
            _ = try await guestStream.events(until: "ready")
            _ = try await server.signIn(.google, sub: "merge-owner", bearer: guest.accessToken)
            let merged = try await endOf(guestStream)
            #expect(merged["reason"] as? String == "account_merged")
            #expect(merged["into"] as? String == owner.userID)
            let moved = try #require(try await ownerStream.next())
            #expect(moved.name == "change")
            #expect(moved.json["id"] as? String == "level9")
            ownerStream.close()
        }
    }

    /// A client that stops reading holds at most a page on the server, and its stream is closed once a write has
    /// waited for it for the stall timeout (30 s in production, 1 s here).
    @Test(arguments: TestDatabase.available)
    func aReaderThatStopsReadingIsClosed(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            Self.quick(&$0)
            $0.streamStallTimeout = 1
        }) { server in
            let phone = try await server.signIn(.apple, sub: "sleepy")
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            let stalled = try StalledReader(port: port, request: "GET /v1/changes/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Bearer \(phone.accessToken)\r\nAccept: text/event-stream\r\n\r\n")
            try await Task.sleep(for: .milliseconds(300))
            let blob = String(repeating: "x", count: 16_000)
            for n in 0..<400 { try await Self.put(server, phone, "blobs", "b\(n % 50)", ["blob": blob, "n": n]) }
            let deadline = ContinuousClock.now + .seconds(20)
            var metrics = ""
            while ContinuousClock.now < deadline {
                metrics = try await server.get("/metrics").text
                if MetricsText.value(in: metrics, #"lanyard_stream_closes_total{reason="disconnected"}"#) == 1 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(MetricsText.value(in: metrics, #"lanyard_stream_closes_total{reason="disconnected"}"#) == 1)
            #expect(metrics.contains("lanyard_streams_open 0"))
            #expect(stalled.serverClosed())
        }
    }

    @Test(arguments: TestDatabase.available)
    func anInvalidBearerGetsJSONAndAFullServerGets503(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.streamMax = 1 }) { server in
            let refused = try await EventStreamClient(server.baseURL + "/v1/changes/stream", bearer: "not-a-token")
            #expect(refused.status == 401)
            #expect(refused.errorBody?.contains("UNAUTHORIZED") == true)
            let session = try await server.signIn(.apple, sub: "crowd")
            let only = try await Self.stream(server, session)
            _ = try await only.events(until: "ready")
            let other = try await server.signIn(.apple, sub: "crowd-2")
            let full = try await Self.stream(server, other)
            #expect(full.status == 503)
            #expect(full.headers.first(name: "Retry-After") != nil)
            #expect(full.errorBody?.contains("SERVICE_UNAVAILABLE") == true)
            only.close()
        }
    }
}
