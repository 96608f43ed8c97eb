import Foundation
import LanyardStore
import LanyardSupport
import Testing

/// Merges as an attacker tries them (reference section 15): a banned account, a reverted merge replayed, a key
/// replayed with another body, someone else's proof, racing copies of one request, and merges that would break the
/// groups limit. Each request here is one that must fail, on both databases.
@Suite struct MergeAttackTests {
    static func configure(_ configuration: inout LanyardConfiguration) {
        configuration.adminKey = AdminTests.key
    }

    static func disable(_ server: TestServer, _ userID: String) async throws {
        let answer = try await server.request(.PATCH, "/v1/admin/users/\(userID)", json: ["disabled": true],
                                              bearer: AdminTests.key)
        #expect(answer.status == 200, "\(answer.text)")
    }

    @Test(arguments: TestDatabase.available)
    func aBannedAccountCanNeitherBeAbsorbedNorAdoptedNorAbsorbAnother(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let ada = try await server.signIn(.apple, sub: "ban-ada")
            let banned = try await server.signIn(.google, sub: "ban-mallory")
            try await MergeTests.put(server, banned, "notes", "n", ["t": "banned"])
            try await Self.disable(server, banned.userID)

            // Keeping the banned account would hand out a working session of it.
            let adopt = try await MergeTests.merge(server, ada, ["proof": try await MergeTests.proof(server, for: ada, sub: "ban-mallory"),
                                                                 "keep": "other"])
            #expect(adopt.status == 403 && adopt.errorCode == "ACCOUNT_DISABLED" && adopt.errorReason == "other_account", "\(adopt.text)")
            #expect(adopt.json["session"] == nil)
            // Absorbing it would let its sign-in method into an active account.
            let absorb = try await MergeTests.merge(server, ada, ["proof": try await MergeTests.proof(server, for: ada, sub: "ban-mallory")])
            #expect(absorb.status == 403 && absorb.errorCode == "ACCOUNT_DISABLED" && absorb.errorReason == "other_account", "\(absorb.text)")
            #expect(try await server.get("/v1/users/me", bearer: ada.accessToken).status == 200, "the requester stays signed in")
            #expect(try await server.signIn(.apple, sub: "ban-ada").linkedProviders == ["apple"])
            #expect(try await server.post("/v1/auth/signin/google", ["id_token": try server.idToken(.google, sub: "ban-mallory")])
                .errorCode == "ACCOUNT_DISABLED")
            #expect(try await server.get("/v1/data/notes/n", bearer: ada.accessToken).status == 404)

            // A guest cannot be merged into a banned account by signing in with its identity either.
            let guest = try await server.anonymous()
            let guestSignIn = try await server.post("/v1/auth/signin/google", ["id_token": try server.idToken(.google, sub: "ban-mallory")],
                                                    bearer: guest.accessToken)
            #expect(guestSignIn.errorCode == "ACCOUNT_DISABLED")

            // An operator may still merge it, audited as theirs.
            let byOperator = try await server.post("/v1/admin/merges", ["into": ada.userID, "from": banned.userID],
                                                   bearer: AdminTests.key)
            #expect(byOperator.status == 200, "\(byOperator.text)")
            let audit = try await server.get("/v1/admin/audit?user_id=\(ada.userID)&type=account.merged", bearer: AdminTests.key)
            let details = (audit.json["events"] as? [[String: Any]])?.first?["details"] as? [String: Any]
            #expect(details?["actor"] as? String == "admin" && details?["from"] as? String == banned.userID, "\(audit.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aRevertedMergeIsNeverAnsweredAgain(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let phone = try await server.signIn(.apple, sub: "replay-apple")
            _ = try await server.signIn(.google, sub: "replay-google")
            let proof = try await MergeTests.proof(server, for: phone, sub: "replay-google")
            let merged = try await MergeTests.merge(server, phone, ["proof": proof, "keep": "other"], key: "k1")
            #expect(merged.status == 200, "\(merged.text)")
            let mergeID = try #require(merged.json["merge_id"] as? String)
            #expect(try await server.post("/v1/admin/merges/\(mergeID)/revert", bearer: AdminTests.key).status == 200)

