import Foundation
import LanyardSupport
import Testing

/// Shared data as an attacker inside a group tries it (reference sections 13 and 14): a viewer reading an admins'
/// collection through the feed, invites that outlive their maker's role, oversized names, a viewer inheriting a
/// group. Each request here is one that must fail, on both databases.
@Suite struct GroupAttackTests {
    static func configure(_ configuration: inout LanyardConfiguration) {
        configuration.adminKey = AdminTests.key
        configuration.streamHeartbeat = 0.3
    }

    static func put(_ server: TestServer, _ groupID: String, _ collection: String, _ id: String, by session: Session) async throws {
        let answer = try await server.request(.PUT, "/v1/groups/\(groupID)/data/\(collection)/\(id)", json: ["data": ["v": id]],
                                              bearer: session.accessToken)
        #expect(answer.status == 200, "\(answer.text)")
    }

    static func policy(_ server: TestServer, _ groupID: String, _ collection: String, read: String,
                       by owner: Session) async throws {
        let answer = try await server.request(.PUT, "/v1/groups/\(groupID)/policies/\(collection)", json: ["read": read],
                                              bearer: owner.accessToken)
        #expect(answer.status == 200, "\(answer.text)")
    }

    /// A family with its owner and a viewer.
    static func familyWithViewer(_ server: TestServer, _ tag: String) async throws -> (String, Session, Session) {
        let owner = try await server.signIn(.apple, sub: "owner-\(tag)")
        let groupID = try await GroupTests.family(server, owner)
        let viewer = try await server.signIn(.google, sub: "viewer-\(tag)")
        let code = try await GroupTests.invite(server, groupID, by: owner, ["role": "viewer"])
        #expect(try await GroupTests.join(server, code, viewer).status == 200)
        return (groupID, owner, viewer)
    }

    @Test(arguments: TestDatabase.available)
    func theFeedNeverCarriesWhatAMemberMayNotRead(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let (groupID, owner, viewer) = try await Self.familyWithViewer(server, "feed")
            try await Self.policy(server, groupID, "secrets", read: "admin", by: owner)
            try await Self.put(server, groupID, "secrets", "code1", by: owner)
            try await Self.put(server, groupID, "shopping", "milk", by: owner)
            #expect(try await server.get("/v1/groups/\(groupID)/data/secrets/code1", bearer: viewer.accessToken).errorCode
                    == "INSUFFICIENT_ROLE")

            // Polled: the page holds shopping, never secrets.
            let page = try await GroupFeedTests.changes(server, viewer, since: nil)
            #expect(GroupFeedTests.labels(page) == ["group shopping/milk"])
            #expect(!page.text.contains("code1") && !page.text.contains("secrets"))

            // Streamed: not in the catch-up, not live; what the viewer may read arrives.
            let stream = try await ChangeFeedTests.stream(server, viewer)
            let catchUp = try await stream.events(until: "ready")
            #expect(catchUp.compactMap { $0.json["id"] as? String } == ["milk"])
            try await Self.put(server, groupID, "secrets", "code2", by: owner)
            try await Self.put(server, groupID, "shopping", "eggs", by: owner)
            let live = try #require(try await stream.next())
            #expect(live.json["id"] as? String == "eggs", "\(live.data)")

