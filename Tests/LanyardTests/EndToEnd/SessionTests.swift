import Foundation
import Testing
import LanyardCore
import LanyardStore
import LanyardSupport

@Suite struct RefreshTests {
    @Test(arguments: TestDatabase.available)
    func refreshingRotatesTheToken(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "rotating")
            let answer = try await server.refresh(session.refreshToken)
            let refreshed = try Session(answer)
            #expect(refreshed.refreshToken != session.refreshToken)
            #expect(refreshed.userID == session.userID)
            #expect(refreshed.claims["sid"] as? String == session.claims["sid"] as? String)
            // The account in the answer is the account as it is, identities and all.
            let me = try await server.get("/v1/users/me", bearer: refreshed.accessToken)
            #expect(me.status == 200)
            #expect(answer.sessionAccount == me.meAccount)
            #expect(answer.identities.first?["provider"] as? String == "apple")
            // The successor rotates in turn.
            let again = try Session(try await server.refresh(refreshed.refreshToken))
            #expect(again.refreshToken != refreshed.refreshToken)
        }
    }

    @Test(arguments: TestDatabase.available)
    func concurrentRefreshesOfOneTokenAllGetTheSameSuccessor(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.google, sub: "flaky-network")
            let responses = try await server.concurrently(10) { try await server.refresh(session.refreshToken) }
            #expect(responses.map(\.status) == Array(repeating: 200, count: 10))
            let successors = Set(try responses.map { try Session($0).refreshToken })
            #expect(successors.count == 1)
            #expect(try await server.refresh(successors.first!).status == 200)
        }
    }

    /// On PostgreSQL concurrent refreshes read their tokens in shared queries (`RequestBatcher`): each must still
    /// rotate its own token in its own session, and a signed-out session's or an unknown token be refused.
    @Test(arguments: TestDatabase.available)
    func concurrentRefreshesOfManySessionsEachRotateTheirOwn(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var sessions: [Session] = []
            for person in 0..<24 { sessions.append(try await server.signIn(.apple, sub: "refresher-\(person)")) }
            #expect(try await server.post("/v1/auth/signout", [:], bearer: sessions[23].accessToken).status == 204)
            let unknown = String(repeating: "A", count: 43)
            let tokens = sessions.map(\.refreshToken) + [unknown]
            let answers = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
                for (index, token) in tokens.enumerated() { group.addTask { (index, try await server.refresh(token)) } }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            for (index, session) in sessions.enumerated().dropLast() {
                let refreshed = try Session(try #require(answers[index]))
                #expect(refreshed.userID == session.userID)
                #expect(refreshed.claims["sid"] as? String == session.claims["sid"] as? String)
                #expect(try await server.refresh(refreshed.refreshToken).status == 200)
            }
            #expect(answers[23]?.errorCode == "INVALID_REFRESH_TOKEN")
            #expect(answers[24]?.errorCode == "INVALID_REFRESH_TOKEN")
        }
    }

    /// A token carries its session's id, which finds its row; its hash covers the id, so the secret of one
    /// session's token with another session's id in front finds nothing, and revokes nothing.
    @Test(arguments: TestDatabase.available)
    func aTokenMovedToAnotherSessionIsRefusedAndRevokesNothing(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let first = try await server.signIn(.apple, sub: "selector-a")
            let second = try await server.signIn(.google, sub: "selector-b")
            let secondRaw = try #require(Base64URL.decode(second.refreshToken))
            let moved = Base64URL.encode(Array(secondRaw[0..<16]) + Array(try #require(Base64URL.decode(first.refreshToken))[16...]))
            #expect(moved.utf8.count == 64)
            #expect(try await server.refresh(moved).errorCode == "INVALID_REFRESH_TOKEN")
            for session in [first, second] {
                let refreshed = try Session(try await server.refresh(session.refreshToken))
                #expect(refreshed.claims["sid"] as? String == session.claims["sid"] as? String)
                #expect(try await server.get("/v1/users/me", bearer: refreshed.accessToken).status == 200)
            }
        }
    }

    /// Tokens issued before session ids were part of them (43 characters, stored under their hash alone) still
    /// rotate, into a token of the current form.
    @Test(arguments: TestDatabase.available)
    func aTokenOfTheEarlierFormStillRotates(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "earlier-token")
            let sessionID = try #require(session.claims["sid"] as? String)
            let earlier = Base64URL.encode(SystemRandomSource().bytes(32))
            _ = try await server.runtime.database.transaction { connection in
                try await connection.query("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($1, $2, $3)",
                                           [.text(Hashing.sha256Hex(earlier)), .text(sessionID), .date(server.clock.now())])
            }
            let refreshed = try Session(try await server.refresh(earlier))
            #expect(refreshed.claims["sid"] as? String == sessionID)
            #expect(refreshed.refreshToken.utf8.count == 64)
            #expect(try await server.refresh(refreshed.refreshToken).status == 200)
            // It was rotated like any other: presented again after the grace, the session is revoked.
            server.clock.advance(by: 60)
            #expect(try await server.refresh(earlier).errorCode == "REFRESH_TOKEN_REUSED")
            #expect(try await server.refresh(session.refreshToken).errorCode == "INVALID_REFRESH_TOKEN")
        }
    }

    /// Rotations stored together (one statement on PostgreSQL): each token rotated into its own session, one
    /// token's two rotations stored once, and a rotation whose session is gone refused without failing the rest.
    @Test(arguments: TestDatabase.available)
    func rotationsStoredTogetherEachRotateTheirOwnToken(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var sessions: [Session] = []
            for person in 0..<12 { sessions.append(try await server.signIn(.google, sub: "rotated-\(person)")) }
            let doomed = try await server.signIn(.apple, sub: "rotated-doomed")
            let now = server.clock.now()
            func rotation(_ session: Session, at date: Date) throws -> Rotation {
                Rotation(tokenKey: RefreshTokens.storageKey(session.refreshToken),
                         successorKey: RefreshTokens.storageKey("successor of " + session.refreshToken),
                         sessionID: try #require(session.claims["sid"] as? String), date: date,
                         sessionExpiresAt: date.addingTimeInterval(3600))
            }
            let rotations = try sessions.map { try rotation($0, at: now) }
                + [try rotation(sessions[0], at: now.addingTimeInterval(0.001)), try rotation(doomed, at: now)]
            #expect(try await server.delete("/v1/users/me", bearer: doomed.accessToken).status == 204)

            let rotator = RefreshRotations(database: server.runtime.database)
            let stored = try await withThrowingTaskGroup(of: (Rotation, Bool).self) { group in
                for rotation in rotations { group.addTask { (rotation, try await rotator.rotate(rotation, markingActive: nil)) } }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            #expect(stored.filter { !$0.value }.map(\.key.sessionID) == [rotations.last?.sessionID])
            let targets = try await server.runtime.database.read { connection in
                try await RefreshTokenStore(connection).findForRefresh(tokenKeys: rotations.dropLast().map(\.successorKey))
            }
            #expect(targets.count == sessions.count)
            for rotation in rotations.dropLast() {
                #expect(targets[rotation.successorKey]?.session.id == rotation.sessionID)
                #expect(targets[rotation.successorKey]?.session.expiresAt == rotation.sessionExpiresAt
                        || rotation.tokenKey == rotations[0].tokenKey)
            }
            let used = try await server.runtime.database.read { connection in
                try await RefreshTokenStore(connection).findForRefresh(tokenKeys: Array(Set(rotations.dropLast().map(\.tokenKey))))
            }
            #expect(used.count == sessions.count)
            #expect(used.values.allSatisfy { $0.token.rotatedAt != nil })
        }
    }

    @Test(arguments: TestDatabase.available)
    func aRetryWithinTheGraceIsAnsweredAndReuseAfterItRevokesTheSession(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "reuse")
            let first = try Session(try await server.refresh(session.refreshToken))
            server.clock.advance(by: 9)
            let retried = try Session(try await server.refresh(session.refreshToken))
            #expect(retried.refreshToken == first.refreshToken)

            server.clock.advance(by: 5)
            let reused = try await server.refresh(session.refreshToken)
            #expect(reused.status == 401)
            #expect(reused.errorCode == "REFRESH_TOKEN_REUSED")
            // The whole session is gone: its successor and its access tokens stop working.
            #expect(try await server.refresh(first.refreshToken).errorCode == "INVALID_REFRESH_TOKEN")
            #expect(try await server.get("/v1/users/me", bearer: first.accessToken).errorCode == "UNAUTHORIZED")

            let audit = try await server.runtime.database.read {
                try await AuditStore($0).entries(event: "session.reuse_detected")
            }
            #expect(audit.count == 1)
            #expect(audit.first?.userID == session.userID)
            #expect(audit.first?.clientIP == "127.0.0.1")
        }
    }

    @Test(arguments: TestDatabase.available)
    func unknownMalformedAndIdleTokensAreInvalid(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.refreshTokenTTL = 3600 }) { server in
            #expect(try await server.refresh("not-a-token").errorCode == "INVALID_REFRESH_TOKEN")
            #expect(try await server.refresh(String(repeating: "A", count: 43)).errorCode == "INVALID_REFRESH_TOKEN")
            let missing = try await server.post("/v1/auth/refresh", [:])
            #expect(missing.errorCode == "INVALID_REQUEST")
            #expect(missing.errorDetails["field"] as? String == "refresh_token")

            let session = try await server.signIn(.apple, sub: "idle")
            server.clock.advance(by: 3601)
            #expect(try await server.refresh(session.refreshToken).errorCode == "INVALID_REFRESH_TOKEN")
        }
    }
}

