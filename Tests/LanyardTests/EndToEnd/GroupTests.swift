import Foundation
import Testing

/// Groups for family sharing (reference section 14), end to end through HTTP on both databases.
@Suite struct GroupTests {
    /// Creates a family owned by `owner` and returns its id.
    static func family(_ server: TestServer, _ owner: Session, name: String = "Family") async throws -> String {
        let created = try await server.post("/v1/groups", ["name": name], bearer: owner.accessToken)
        #expect(created.status == 201, "\(created.text)")
        return try #require(created.json["id"] as? String)
    }

    /// An invite's code, created by `inviter`.
    static func invite(_ server: TestServer, _ groupID: String, by inviter: Session,
                       _ body: [String: Any] = [:]) async throws -> String {
        let invite = try await server.post("/v1/groups/\(groupID)/invites", body, bearer: inviter.accessToken)
        #expect(invite.status == 201, "\(invite.text)")
        return try #require(invite.json["code"] as? String)
    }

    /// `joiner` accepts `code`; the answer.
    static func join(_ server: TestServer, _ code: String, _ joiner: Session) async throws -> TestResponse {
        try await server.post("/v1/invites/\(code)/accept", bearer: joiner.accessToken)
    }

    @Test(arguments: TestDatabase.available)
    func anInviteCodeTakesAChildIntoTheFamilyWithoutEmail(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let parent = try await server.signIn(.apple, sub: "parent", email: "parent@privaterelay.appleid.com")
            let created = try await server.post("/v1/groups", ["name": "  The Smiths ", "kind": "family"],
                                                bearer: parent.accessToken)
            #expect(created.status == 201)
            #expect(created.json["name"] as? String == "The Smiths")
            #expect(created.json["role"] as? String == "owner")
            #expect(created.json["member_count"] as? Int == 1)
            #expect(created.json["on_owner_deleted"] as? String == "transfer")
            let groupID = try #require(created.json["id"] as? String)

            let invite = try await server.post("/v1/groups/\(groupID)/invites", ["role": "member"], bearer: parent.accessToken)
            #expect(invite.status == 201)
            let code = try #require(invite.json["code"] as? String)
            #expect(code.range(of: #"^[0-9A-Z]{5}-[0-9A-Z]{5}$"#, options: .regularExpression) != nil, "\(code)")
            #expect(invite.json["url"] as? String == server.baseURL + "/join/" + code)
            #expect(invite.json["max_uses"] as? Int == 1)
            // The link opened in a browser shows the code and nothing of the group; anything else is not echoed.
            let page = try await server.get("/join/\(code)")
            #expect(page.status == 200 && page.text.contains(code) && !page.text.contains("The Smiths"))
            #expect(page.headers.first(name: "Content-Security-Policy")?.contains("default-src 'none'") == true)
            let bogus = try await server.get("/join/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
            #expect(bogus.status == 404 && !bogus.text.contains("<script>"))
            // Pending invites never show their codes again.
            let pending = try await server.get("/v1/groups/\(groupID)/invites", bearer: parent.accessToken)
            let listed = try #require((pending.json["invites"] as? [[String: Any]])?.first)
            #expect(listed["code"] == nil && listed["url"] == nil)
            #expect(!pending.text.contains(code))

            let child = try await server.signIn(.google, sub: "child", email: "kid@example.com")
            // The child typed it in lower case without the dash, with an O for a zero: still the code.
            let typed = code.lowercased().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "0", with: "o")
            let preview = try await server.get("/v1/invites/\(typed)", bearer: child.accessToken)
            #expect(preview.status == 200, "\(preview.text)")
            #expect((preview.json["group"] as? [String: Any])?["name"] as? String == "The Smiths")
            #expect((preview.json["group"] as? [String: Any])?["member_count"] as? Int == 1)
            #expect(preview.json["role"] as? String == "member")
            #expect(preview.json["members"] == nil && !preview.text.contains(parent.userID))

            server.clock.advance(by: 1)
            let joined = try await Self.join(server, typed, child)
            #expect(joined.status == 200, "\(joined.text)")
            #expect(joined.json["role"] as? String == "member")
            #expect((joined.json["group"] as? [String: Any])?["member_count"] as? Int == 2)
            // Accepting again: a member already, no use spent; the used-up invite no longer pending.
            #expect(try await Self.join(server, code, child).status == 200)
            #expect((try await server.get("/v1/groups/\(groupID)/invites", bearer: parent.accessToken)
                .json["invites"] as? [Any])?.isEmpty == true)
            let late = try await server.signIn(.google, sub: "cousin")
            let usedUp = try await Self.join(server, code, late)
            #expect(usedUp.status == 410)
            #expect(usedUp.errorCode == "INVITE_UNUSABLE" && usedUp.errorReason == "used_up")

            // Both list the group; the child sees the members, with emails only where shared and never a relay.
            let mine = try await server.get("/v1/groups", bearer: child.accessToken)
            #expect((mine.json["groups"] as? [[String: Any]])?.map { $0["role"] as? String } == ["member"])
            var group = try await server.get("/v1/groups/\(groupID)", bearer: child.accessToken)
            var members = try #require(group.json["members"] as? [[String: Any]])
            #expect(members.map { $0["role"] as? String } == ["owner", "member"])
            #expect(members.allSatisfy { $0["email"] == nil })
            for session in [parent, child] {
                let shared = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/me", json: ["share_email": true],
                                                      bearer: session.accessToken)
                #expect(shared.status == 200, "\(shared.text)")
            }
            group = try await server.get("/v1/groups/\(groupID)", bearer: parent.accessToken)
            members = try #require(group.json["members"] as? [[String: Any]])
            #expect(members.first { $0["user_id"] as? String == child.userID }?["email"] as? String == "kid@example.com")
            #expect(members.first { $0["user_id"] as? String == parent.userID }?["email"] == nil)
            #expect(!group.text.contains("privaterelay"))

            // The child leaves; the group is then as unknown to them as to a stranger. The owner cannot leave.
            #expect(try await server.post("/v1/groups/\(groupID)/leave", bearer: child.accessToken).status == 204)
            #expect(try await server.get("/v1/groups/\(groupID)", bearer: child.accessToken).errorCode == "NOT_FOUND")
            let ownerLeaves = try await server.post("/v1/groups/\(groupID)/leave", bearer: parent.accessToken)
            #expect(ownerLeaves.status == 409 && ownerLeaves.errorCode == "OWNER_MUST_TRANSFER")
        }
    }

    @Test(arguments: TestDatabase.available)
    func invitesExpireAreRevokedAndWrongCodesAreCounted(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            $0.rateLimits.enabled = true
            $0.rateLimits.inviteCode = .init(limit: 3, window: 3600)
            $0.trustedProxies = [CIDRFixtures.loopback]
        }) { server in
            let owner = try await server.signIn(.apple, sub: "owner")
            let groupID = try await Self.family(server, owner)
            let guest = try await server.anonymous()
            let shortLived = try await Self.invite(server, groupID, by: owner, ["expires_in": 60])
            let revoked = try await server.post("/v1/groups/\(groupID)/invites", ["max_uses": 5], bearer: owner.accessToken)
            let revokedCode = try #require(revoked.json["code"] as? String)
            let revokedID = try #require(revoked.json["id"] as? String)
            #expect(try await server.delete("/v1/groups/\(groupID)/invites/\(revokedID)", bearer: owner.accessToken).status == 204)
            let refused = try await Self.join(server, revokedCode, guest)
            #expect(refused.status == 410 && refused.errorReason == "revoked")
            server.clock.advance(by: 61)
            let expired = try await Self.join(server, shortLived, guest)
            #expect(expired.status == 410 && expired.errorReason == "expired")
            #expect(try await server.get("/v1/invites/\(shortLived)", bearer: guest.accessToken).errorReason == "expired")

            // Bad settings are refused by field.
            for (body, field) in [(["role": "owner"], "role"), (["max_uses": 0], "max_uses"), (["max_uses": 101], "max_uses"),
                                  (["expires_in": 31 * 86_400], "expires_in")] as [([String: Any], String)] {
                let bad = try await server.post("/v1/groups/\(groupID)/invites", body, bearer: owner.accessToken)
                #expect(bad.status == 400 && bad.errorDetails["field"] as? String == field, "\(body): \(bad.text)")
            }

            // Unknown codes are 404, and three wrong ones stop this account, and its address, guessing: even a right
            // code is refused then. Another account elsewhere joins with it.
            let guesser = try await server.signIn(.google, sub: "guesser")
            let there = ["X-Forwarded-For": "198.51.100.7"]
            for wrong in ["AAAAA-AAAAA", "not-a-code", "ZZZZZ-ZZZZZ"] {
                let answer = try await server.request(.GET, "/v1/invites/\(wrong)", bearer: guesser.accessToken, headers: there)
                #expect(answer.status == 404 && answer.errorCode == "NOT_FOUND", "\(answer.text)")
            }
            let good = try await Self.invite(server, groupID, by: owner, ["max_uses": 3])
            let limited = try await server.request(.POST, "/v1/invites/\(good)/accept", bearer: guesser.accessToken,
                                                   headers: ["X-Forwarded-For": "198.51.100.8"])
            #expect(limited.status == 429 && limited.errorCode == "RATE_LIMITED")
            let neighbour = try await server.signIn(.google, sub: "neighbour")
            let sameAddress = try await server.request(.POST, "/v1/invites/\(good)/accept", bearer: neighbour.accessToken,
                                                       headers: there)
            #expect(sameAddress.status == 429)
            let elsewhere = try await server.request(.POST, "/v1/invites/\(good)/accept", bearer: guest.accessToken,
                                                     headers: ["X-Forwarded-For": "203.0.113.5"])
            #expect(elsewhere.status == 200, "\(elsewhere.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aSingleUseCodeRacedByEightAccountsMakesOneMember(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.apple, sub: "racer-owner")
            let groupID = try await Self.family(server, owner)
            let code = try await Self.invite(server, groupID, by: owner)
            var racers: [Session] = []
            for index in 0..<8 { racers.append(try await server.signIn(.google, sub: "racer-\(index)")) }
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for racer in racers { group.addTask { try await Self.join(server, code, racer) } }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == 200 }.count == 1, "\(answers.map(\.text))")
            #expect(answers.filter { $0.errorReason == "used_up" }.count == 7)
            let group = try await server.get("/v1/groups/\(groupID)", bearer: owner.accessToken)
            #expect(group.json["member_count"] as? Int == 2)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aMultiUseCodeRacingTheMemberLimitNeverExceedsIt(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.groupMaxMembers = 5 }) { server in
            let owner = try await server.signIn(.apple, sub: "limit-owner")
            let groupID = try await Self.family(server, owner)
            let code = try await Self.invite(server, groupID, by: owner, ["max_uses": 20])
            var racers: [Session] = []
            for index in 0..<12 { racers.append(try await server.signIn(.google, sub: "crowd-\(index)")) }
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for racer in racers { group.addTask { try await Self.join(server, code, racer) } }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == 200 }.count == 4, "\(answers.map(\.text))")
            let full = answers.filter { $0.status == 409 }
            #expect(full.count == 8 && full.allSatisfy { $0.errorCode == "GROUP_LIMIT" && $0.errorReason == "group_full" })
            let group = try await server.get("/v1/groups/\(groupID)", bearer: owner.accessToken)
            #expect((group.json["members"] as? [Any])?.count == 5)
        }
    }

    @Test(arguments: TestDatabase.available)
    func rolesAndPoliciesDecideWhoReadsAndWritesGroupRecords(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.apple, sub: "policy-owner")
            let groupID = try await Self.family(server, owner)
            let member = try await server.signIn(.google, sub: "policy-member")
            let viewer = try await server.signIn(.google, sub: "policy-viewer")
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner), member).status == 200)
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner, ["role": "viewer"]),
                                        viewer).status == 200)
            let base = "/v1/groups/\(groupID)/data"

            // The personal store's semantics, with authors.
            let put = try await server.request(.PUT, "\(base)/shopping/milk", json: ["data": ["qty": 2]], bearer: member.accessToken)
            #expect(put.status == 200, "\(put.text)")
            #expect(put.json["version"] as? Int == 1 && put.json["group_id"] as? String == groupID)
            #expect(put.json["created_by"] as? String == member.userID && put.json["updated_by"] as? String == member.userID)
            let stale = try await server.request(.PUT, "\(base)/shopping/milk", json: ["data": ["qty": 3]],
                                                 bearer: owner.accessToken, headers: ["If-Match": "\"5\""])
            #expect(stale.status == 412 && stale.errorCode == "VERSION_CONFLICT")
            let edited = try await server.request(.PUT, "\(base)/shopping/milk", json: ["data": ["qty": 3]],
                                                  bearer: owner.accessToken, headers: ["If-Match": "\"1\""])
            #expect(edited.json["version"] as? Int == 2)
            #expect(edited.json["created_by"] as? String == member.userID && edited.json["updated_by"] as? String == owner.userID)
            let read = try await server.get("\(base)/shopping/milk", bearer: viewer.accessToken)
            #expect((read.json["data"] as? [String: Any])?["qty"] as? Int == 3)
            #expect(read.headers.first(name: "ETag") == "\"2\"")

            // Viewers read but do not write.
            let refused = try await server.request(.PUT, "\(base)/shopping/eggs", json: ["data": [:]], bearer: viewer.accessToken)
            #expect(refused.status == 403 && refused.errorCode == "INSUFFICIENT_ROLE")
            #expect(refused.errorDetails["required"] as? String == "member")

            // `author`: members write only what they created; admins (and the owner) anything.
            let setPolicy = try await server.request(.PUT, "/v1/groups/\(groupID)/policies/shopping",
                                                     json: ["write": "author"], bearer: owner.accessToken)
            #expect(setPolicy.json["write"] as? String == "author" && setPolicy.json["read"] as? String == "viewer")
            let memberPolicy = try await server.request(.PUT, "/v1/groups/\(groupID)/policies/shopping",
                                                        json: ["write": "member"], bearer: member.accessToken)
            #expect(memberPolicy.errorCode == "INSUFFICIENT_ROLE")
            _ = try await server.request(.PUT, "\(base)/shopping/bread", json: ["data": [:]], bearer: owner.accessToken)
            let notTheirs = try await server.request(.PUT, "\(base)/shopping/bread", json: ["data": ["x": 1]],
                                                     bearer: member.accessToken)
            #expect(notTheirs.errorCode == "INSUFFICIENT_ROLE")
            let notTheirsToDelete = try await server.delete("\(base)/shopping/bread", bearer: member.accessToken)
            #expect(notTheirsToDelete.errorCode == "INSUFFICIENT_ROLE")
            #expect(try await server.request(.PUT, "\(base)/shopping/milk", json: ["data": ["qty": 4]],
                                             bearer: member.accessToken).status == 200)
            #expect(try await server.delete("\(base)/shopping/bread", bearer: owner.accessToken).json["deleted"] as? Bool == true)

            // A collection only admins read.
            _ = try await server.request(.PUT, "/v1/groups/\(groupID)/policies/budget", json: ["read": "admin", "write": "admin"],
                                         bearer: owner.accessToken)
            #expect(try await server.get("\(base)/budget", bearer: member.accessToken).errorDetails["required"] as? String == "admin")
            #expect(try await server.get("\(base)/budget", bearer: owner.accessToken).status == 200)

            // Cursors: the collection's changes in order, tombstones included.
            let changes = try await server.get("\(base)/shopping?limit=500", bearer: viewer.accessToken)
            let records = try #require(changes.json["records"] as? [[String: Any]])
            #expect(records.map { $0["id"] as? String } == ["milk", "bread"])
            #expect(records.last?["deleted"] as? Bool == true)

            // Promotion takes effect on the next request.
            let promoted = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/\(viewer.userID)",
                                                    json: ["role": "admin"], bearer: owner.accessToken)
            #expect(promoted.json["role"] as? String == "admin")
            #expect(try await server.get("\(base)/budget", bearer: viewer.accessToken).status == 200)
            let notOwner = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/\(member.userID)",
                                                    json: ["role": "admin"], bearer: viewer.accessToken)
            #expect(notOwner.errorCode == "INSUFFICIENT_ROLE" && notOwner.errorDetails["required"] as? String == "owner")
        }
    }

    @Test(arguments: TestDatabase.available)
    func nonMembersAndRemovedMembersLearnNothingOfAGroup(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.apple, sub: "removal-owner")
            let groupID = try await Self.family(server, owner)
            let admin = try await server.signIn(.google, sub: "removal-admin")
            let member = try await server.signIn(.google, sub: "removal-member")
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner, ["role": "admin"]),
                                        admin).status == 200)
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner), member).status == 200)
            _ = try await server.request(.PUT, "/v1/groups/\(groupID)/data/notes/a", json: ["data": ["t": 1]],
                                         bearer: owner.accessToken)
            let stranger = try await server.signIn(.apple, sub: "stranger")
            for path in ["", "/invites", "/data/notes", "/data/notes/a", "/policies/notes", "/shares"] {
                let answer = try await server.get("/v1/groups/\(groupID)\(path)", bearer: stranger.accessToken)
                #expect(answer.status == 404 && answer.errorCode == "NOT_FOUND", "\(path): \(answer.text)")
            }
            #expect(try await server.request(.PUT, "/v1/groups/\(groupID)/data/notes/b", json: ["data": [:]],
                                             bearer: stranger.accessToken).status == 404)
            #expect(try await server.post("/v1/groups/\(groupID)/invites", bearer: stranger.accessToken).status == 404)

            // An admin removes a member but not another admin or the owner; the member's token still works
            // elsewhere and is refused in the group on the next request.
            let tooHigh = try await server.delete("/v1/groups/\(groupID)/members/\(owner.userID)", bearer: admin.accessToken)
            #expect(tooHigh.errorCode == "INSUFFICIENT_ROLE")
            #expect(try await server.delete("/v1/groups/\(groupID)/members/\(member.userID)", bearer: admin.accessToken).status == 204)
            #expect(try await server.get("/v1/groups/\(groupID)/data/notes/a", bearer: member.accessToken).status == 404)
            #expect(try await server.request(.PUT, "/v1/groups/\(groupID)/data/notes/a", json: ["data": [:]],
                                             bearer: member.accessToken).status == 404)
            #expect(try await server.get("/v1/users/me", bearer: member.accessToken).status == 200)
            let memberGroups = try await server.get("/v1/groups", bearer: member.accessToken)
            #expect((memberGroups.json["groups"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(arguments: TestDatabase.available)
    func ownershipTransfersAndFollowsTheOwnersDeletion(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.apple, sub: "old-owner")
            let groupID = try await Self.family(server, owner)
            let admin = try await server.signIn(.google, sub: "first-admin")
            let member = try await server.signIn(.google, sub: "plain-member")
            // Joined a second apart: "longest-standing" is by joining time.
            server.clock.advance(by: 1)
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner), member).status == 200)
            server.clock.advance(by: 1)
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner, ["role": "admin"]),
                                        admin).status == 200)

            // A transfer needs a recent sign-in and a member to receive it.
            let toStranger = try await server.post("/v1/groups/\(groupID)/transfer", ["user_id": UUID().uuidString],
                                                   bearer: owner.accessToken)
            #expect(toStranger.status == 404)
            server.clock.advance(by: 601)
            let stale = try await server.post("/v1/groups/\(groupID)/transfer", ["user_id": member.userID],
                                              bearer: owner.accessToken)
            #expect(stale.errorCode == "REAUTHENTICATION_REQUIRED")
            let fresh = try await server.signIn(.apple, sub: "old-owner")
            let transferred = try await server.post("/v1/groups/\(groupID)/transfer", ["user_id": member.userID.uppercased()],
                                                    bearer: fresh.accessToken)
            #expect(transferred.status == 200, "\(transferred.text)")
            #expect(transferred.json["role"] as? String == "admin")
            var roles = try await Self.roles(server, groupID, as: member)
            #expect(roles[member.userID] == "owner" && roles[owner.userID] == "admin" && roles.values.filter { $0 == "owner" }.count == 1)

            // The new owner deletes their account: the group passes to the longest-standing admin (the old owner).
            let again = try await server.signIn(.google, sub: "plain-member")
            #expect(try await server.delete("/v1/users/me", bearer: again.accessToken).status == 204)
            roles = try await Self.roles(server, groupID, as: admin)
            #expect(roles == [owner.userID: "owner", admin.userID: "admin"])

            // A group set to dissolve goes with its owner.
            let dissolving = try await server.post("/v1/groups", ["name": "Short", "on_owner_deleted": "dissolve"],
                                                   bearer: admin.accessToken)
            let dissolvingID = try #require(dissolving.json["id"] as? String)
            #expect(try await Self.join(server, try await Self.invite(server, dissolvingID, by: admin), fresh).status == 200)
            let adminAgain = try await server.signIn(.google, sub: "first-admin")
            #expect(try await server.delete("/v1/users/me", bearer: adminAgain.accessToken).status == 204)
            #expect(try await server.get("/v1/groups/\(dissolvingID)", bearer: fresh.accessToken).status == 404)
            // The first group lost its admin and kept its owner.
            #expect(try await Self.roles(server, groupID, as: fresh) == [owner.userID: "owner"])

            // The owner dissolves a group with a recent sign-in; its records go with it.
            _ = try await server.request(.PUT, "/v1/groups/\(groupID)/data/notes/x", json: ["data": [:]], bearer: fresh.accessToken)
            #expect(try await server.delete("/v1/groups/\(groupID)", bearer: fresh.accessToken).status == 204)
            #expect(try await server.get("/v1/groups/\(groupID)/data/notes/x", bearer: fresh.accessToken).status == 404)
        }
    }

    /// Members' roles by account, as `member` reads them.
    static func roles(_ server: TestServer, _ groupID: String, as member: Session) async throws -> [String: String] {
        let group = try await server.get("/v1/groups/\(groupID)", bearer: member.accessToken)
        let members = try #require(group.json["members"] as? [[String: Any]], "\(group.text)")
        return Dictionary(uniqueKeysWithValues: members.map { ($0["user_id"] as? String ?? "", $0["role"] as? String ?? "") })
    }

    @Test(arguments: TestDatabase.available)
    func aSharedCollectionIsReadOnlyForTheGroupAndGoneWhenUnshared(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let parent = try await server.signIn(.apple, sub: "sharer-parent")
            let groupID = try await Self.family(server, parent)
            let child = try await server.signIn(.google, sub: "sharer-child")
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: parent), child).status == 200)
            _ = try await server.request(.PUT, "/v1/data/locations/now", json: ["data": ["city": "Lyon"]], bearer: child.accessToken)
            let path = "/v1/groups/\(groupID)/members/\(child.userID)/data/locations"
            #expect(try await server.get("\(path)/now", bearer: parent.accessToken).status == 404)

            let shared = try await server.request(.PUT, "/v1/groups/\(groupID)/shares/locations", bearer: child.accessToken)
            #expect(shared.status == 200 && shared.json["collection"] as? String == "locations")
            let read = try await server.get("\(path)/now", bearer: parent.accessToken)
            #expect((read.json["data"] as? [String: Any])?["city"] as? String == "Lyon")
            #expect((try await server.get(path, bearer: parent.accessToken).json["records"] as? [Any])?.count == 1)
            let list = try await server.get("/v1/groups/\(groupID)/shares", bearer: parent.accessToken)
            #expect((list.json["shares"] as? [[String: Any]])?.first?["user_id"] as? String == child.userID)
            // Read-only: there is no write route for another member's collection.
            let write = try await server.request(.PUT, "\(path)/now", json: ["data": [:]], bearer: parent.accessToken)
            #expect(write.status == 404 || write.status == 405)
            // Other collections of the child stay private.
            _ = try await server.request(.PUT, "/v1/data/diary/d1", json: ["data": [:]], bearer: child.accessToken)
            #expect(try await server.get("/v1/groups/\(groupID)/members/\(child.userID)/data/diary/d1",
                                         bearer: parent.accessToken).status == 404)

            #expect(try await server.delete("/v1/groups/\(groupID)/shares/locations", bearer: child.accessToken).status == 204)
            #expect(try await server.get("\(path)/now", bearer: parent.accessToken).status == 404)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aGuestWhoJoinedKeepsTheMembershipWhenSigningIn(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.apple, sub: "guest-host")
            let groupID = try await Self.family(server, owner)
            let guest = try await server.anonymous()
            #expect(try await server.post("/v1/groups", ["name": "Mine"], bearer: guest.accessToken).errorCode == "FORBIDDEN")
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner, ["role": "admin"]),
                                        guest).status == 200)
            // The guest signs in to an account that is already a plain member: the higher role (admin) is kept.
            let existing = try await server.signIn(.google, sub: "returning")
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner), existing).status == 200)
            let merged = try await server.signIn(.google, sub: "returning", bearer: guest.accessToken)
            #expect(merged.userID == existing.userID)
            let roles = try await Self.roles(server, groupID, as: owner)
            #expect(roles == [owner.userID: "owner", existing.userID: "admin"])

            // A guest who owns a group (handed to it) signing in to an account that is a member there: the account
            // becomes the owner, and the group never has two.
            let guestOwner = try await server.anonymous()
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner), guestOwner).status == 200)
            let fresh = try await server.signIn(.apple, sub: "guest-host")
            #expect(try await server.post("/v1/groups/\(groupID)/transfer", ["user_id": guestOwner.userID],
                                          bearer: fresh.accessToken).status == 200)
            let landed = try await server.signIn(.google, sub: "returning", bearer: guestOwner.accessToken)
            #expect(landed.userID == existing.userID)
            let after = try await Self.roles(server, groupID, as: owner)
            #expect(after == [owner.userID: "admin", existing.userID: "owner"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func theAccessTokenCarriesTheGroupsClaimFromSignInAndRefresh(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.apple, sub: "claims-owner")
            #expect(owner.claims["groups"] == nil)
            let groupID = try await Self.family(server, owner)
            let member = try await server.signIn(.google, sub: "claims-member")
            #expect(try await Self.join(server, try await Self.invite(server, groupID, by: owner, ["role": "viewer"]),
                                        member).status == 200)
            // Read at refresh and sign-in: the membership with its role.
            var refreshed = try Session(try await server.refresh(member.refreshToken))
            #expect(refreshed.claims["groups"] as? [[String: String]] == [["id": groupID, "role": "viewer"]])
            #expect(refreshed.claims["groups_more"] == nil)
            _ = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/\(member.userID)", json: ["role": "admin"],
                                         bearer: owner.accessToken)
            let signedIn = try await server.signIn(.google, sub: "claims-member")
            #expect(signedIn.claims["groups"] as? [[String: String]] == [["id": groupID, "role": "admin"]])
            // Lanyard itself never trusts the claim: removed, the member's token (claim and all) is refused at once.
            #expect(try await server.delete("/v1/groups/\(groupID)/members/\(member.userID)", bearer: owner.accessToken).status == 204)
            #expect(try await server.get("/v1/groups/\(groupID)", bearer: signedIn.accessToken).status == 404)
            refreshed = try Session(try await server.refresh(refreshed.refreshToken))
            #expect(refreshed.claims["groups"] == nil)

            // At most 16, oldest membership first, and `groups_more` when some were left out.
            var created = [groupID]
            for index in 1...16 {
                server.clock.advance(by: 1)
                created.append(try await Self.family(server, owner, name: "Group \(index)"))
            }
            let many = try await server.signIn(.apple, sub: "claims-owner")
            let claimed = try #require(many.claims["groups"] as? [[String: String]])
            #expect(claimed.map { $0["id"] } == Array(created.prefix(16)))
            #expect(claimed.allSatisfy { $0["role"] == "owner" })
            #expect(many.claims["groups_more"] as? Bool == true)
        }
    }
}
