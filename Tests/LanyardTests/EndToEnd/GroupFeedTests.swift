import Foundation
import Testing

/// Group records and shared collections in the change feed (reference sections 13 and 14), end to end on both
/// databases: joining brings a group's records in from their beginning; removal says `group_removed` and nothing
/// of the group follows.
@Suite struct GroupFeedTests {
    static func changes(_ server: TestServer, _ session: Session, since: String?) async throws -> TestResponse {
        let answer = try await server.get("/v1/changes" + (since.map { "?since=\($0)" } ?? ""), bearer: session.accessToken)
        #expect(answer.status == 200, "\(answer.text)")
        return answer
    }

    static func labels(_ answer: TestResponse) -> [String] {
        (answer.json["changes"] as? [[String: Any]] ?? []).map { change in
            let scope = (change["shared_by"] as? String).map { "shared:" + ($0 == "" ? "?" : "m") }
                ?? ((change["group_id"] as? String) != nil ? "group" : "mine")
            return "\(scope) \(change["collection"] as? String ?? "")/\(change["id"] as? String ?? "")"
        }
    }

    @Test(arguments: TestDatabase.available)
    func theFeedCarriesGroupsFromTheirBeginningAndDropsThemOnRemoval(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let parent = try await server.signIn(.apple, sub: "feed-parent")
            let groupID = try await GroupTests.family(server, parent)
            for item in ["milk", "eggs"] {
                _ = try await server.request(.PUT, "/v1/groups/\(groupID)/data/shopping/\(item)", json: ["data": ["n": 1]],
                                             bearer: parent.accessToken)
            }
            let child = try await server.signIn(.google, sub: "feed-child")
            try await ChangeFeedTests.put(server, child, "notes", "mine", ["t": 1])
            var answer = try await Self.changes(server, child, since: nil)
            #expect(Self.labels(answer) == ["mine notes/mine"])
            var cursor = try #require(answer.json["next_cursor"] as? String)

            // Joining: the group's records from their beginning, after the cursor the app already had.
            server.clock.advance(by: 1)
            #expect(try await GroupTests.join(server, try await GroupTests.invite(server, groupID, by: parent), child).status == 200)
            answer = try await Self.changes(server, child, since: cursor)
            #expect(Self.labels(answer) == ["group shopping/milk", "group shopping/eggs"])
            let first = try #require((answer.json["changes"] as? [[String: Any]])?.first)
            #expect(first["group_id"] as? String == groupID && first["created_by"] as? String == parent.userID)
            cursor = try #require(answer.json["next_cursor"] as? String)
            #expect(cursor.contains(groupID))

            // Both write; each sees the other's group write and its own, once.
            server.clock.advance(by: 1)
            _ = try await server.request(.PUT, "/v1/groups/\(groupID)/data/shopping/bread", json: ["data": [:]],
                                         bearer: child.accessToken)
            server.clock.advance(by: 1)
            try await ChangeFeedTests.put(server, child, "places", "home", ["city": "Lyon"])
            #expect(try await server.request(.PUT, "/v1/groups/\(groupID)/shares/places", bearer: child.accessToken).status == 200)
            answer = try await Self.changes(server, child, since: cursor)
            #expect(Self.labels(answer) == ["group shopping/bread", "mine places/home"])
            cursor = try #require(answer.json["next_cursor"] as? String)
            let parentFeed = try await Self.changes(server, parent, since: nil)
            #expect(Self.labels(parentFeed) == ["group shopping/milk", "group shopping/eggs", "group shopping/bread",
                                                "shared:m places/home"])
            let shared = try #require((parentFeed.json["changes"] as? [[String: Any]])?.last)
            #expect(shared["shared_by"] as? String == child.userID && shared["group_id"] as? String == groupID)

            // Removed: the next read names the group as removed, the cursor forgets it, nothing of it follows.
            #expect(try await server.delete("/v1/groups/\(groupID)/members/\(child.userID)", bearer: parent.accessToken).status == 204)
            _ = try await server.request(.PUT, "/v1/groups/\(groupID)/data/shopping/jam", json: ["data": [:]],
                                         bearer: parent.accessToken)
            answer = try await Self.changes(server, child, since: cursor)
            #expect(answer.json["removed_groups"] as? [String] == [groupID])
            #expect(Self.labels(answer).isEmpty)
            let afterRemoval = try #require(answer.json["next_cursor"] as? String)
            #expect(!afterRemoval.contains(groupID))
            #expect(Self.labels(try await Self.changes(server, child, since: afterRemoval)).isEmpty)
            // A cursor past a group's end was never issued.
            let forged = try await server.get("/v1/changes?since=0~g.\(groupID).999", bearer: parent.accessToken)
            #expect(forged.status == 400 && forged.errorReason == "resync_required")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aStreamShowsGroupChangesLiveAndEndsTheGroupWithGroupRemoved(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: ChangeFeedTests.quick) { server in
            let parent = try await server.signIn(.apple, sub: "live-parent")
            let groupID = try await GroupTests.family(server, parent)
            _ = try await server.request(.PUT, "/v1/groups/\(groupID)/data/shopping/milk", json: ["data": ["n": 1]],
                                         bearer: parent.accessToken)
            let child = try await server.signIn(.google, sub: "live-child")
            let stream = try await ChangeFeedTests.stream(server, child)
            defer { stream.close() }
            #expect(try await stream.events(until: "ready").map(\.name) == ["ready"])

            // Joining while streaming brings the group's existing records at once, then its live changes.
            #expect(try await GroupTests.join(server, try await GroupTests.invite(server, groupID, by: parent), child).status == 200)
            let joined = try #require(try await stream.next())
            #expect(joined.name == "change" && joined.json["id"] as? String == "milk" && joined.json["group_id"] as? String == groupID)
            _ = try await server.request(.PUT, "/v1/groups/\(groupID)/data/shopping/eggs", json: ["data": [:]],
                                         bearer: parent.accessToken)
            let live = try #require(try await stream.next())
            #expect(live.json["id"] as? String == "eggs" && live.id?.contains(groupID) == true)
            // A collection the parent shares: the child's stream sees the parent's writes to it, live.
            #expect(try await server.request(.PUT, "/v1/groups/\(groupID)/shares/places", bearer: parent.accessToken).status == 200)
            try await ChangeFeedTests.put(server, parent, "places", "office", ["city": "Nantes"])
            let sharedChange = try #require(try await stream.next())
            #expect(sharedChange.json["shared_by"] as? String == parent.userID && sharedChange.json["id"] as? String == "office")

            // Removed: `group_removed`, then nothing of the group; the child's own changes still come.
            #expect(try await server.delete("/v1/groups/\(groupID)/members/\(child.userID)", bearer: parent.accessToken).status == 204)
            let removed = try #require(try await stream.next())
            #expect(removed.name == "group_removed" && removed.json["group_id"] as? String == groupID)
            #expect(removed.id?.contains(groupID) == false)
            _ = try await server.request(.PUT, "/v1/groups/\(groupID)/data/shopping/jam", json: ["data": [:]],
                                         bearer: parent.accessToken)
            try await ChangeFeedTests.put(server, parent, "places", "cafe", ["city": "Paris"])
            try await ChangeFeedTests.put(server, child, "notes", "after", ["t": 1])
            let next = try #require(try await stream.next())
            #expect(next.name == "change" && next.json["id"] as? String == "after" && next.json["group_id"] is NSNull)

            // Reconnecting with a cursor from before the removal: `group_removed` first.
            let stale = try #require(live.id)
            let again = try await ChangeFeedTests.stream(server, child, since: stale)
            defer { again.close() }
            let events = try await again.events(until: "ready")
            #expect(events.first?.name == "group_removed")
            #expect(events.filter { $0.name == "change" }.map { $0.json["id"] as? String } == ["after"])
        }
    }
}