@Suite struct SignOutAndSessionTests {
    @Test(arguments: TestDatabase.available)
    func signingOutEndsTheSessionAtOnce(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "leaver")
            let out = try await server.post("/v1/auth/signout", [:], bearer: session.accessToken)
            #expect(out.status == 204)
            #expect(try await server.get("/v1/users/me", bearer: session.accessToken).errorCode == "UNAUTHORIZED")
            #expect(try await server.refresh(session.refreshToken).errorCode == "INVALID_REFRESH_TOKEN")
        }
    }

    @Test(arguments: TestDatabase.available)
    func signOutScopesChooseWhichDevicesEnd(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let phone = try await server.signIn(.apple, sub: "devices")
            let tablet = try await server.signIn(.apple, sub: "devices")
            let laptop = try await server.signIn(.apple, sub: "devices")
            #expect(try await server.post("/v1/auth/signout", ["scope": "others"], bearer: phone.accessToken).status == 204)
            #expect(try await server.get("/v1/users/me", bearer: phone.accessToken).status == 200)
            #expect(try await server.get("/v1/users/me", bearer: tablet.accessToken).status == 401)
            #expect(try await server.get("/v1/users/me", bearer: laptop.accessToken).status == 401)

            let other = try await server.signIn(.apple, sub: "devices")
            #expect(try await server.post("/v1/auth/signout", ["scope": "global"], bearer: other.accessToken).status == 204)
            #expect(try await server.get("/v1/users/me", bearer: phone.accessToken).status == 401)
            #expect(try await server.get("/v1/users/me", bearer: other.accessToken).status == 401)

            let bad = try await server.signIn(.apple, sub: "devices")
            let response = try await server.post("/v1/auth/signout", ["scope": "everything"], bearer: bad.accessToken)
            #expect(response.errorCode == "INVALID_REQUEST")
            #expect(response.errorDetails["field"] as? String == "scope")
        }
    }

    @Test(arguments: TestDatabase.available)
    func devicesCanBeListedAndRevoked(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let phone = try await server.signIn(.google, sub: "lister")
            let tablet = try await server.signIn(.google, sub: "lister")
            let listed = try await server.get("/v1/sessions", bearer: phone.accessToken)
            let sessions = try #require(listed.json["sessions"] as? [[String: Any]])
            #expect(sessions.count == 2)
            #expect(sessions.filter { $0["current"] as? Bool == true }.map { $0["id"] as? String }
                == [phone.claims["sid"] as? String])
            #expect(sessions.allSatisfy { $0["client_ip"] as? String == "127.0.0.1" })

            let tabletID = try #require(tablet.claims["sid"] as? String)
            // Ids match in any case: a Swift `UUID` prints upper case.
            #expect(try await server.delete("/v1/sessions/\(tabletID.uppercased())", bearer: phone.accessToken).status == 204)
            #expect(try await server.get("/v1/users/me", bearer: tablet.accessToken).status == 401)
            #expect(try await server.delete("/v1/sessions/\(tabletID)", bearer: phone.accessToken).errorCode == "NOT_FOUND")

            // Another account's session is not yours to see or end.
            let stranger = try await server.signIn(.google, sub: "stranger")
            let strangerID = try #require(stranger.claims["sid"] as? String)
            #expect(try await server.delete("/v1/sessions/\(strangerID)", bearer: phone.accessToken).status == 404)
            #expect(try await server.get("/v1/users/me", bearer: stranger.accessToken).status == 200)

            let audit = try await server.runtime.database.read { try await AuditStore($0).entries(userID: phone.userID) }
            #expect(audit.map(\.event).contains("session.revoked"))
            #expect(audit.map(\.event).filter { $0 == "sign_in" }.count == 2)
            #expect(audit.map(\.event).contains("user.created"))
        }
    }

    /// On PostgreSQL concurrent `me` reads are answered by shared queries (`RequestBatcher`): each caller must
    /// still get exactly its own account, with its identities in link order, and a signed-out session its 401.
    @Test(arguments: TestDatabase.available)
    func concurrentReadsOfManyAccountsEachSeeTheirOwn(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var people: [(session: Session, emails: [String])] = []
            for person in 0..<20 {
                let session = try await server.signIn(.apple, sub: "reader-\(person)", email: "reader-\(person)@example.com")
                var emails = ["reader-\(person)@example.com"]
                if person.isMultiple(of: 2) {
                    let token = try server.idToken(.google, sub: "g-reader-\(person)", email: "g-\(person)@example.com")
                    let linked = try await server.post("/v1/auth/link/google", ["id_token": token], bearer: session.accessToken)
                    #expect(linked.status == 200)
                    emails.append("g-\(person)@example.com")
                }
                people.append((session, emails))
            }
            let signedOut = people[19].session
            #expect(try await server.post("/v1/auth/signout", [:], bearer: signedOut.accessToken).status == 204)

            let answers = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
                for read in 0..<120 {
                    let person = read % people.count
                    let token = people[person].session.accessToken
                    group.addTask { (person, try await server.get("/v1/users/me", bearer: token)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 120)
            for (person, answer) in answers {
                guard person != 19 else {
                    #expect(answer.errorCode == "UNAUTHORIZED")
                    continue
                }
                #expect(answer.status == 200)
                #expect(answer.json["id"] as? String == people[person].session.userID)
                #expect(answer.identities.map { $0["email"] as? String } == people[person].emails)
            }
        }
    }

    /// The batched read itself, on both databases: each session found with its own account, an unknown one
    /// left out, whatever the batch's size (1, 3 in a statement for 4, 16).
    @Test(arguments: TestDatabase.available)
    func oneQueryReadsManySessionsEachWithItsOwnAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var sessionsByUser: [String: String] = [:]
            for person in 0..<15 {
                let session = try await server.signIn(.google, sub: "batched-\(person)", email: "b\(person)@example.com")
                sessionsByUser[session.userID] = try #require(session.claims["sid"] as? String)
            }
            let ids = Array(sessionsByUser.values)
            for batch in [[ids[0]], Array(ids[0..<2]) + ["no-such-session"], ids + ["no-such-session"]] {
                let found = try await server.runtime.database.read { try await UserStore($0).findWithIdentities(sessionIDs: batch) }
                #expect(Set(found.keys) == Set(batch).subtracting(["no-such-session"]))
                for (sessionID, read) in found {
                    #expect(read.session.id == sessionID)
                    #expect(sessionsByUser[read.user.id] == sessionID)
                    #expect(read.identities.map(\.userID) == [read.user.id])
                }
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func theProfileNameCanBeChanged(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.google, sub: "renamer")
            let renamed = try await server.request(.PATCH, "/v1/users/me", json: ["display_name": "New Name"],
                                                   bearer: session.accessToken)
            #expect(renamed.status == 200)
            #expect(renamed.json["display_name"] as? String == "New Name")
            #expect(renamed.json["linked_providers"] as? [String] == ["google"])
            let wrongType = try await server.request(.PATCH, "/v1/users/me", json: ["display_name": 42],
                                                     bearer: session.accessToken)
            #expect(wrongType.errorCode == "INVALID_REQUEST")
            #expect(wrongType.errorDetails["field"] as? String == "display_name")
            let tooLong = try await server.request(.PATCH, "/v1/users/me",
                                                   json: ["display_name": String(repeating: "x", count: 201)],
                                                   bearer: session.accessToken)
            #expect(tooLong.errorCode == "INVALID_REQUEST")
            // PostgreSQL's text cannot hold U+0000: refused as input on both databases, never a 500.
            let withNUL = try await server.request(.PATCH, "/v1/users/me", rawBody: #"{"display_name": "a\u0000b"}"#,
                                                   bearer: session.accessToken)
            #expect(withNUL.errorCode == "INVALID_REQUEST")
            #expect(withNUL.errorDetails["field"] as? String == "display_name")
        }
    }
}