            // Read access taken away, by a policy: access_removed, and nothing of the collection after it.
            try await Self.policy(server, groupID, "shopping", read: "member", by: owner)
            let removed = try #require(try await stream.next())
            #expect(removed.name == "access_removed")
            #expect(removed.json["group_id"] as? String == groupID && removed.json["collection"] as? String == "shopping")
            try await Self.put(server, groupID, "shopping", "bread", by: owner)
            try await Self.put(server, groupID, "notes", "open", by: owner)
            let next = try #require(try await stream.next())
            #expect(next.json["id"] as? String == "open", "\(next.name) \(next.data)")
            stream.close()
            #expect(!(try await GroupFeedTests.changes(server, viewer, since: nil)).text.contains("bread"))
        }
    }

    @Test(arguments: TestDatabase.available)
    func aDemotionTakesAwayWhatTheRoleReadAtOnce(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let owner = try await server.signIn(.apple, sub: "demote-owner")
            let groupID = try await GroupTests.family(server, owner)
            let member = try await server.signIn(.google, sub: "demote-member")
            #expect(try await GroupTests.join(server, try await GroupTests.invite(server, groupID, by: owner), member).status == 200)
            try await Self.policy(server, groupID, "budget", read: "member", by: owner)
            try await Self.put(server, groupID, "budget", "rent", by: owner)
            let stream = try await ChangeFeedTests.stream(server, member)
            #expect(try await stream.events(until: "ready").compactMap { $0.json["id"] as? String } == ["rent"])

            let demoted = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/\(member.userID)",
                                                   json: ["role": "viewer"], bearer: owner.accessToken)
            #expect(demoted.status == 200, "\(demoted.text)")
            let removed = try #require(try await stream.next())
            #expect(removed.name == "access_removed" && removed.json["collection"] as? String == "budget", "\(removed.data)")
            try await Self.put(server, groupID, "budget", "food", by: owner)
            try await Self.put(server, groupID, "chores", "dishes", by: owner)
            #expect(try await stream.next()?.json["id"] as? String == "dishes")
            stream.close()
        }
    }

    @Test(arguments: TestDatabase.available)
    func anInviteGrantsNoMoreThanItsMakerStillMay(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let owner = try await server.signIn(.apple, sub: "inv-owner")
            let groupID = try await GroupTests.family(server, owner)
            let admin = try await server.signIn(.google, sub: "inv-admin")
            #expect(try await GroupTests.join(server, try await GroupTests.invite(server, groupID, by: owner, ["role": "admin"]),
                                              admin).status == 200)
            // The admin stashes an admin invite, then is demoted to member: the invite grants member, no more.
            let stashed = try await GroupTests.invite(server, groupID, by: admin, ["role": "admin", "max_uses": 5])
            _ = try await server.request(.PATCH, "/v1/groups/\(groupID)", json: ["members_can_invite": true], bearer: owner.accessToken)
            _ = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/\(admin.userID)", json: ["role": "member"],
                                         bearer: owner.accessToken)
            let newcomer = try await server.signIn(.google, sub: "inv-newcomer")
            let joined = try await GroupTests.join(server, stashed, newcomer)
            #expect(joined.status == 200 && joined.json["role"] as? String == "member", "\(joined.text)")

            // Removed, the maker's pending invites die with their membership: no way back in as admin.
            let another = try await GroupTests.invite(server, groupID, by: admin, ["role": "member", "max_uses": 5])
            #expect(try await server.delete("/v1/groups/\(groupID)/members/\(admin.userID)", bearer: owner.accessToken).status == 204)
            for code in [stashed, another] {
                let back = try await GroupTests.join(server, code, admin)
                #expect(back.status == 410 && back.errorReason == "revoked", "\(back.text)")
            }
            let late = try await server.signIn(.apple, sub: "inv-late")
            #expect(try await GroupTests.join(server, another, late).errorReason == "revoked")
            #expect(try await GroupTests.roles(server, groupID, as: owner)[admin.userID] == nil)
            let audit = try await server.get("/v1/admin/audit?user_id=\(admin.userID)&type=group.invite_revoked", bearer: AdminTests.key)
            #expect((audit.json["events"] as? [Any])?.count == 2, "\(audit.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func namesAreCappedInBytesAndViewersNeverInheritAGroup(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let owner = try await server.signIn(.apple, sub: "names-owner")
            // Ten characters, each a letter under 6,000 combining marks: 60 KB.
            let heavy = String(repeating: "a" + String(repeating: "\u{0301}", count: 3000), count: 10)
            let refused = try await server.post("/v1/groups", ["name": heavy], bearer: owner.accessToken)
            #expect(refused.status == 400 && refused.errorCode == "INVALID_REQUEST", "\(refused.status)")
            #expect((try await server.get("/v1/groups", bearer: owner.accessToken).json["groups"] as? [Any])?.isEmpty == true)

            let (groupID, familyOwner, viewer) = try await Self.familyWithViewer(server, "inherit")
            #expect(try await server.request(.PATCH, "/v1/groups/\(groupID)", json: ["name": heavy], bearer: familyOwner.accessToken)
                .status == 400)
            // The owner goes; only a viewer is left: the group dissolves rather than make the viewer its owner.
            let fresh = try await server.signIn(.apple, sub: "owner-inherit")
            #expect(try await server.delete("/v1/users/me", bearer: fresh.accessToken).status == 204)
            #expect(try await server.get("/v1/groups/\(groupID)", bearer: viewer.accessToken).status == 404)
            #expect((try await server.get("/v1/groups", bearer: viewer.accessToken).json["groups"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(arguments: TestDatabase.available)
    func everyChangeToAGroupIsAuditedWithItsActor(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let owner = try await server.signIn(.apple, sub: "audit-owner")
            let groupID = try await GroupTests.family(server, owner)
            let invite = try await server.post("/v1/groups/\(groupID)/invites", [:], bearer: owner.accessToken)
            let inviteID = try #require(invite.json["id"] as? String)
            #expect(try await server.delete("/v1/groups/\(groupID)/invites/\(inviteID)", bearer: owner.accessToken).status == 204)
            try await Self.policy(server, groupID, "secrets", read: "admin", by: owner)
            try await ChangeFeedTests.put(server, owner, "places", "home", ["c": "x"])
            #expect(try await server.request(.PUT, "/v1/groups/\(groupID)/shares/places", bearer: owner.accessToken).status == 200)
            #expect(try await server.delete("/v1/groups/\(groupID)/shares/places", bearer: owner.accessToken).status == 204)
            _ = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/me", json: ["share_email": true],
                                         bearer: owner.accessToken)
            _ = try await server.request(.PATCH, "/v1/groups/\(groupID)", json: ["name": "Renamed", "members_can_invite": false],
                                         bearer: owner.accessToken)
            let audit = try await server.get("/v1/admin/audit?user_id=\(owner.userID)&limit=100", bearer: AdminTests.key)
            let events = try #require(audit.json["events"] as? [[String: Any]])
            func details(_ type: String) -> [String: Any]? {
                events.first { $0["type"] as? String == type }?["details"] as? [String: Any]
            }
            for type in ["group.invite_created", "group.invite_revoked", "group.policy_set", "group.collection_shared",
                         "group.collection_unshared", "group.member_updated", "group.updated"] {
                #expect(details(type)?["actor"] as? String == owner.userID, "\(type): \(audit.text)")
                #expect(details(type)?["group_id"] as? String == groupID, "\(type)")
            }
            #expect(details("group.updated")?["changed"] as? String == "name", "members_can_invite was already false")
            #expect(details("group.policy_set")?["read"] as? String == "admin")
        }
    }

    /// A long-poll holds as much as a stream: it counts against `LANYARD_STREAM_MAX`.
    @Test(arguments: TestDatabase.available)
    func longPollsCountAgainstTheStreamLimit(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.streamMax = 1 }) { server in
            let session = try await server.signIn(.apple, sub: "poll-limit")
            let stream = try await ChangeFeedTests.stream(server, session)
            _ = try await stream.events(until: "ready")
            let poll = try await server.get("/v1/changes?wait=5", bearer: session.accessToken)
            #expect(poll.status == 503 && poll.errorCode == "SERVICE_UNAVAILABLE", "\(poll.text)")
            stream.close()
        }
    }
}
