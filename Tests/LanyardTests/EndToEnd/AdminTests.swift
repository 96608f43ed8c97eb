import Foundation
import LanyardSupport
import NIOHTTP1
import Testing

/// `/v1/admin/*` through HTTP on both databases (reference section 11).
@Suite struct AdminTests {
    static let key = "admin-key-for-tests"
    static func configure(_ configuration: inout LanyardConfiguration) { configuration.adminKey = key }

    func admin(_ server: TestServer, _ method: HTTPMethod, _ path: String, json: [String: Any]? = nil) async throws -> TestResponse {
        try await server.request(method, path, json: json, bearer: Self.key)
    }

    @Test(arguments: TestDatabase.available)
    func searchPagesNewestFirstWithoutSkippingOrRepeating(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            var created: [String] = []
            for index in 0..<13 {
                created.append(try await server.signIn(.google, sub: "g-\(index)", email: "person\(index)@example.com").userID)
                if index % 4 == 0 { server.clock.advance(by: 0.001) }  // some share a creation time, some do not
            }
            let guest = try await server.anonymous()
            var seen: [String] = []
            var cursor: String?
            repeat {
                let page = try await admin(server, .GET, "/v1/admin/users?limit=4" + (cursor.map { "&cursor=\($0)" } ?? ""))
                #expect(page.status == 200)
                seen += (page.json["users"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                cursor = page.json["next_cursor"] as? String
            } while cursor != nil
            #expect(seen.count == 14)
            #expect(Set(seen) == Set(created + [guest.userID]))
            #expect(seen.first == guest.userID)

            let byEmail = try await admin(server, .GET, "/v1/admin/users?query=PERSON7@")
            #expect((byEmail.json["users"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [created[7]])
            let bySubject = try await admin(server, .GET, "/v1/admin/users?query=g-11")
            #expect((bySubject.json["users"] as? [[String: Any]])?.first?["id"] as? String == created[11])
            let byID = try await admin(server, .GET, "/v1/admin/users?query=\(created[3])")
            #expect((byID.json["users"] as? [[String: Any]])?.count == 1)
            let guests = try await admin(server, .GET, "/v1/admin/users?anonymous=true")
            #expect((guests.json["users"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [guest.userID])
            let apple = try await admin(server, .GET, "/v1/admin/users?provider=apple")
            #expect((apple.json["users"] as? [[String: Any]])?.isEmpty == true)
            #expect(try await admin(server, .GET, "/v1/admin/users?limit=0").errorCode == "INVALID_REQUEST")
            #expect(try await admin(server, .GET, "/v1/admin/users?cursor=%21%21").errorCode == "INVALID_REQUEST")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aDisabledAccountIsRefusedEverywhereAndItsSessionsEnd(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let session = try await server.signIn(.apple, sub: "ada")
            let other = try await server.signIn(.apple, sub: "ada")
            let disabled = try await admin(server, .PATCH, "/v1/admin/users/\(session.userID)", json: ["disabled": true])
            #expect(disabled.status == 200)
            #expect((disabled.json["user"] as? [String: Any])?["disabled"] as? Bool == true)
            #expect((disabled.json["sessions"] as? [Any])?.isEmpty == true)

            let signIn = try await server.post("/v1/auth/signin/apple", ["id_token": try server.idToken(.apple, sub: "ada")])
            #expect(signIn.status == 403)
            #expect(signIn.errorCode == "ACCOUNT_DISABLED")
            #expect(try await server.refresh(other.refreshToken).errorCode == "ACCOUNT_DISABLED")
            #expect(try await server.get("/v1/users/me", bearer: session.accessToken).errorCode == "ACCOUNT_DISABLED")
            #expect(try await server.get("/v1/sessions", bearer: other.accessToken).errorCode == "ACCOUNT_DISABLED")

            let enabled = try await admin(server, .PATCH, "/v1/admin/users/\(session.userID)", json: ["disabled": false])
            #expect((enabled.json["user"] as? [String: Any])?["disabled"] as? Bool == false)
            // Ended sessions stay ended; signing in works again.
            #expect(try await server.get("/v1/users/me", bearer: session.accessToken).errorCode == "UNAUTHORIZED")
            #expect(try await server.post("/v1/auth/signin/apple", ["id_token": try server.idToken(.apple, sub: "ada")]).status == 200)

            let events = try await admin(server, .GET, "/v1/admin/audit?user_id=\(session.userID)")
            let types = (events.json["events"] as? [[String: Any]])?.compactMap { $0["type"] as? String } ?? []
            #expect(types.prefix(3) == ["sign_in", "user.enabled", "user.disabled"])
            let listed = events.json["events"] as? [[String: Any]] ?? []
            let actor = (listed.dropFirst().first?["details"] as? [String: Any])?["actor"] as? String
            #expect(actor == "admin")
        }
    }

    @Test(arguments: TestDatabase.available)
    func renameSignOutRevokeAndDelete(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let first = try await server.signIn(.google, sub: "g")
            let second = try await server.signIn(.google, sub: "g")
            let renamed = try await admin(server, .PATCH, "/v1/admin/users/\(first.userID.uppercased())",
                                          json: ["display_name": " Grace "])
            #expect((renamed.json["user"] as? [String: Any])?["display_name"] as? String == "Grace")
            let sessions = renamed.json["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.count == 2)

            let secondID = second.claims["sid"] as? String ?? ""
            #expect(try await admin(server, .DELETE, "/v1/admin/users/\(first.userID)/sessions/\(secondID)").status == 204)
            #expect(try await server.get("/v1/users/me", bearer: second.accessToken).status == 401)
            #expect(try await server.get("/v1/users/me", bearer: first.accessToken).status == 200)
            #expect(try await admin(server, .DELETE, "/v1/admin/users/\(first.userID)/sessions/\(secondID)").status == 404)

            let signedOut = try await admin(server, .POST, "/v1/admin/users/\(first.userID)/signout")
            #expect(signedOut.json["sessions_ended"] as? Int == 1)
            #expect(try await server.get("/v1/users/me", bearer: first.accessToken).status == 401)

            _ = try await server.request(.PUT, "/v1/data/notes/n1", json: ["data": ["x": 1]],
                                         bearer: try await server.signIn(.google, sub: "g").accessToken)
            #expect(try await admin(server, .DELETE, "/v1/admin/users/\(first.userID)").status == 204)
            #expect(try await admin(server, .GET, "/v1/admin/users/\(first.userID)").status == 404)
            #expect(try await admin(server, .DELETE, "/v1/admin/users/\(first.userID)").status == 404)
            let again = try await server.signIn(.google, sub: "g")
            #expect(again.isNewUser)
            #expect(try await server.get("/v1/data/notes/n1", bearer: again.accessToken).status == 404)
            let deletion = try await admin(server, .GET, "/v1/admin/audit?type=user.deleted")
            #expect(((deletion.json["events"] as? [[String: Any]])?.first?["details"] as? [String: Any])?["actor"] as? String == "admin")
        }
    }

    @Test(arguments: TestDatabase.available)
    func statsCountWhatHappened(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let ada = try await server.signIn(.apple, sub: "ada")
            _ = try await server.signIn(.apple, sub: "ada")
            _ = try await server.signIn(.google, sub: "g")
            let guest = try await server.anonymous()
            _ = try await server.signIn(.apple, sub: "ada", bearer: guest.accessToken)  // merges the guest
            _ = try await server.anonymous()
            let disabled = try await server.signIn(.google, sub: "bad")
            _ = try await admin(server, .PATCH, "/v1/admin/users/\(disabled.userID)", json: ["disabled": true])
            // A reuse after the grace window.
            let rotated = try await server.refresh(ada.refreshToken)
            #expect(rotated.status == 200)
            server.clock.advance(by: 11)
            #expect(try await server.refresh(ada.refreshToken).errorCode == "REFRESH_TOKEN_REUSED")

            let stats = try await admin(server, .GET, "/v1/admin/stats").json
            #expect(stats["accounts"] as? Int == 4)  // ada, g, a guest, bad (the merged guest is gone)
            #expect(stats["guests"] as? Int == 1)
            #expect(stats["disabled"] as? Int == 1)
            #expect((stats["active"] as? [String: Int])?["1d"] == 4)
            let day = (stats["sign_ins_per_day"] as? [[String: Any]])?.last
            #expect(day?["count"] as? Int == 5)
            #expect(day?["by_provider"] as? [String: Int] == ["apple": 3, "google": 2])
            #expect(((stats["merges_per_day"] as? [[String: Any]])?.last)?["count"] as? Int == 1)
            #expect(((stats["reuse_detections_per_day"] as? [[String: Any]])?.last)?["count"] as? Int == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func auditPagesBackwards(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            for index in 0..<5 { _ = try await server.signIn(.google, sub: "g\(index)") }
            var ids: [Int] = []
            var before: String?
            repeat {
                let page = try await admin(server, .GET, "/v1/admin/audit?type=sign_in&limit=2" + (before.map { "&before=\($0)" } ?? ""))
                ids += (page.json["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
                before = page.json["next_cursor"] as? String
            } while before != nil
            #expect(ids.count == 5)
            #expect(ids == ids.sorted(by: >))
        }
    }

    @Test func theKeyIsRequiredComparedAndRateLimitedAndTheAPIIsOffWithoutIt() async throws {
        try await TestServer.with(.sqlite) { server async throws in
            #expect(try await server.get("/v1/admin/users", bearer: "anything").errorCode == "NOT_FOUND")
            #expect(try await server.get("/admin").status == 404)
        }
        try await TestServer.with(.sqlite, configure: {
            $0.adminKey = Self.key
            $0.rateLimits.enabled = true
            $0.rateLimits.adminKey = .init(limit: 3, window: 300)
        }) { server in
            #expect(try await server.get("/v1/admin/users").errorCode == "FORBIDDEN")
            #expect(try await server.get("/v1/admin/users", bearer: "wrong").errorCode == "FORBIDDEN")
            #expect(try await admin(server, .GET, "/v1/admin/users").status == 200)
            #expect(try await server.get("/v1/admin/users", bearer: "wrong again").errorCode == "FORBIDDEN")
            // Past the limit even the right key is not compared.
            let limited = try await admin(server, .GET, "/v1/admin/users")
            #expect(limited.errorCode == "RATE_LIMITED")
            #expect(limited.headers.first(name: "Retry-After") != nil)
            server.clock.advance(by: 301)
            #expect(try await admin(server, .GET, "/v1/admin/users").status == 200)
            let console = try await server.get("/admin")
            #expect(console.status == 200)
            #expect(console.headers.first(name: "Content-Security-Policy")?.contains("script-src 'self'") == true)
            #expect(!console.text.contains("<script>"))
        }
    }

    @Test(arguments: TestDatabase.available)
    func operatorsFindInspectAndDissolveGroups(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.adminKey = Self.key }) { server in
            let parent = try await server.signIn(.apple, sub: "admin-parent", email: "x@privaterelay.appleid.com")
            let groupID = try await GroupTests.family(server, parent, name: "Hopper household")
            let child = try await server.signIn(.google, sub: "admin-child", email: "kid@example.com")
            #expect(try await GroupTests.join(server, try await GroupTests.invite(server, groupID, by: parent), child).status == 200)
            _ = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/me", json: ["share_email": true],
                                         bearer: parent.accessToken)
            let code = try await GroupTests.invite(server, groupID, by: parent, ["max_uses": 3])
            _ = try await GroupTests.family(server, child, name: "Other")

            let found = try await server.get("/v1/admin/groups?query=HOPPER", bearer: Self.key)
            let groups = try #require(found.json["groups"] as? [[String: Any]])
            #expect(groups.map { $0["id"] as? String } == [groupID])
            #expect(groups.first?["member_count"] as? Int == 2 && groups.first?["role"] == nil)
            #expect((try await server.get("/v1/admin/groups", bearer: Self.key).json["groups"] as? [Any])?.count == 2)
            #expect(try await server.get("/v1/admin/groups?limit=0", bearer: Self.key).errorDetails["field"] as? String == "limit")
            #expect(try await server.get("/v1/admin/groups", bearer: "wrong").status == 403)

            let details = try await server.get("/v1/admin/groups/\(groupID.uppercased())", bearer: Self.key)
            let group = try #require(details.json["group"] as? [String: Any])
            #expect((group["members"] as? [[String: Any]])?.map { $0["role"] as? String } == ["owner", "member"])
            #expect((details.json["invites"] as? [[String: Any]])?.first?["max_uses"] as? Int == 3)
            #expect(!details.text.contains(code) && !details.text.contains("privaterelay"))
            #expect(try await server.get("/v1/admin/groups/nope", bearer: Self.key).status == 404)

            #expect(try await server.delete("/v1/admin/groups/\(groupID)", bearer: Self.key).status == 204)
            #expect(try await server.get("/v1/groups/\(groupID)", bearer: parent.accessToken).status == 404)
            #expect(try await server.get("/v1/admin/groups/\(groupID)", bearer: Self.key).status == 404)
        }
    }
}