            // The old session retrying, and a new session of the returned account posting the same proof: refused,
            // and no session of the other account.
            let returned = try await server.signIn(.apple, sub: "replay-apple")
            for key: String? in ["k1", nil] {
                let replay = try await MergeTests.merge(server, returned, ["proof": proof, "keep": "other"], key: key)
                #expect(replay.status == 409 && replay.errorReason == "reverted", "\(replay.text)")
                #expect(replay.json["session"] == nil)
                // The session the merge ended stays ended.
                let old = try await MergeTests.merge(server, phone, ["proof": proof, "keep": "other"], key: key)
                #expect(old.status == 401 && old.json["session"] == nil, "\(old.text)")
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func aKeyWithAnotherBodyAStrangersReplayAndAStaleReplayGetNothing(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            Self.configure(&$0)
            $0.accessTokenTTL = 3 * 86_400  // the merged device's bearer outlives the day its replay is answered
        }) { server in
            let phone = try await server.signIn(.apple, sub: "key-apple")
            let google = try await server.signIn(.google, sub: "key-google")
            let proof = try await MergeTests.proof(server, for: phone, sub: "key-google")
            let merged = try await MergeTests.merge(server, phone, ["proof": proof, "keep": "other"], key: "k1")
            #expect(merged.status == 200, "\(merged.text)")
            let mergeID = try #require(merged.json["merge_id"] as? String)

            // The same key with any other body.
            let reused = try await MergeTests.merge(server, phone, ["proof": ["provider": "google", "id_token": "x.y.z"]], key: "k1")
            #expect(reused.status == 422 && reused.errorCode == "INVALID_REQUEST", "\(reused.text)")
            #expect(reused.errorReason == "idempotency_key_reused")
            #expect(!reused.text.contains(mergeID))

            // A stranger posting the proof (and the key) learns nothing of the merge.
            let stranger = try await server.signIn(.apple, sub: "key-stranger")
            for key: String? in ["k1", nil] {
                let stolen = try await MergeTests.merge(server, stranger, ["proof": proof, "keep": "other"], key: key)
                #expect(stolen.status == 401 && stolen.errorCode == "INVALID_PROVIDER_TOKEN", "\(stolen.text)")
                #expect(!stolen.text.contains(mergeID) && stolen.json["session"] == nil)
            }

            // The device whose answer was lost gets it again, with a session of the survivor…
            let again = try await MergeTests.merge(server, phone, ["proof": proof, "keep": "other"], key: "k1")
            #expect(again.json["merge_id"] as? String == mergeID)
            #expect((again.json["session"] as? [String: Any])?["access_token"] is String)
            // …but not once the survivor signed out everywhere…
            #expect(try await server.post("/v1/auth/signout", ["scope": "global"], bearer: google.accessToken).status == 204)
            let afterSignOut = try await MergeTests.merge(server, phone, ["proof": proof, "keep": "other"], key: "k1")
            #expect(afterSignOut.status == 401 && afterSignOut.json["session"] == nil, "\(afterSignOut.text)")
            // …and never after a day: the request is then a new one, of an account merged away.
            server.clock.advance(by: 86_401)
            let stale = try await MergeTests.merge(server, phone, ["proof": proof, "keep": "other"], key: "k1")
            #expect(stale.status == 401 && stale.errorCode == "ACCOUNT_MERGED", "\(stale.text)")
            #expect(stale.json["session"] == nil)
            let audit = try await server.get("/v1/admin/audit?user_id=\(google.userID)&type=sign_in", bearer: AdminTests.key)
            #expect(audit.text.contains(mergeID), "the sessions a merge opens are audited with it")
        }
    }

    @Test(arguments: TestDatabase.available)
    func racingCopiesOfOneRequestAllAnswerTheSameMerge(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            for round in 0..<3 {
                let phone = try await server.signIn(.apple, sub: "race-apple-\(round)")
                _ = try await server.signIn(.google, sub: "race-google-\(round)")
                let proof = try await MergeTests.proof(server, for: phone, sub: "race-google-\(round)")
                let token = try #require(proof["id_token"] as? String)
                let answers = try await server.concurrently(4) {
                    try await MergeTests.merge(server, phone, ["proof": ["provider": "google", "id_token": token]],
                                               key: "race-\(round)")
                }
                #expect(answers.allSatisfy { $0.status == 200 }, "\(answers.map(\.text))")
                let ids = Set(answers.compactMap { $0.json["merge_id"] as? String })
                #expect(ids.count == 1, "\(answers.map(\.text))")
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func aMergeNeverLeavesAnAccountInMoreGroupsThanItMayJoin(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            Self.configure(&$0)
            $0.groupsPerAccount = 3
        }) { server in
            let a = try await server.signIn(.apple, sub: "groups-a")
            let b = try await server.signIn(.google, sub: "groups-b")
            for owner in [a, a, b, b] { _ = try await GroupTests.family(server, owner) }
            let proof = try await MergeTests.proof(server, for: a, sub: "groups-b")
            let dry = try await MergeTests.merge(server, a, ["proof": proof, "dry_run": true])
            #expect(dry.status == 409 && dry.errorCode == "GROUP_LIMIT" && dry.errorReason == "too_many_groups", "\(dry.text)")
            let refused = try await MergeTests.merge(server, a, ["proof": proof])
            #expect(refused.status == 409 && refused.errorReason == "too_many_groups", "\(refused.text)")
            #expect((try await server.get("/v1/groups", bearer: a.accessToken).json["groups"] as? [Any])?.count == 2)
            #expect(try await server.get("/v1/users/me", bearer: b.accessToken).status == 200)

            // Within the limit it merges, and the memberships it brings are joined by the requester's hand.
            let c = try await server.signIn(.google, sub: "groups-c")
            let cGroup = try await GroupTests.family(server, c)
            let fine = try await MergeTests.merge(server, a, ["proof": try await MergeTests.proof(server, for: a, sub: "groups-c")])
            #expect(fine.status == 200 && fine.json["groups"] as? [String] == [cGroup], "\(fine.text)")
            let audit = try await server.get("/v1/admin/audit?user_id=\(a.userID)&type=group.member_joined", bearer: AdminTests.key)
            let joined = (audit.json["events"] as? [[String: Any]])?.first?["details"] as? [String: Any]
            #expect(joined?["actor"] as? String == a.userID && joined?["group_id"] as? String == cGroup, "\(audit.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aChallengeIsGoodOnlyWhileItsSignInIsRecentAndIssuingThemIsLimited(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            Self.configure(&$0)
            $0.rateLimits.enabled = true
        }) { server in
            // Rate-limit windows are aligned to the clock's hours: start just past one, so the story's 700 s stay in
            // one window whatever the time of day (a run at 05:49 crossed 06:00 and counted afresh).
            let intoHour = server.clock.now().timeIntervalSince1970.truncatingRemainder(dividingBy: 3600)
            server.clock.advance(by: 3600 - intoHour + 60)
            let phone = try await server.signIn(.apple, sub: "recent-apple")
            _ = try await server.signIn(.google, sub: "recent-google")
            server.clock.advance(by: 500)
            let proof = try await MergeTests.proof(server, for: phone, sub: "recent-google")
            // The challenge is 200 s old, still alive; the sign-in that asked for it is past the 600 s window.
            server.clock.advance(by: 200)
            let stale = try await MergeTests.merge(server, phone, ["proof": proof])
            #expect(stale.errorCode == "REAUTHENTICATION_REQUIRED", "\(stale.text)")
            #expect(try await server.get("/v1/users/me", bearer: phone.accessToken).status == 200)

            // Five challenges an hour per account (the link rate), the first one above among them.
            let fresh = try await server.signIn(.apple, sub: "recent-apple")
            var statuses: [Int] = []
            for _ in 0..<5 { statuses.append(try await server.post("/v1/users/me/merge/challenge", bearer: fresh.accessToken).status) }
            #expect(statuses == [200, 200, 200, 200, 429], "\(statuses)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func aRevertedMergesLosingVersionsAreEachSidesOwn(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let a = try await server.signIn(.apple, sub: "losers-a")
            try await MergeTests.put(server, a, "notes", "both", ["t": "a's secret"])
            server.clock.advance(by: 5)
            let b = try await server.signIn(.google, sub: "losers-b")
            try await MergeTests.put(server, b, "notes", "both", ["t": "b's secret"])
            let merged = try await MergeTests.merge(server, a, ["proof": try await MergeTests.proof(server, for: a, sub: "losers-b")])
            let mergeID = try #require(merged.json["merge_id"] as? String)
            #expect(try await server.post("/v1/admin/merges/\(mergeID)/revert", bearer: AdminTests.key).status == 200)
            let back = try await server.signIn(.google, sub: "losers-b")
            let seenByA = try await server.get("/v1/users/me/merges/\(mergeID)", bearer: a.accessToken)
            let seenByB = try await server.get("/v1/users/me/merges/\(mergeID)", bearer: back.accessToken)
            #expect(seenByA.status == 200 && seenByB.status == 200)
            #expect(!seenByA.text.contains("b's secret") && !seenByB.text.contains("a's secret"), "\(seenByA.text) \(seenByB.text)")
            #expect(seenByA.text.contains("a's secret"))
        }
    }

    /// `account.unmerged` never reaches the app's backend before the `account.merged` it undoes, even when the merge's
    /// event must be retried (they name two accounts, and wait for both).
    @Test func aMergesEventsArriveInTheOrderTheyHappened() async throws {
        let receiver = try await WebhookReceiver()
        try await TestServer.with(.sqlite, configure: {
            WebhookTests.configure(receiver)(&$0)
            Self.configure(&$0)
        }) { server in
            let a = try await server.signIn(.apple, sub: "order-a")
            _ = try await server.signIn(.google, sub: "order-b")
            #expect(try await receiver.waitFor(2).count == 2)
            try await WebhookTests.waitForRecordedAttempts(2, in: server.runtime)
            receiver.answer([500])
            let merged = try await MergeTests.merge(server, a, ["proof": try await MergeTests.proof(server, for: a, sub: "order-b")])
            let mergeID = try #require(merged.json["merge_id"] as? String)
            try await WebhookTests.waitForRecordedAttempts(3, in: server.runtime)
            #expect(try await server.post("/v1/admin/merges/\(mergeID)/revert", bearer: AdminTests.key).status == 200)
            // The unmerge is due now; the merge's retry only in 5 s.
            try await Task.sleep(for: .milliseconds(300))
            server.clock.advance(by: 6)
            let types = try await receiver.waitFor(5).map(\.type)
            #expect(types.count == 5)
            let lastMerged = try #require(types.lastIndex(of: "account.merged"))
            #expect(types.firstIndex(of: "account.unmerged").map { $0 > lastMerged } == true, "\(types)")
        }
        await receiver.stop()
    }
}
