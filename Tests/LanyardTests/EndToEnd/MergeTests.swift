import Foundation
import LanyardCore
import LanyardEmulator
import Testing

/// Merging two full accounts (reference section 15), end to end on both databases.
@Suite struct MergeTests {
    static func put(_ server: TestServer, _ session: Session, _ collection: String, _ id: String,
                    _ data: [String: Any]) async throws {
        let answer = try await server.request(.PUT, "/v1/data/\(collection)/\(id)", json: ["data": data],
                                              bearer: session.accessToken)
        #expect(answer.status == 200, "\(answer.text)")
    }

    /// A challenge for `session` and a Google token of `sub` carrying its nonce: the proof of the other account.
    static func proof(_ server: TestServer, for session: Session, provider: EmulatedProvider = .google,
                      sub: String) async throws -> [String: Any] {
        let challenge = try await server.post("/v1/users/me/merge/challenge", bearer: session.accessToken)
        #expect(challenge.status == 200, "\(challenge.text)")
        #expect(challenge.json["expires_in"] as? Int == 300)
        let nonce = try #require(challenge.json["nonce"] as? String)
        return ["provider": provider.rawValue, "id_token": try server.idToken(provider, sub: sub, nonce: nonce)]
    }

    static func merge(_ server: TestServer, _ session: Session, _ body: [String: Any],
                      key: String? = nil) async throws -> TestResponse {
        try await server.post("/v1/users/me/merge", body, bearer: session.accessToken,
                              headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }

    @Test(arguments: TestDatabase.available)
    func twoAccountsOfOnePersonBecomeOneWithTheirDataAndTheirSignInMethods(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let apple = try await server.signIn(.apple, sub: "ada-apple")
            try await Self.put(server, apple, "notes", "only-apple", ["t": "a"])
            try await Self.put(server, apple, "notes", "both", ["t": "apple's"])
            server.clock.advance(by: 5)
            // The other account has the name this one lacks: the merge fills the gap.
            let google = try Session(try await server.post("/v1/auth/signin/google", [
                "id_token": try server.idToken(.google, sub: "ada-google", email: "ada@example.com", name: "Ada Lovelace")]))
            try await Self.put(server, google, "notes", "only-google", ["t": "g"])
            try await Self.put(server, google, "notes", "both", ["t": "google's, newer"])
            let groupID = try await GroupTests.family(server, google)

            // A dry run says what would happen and changes nothing (the challenge stays usable).
            let proof = try await Self.proof(server, for: apple, sub: "ada-google")
            let dry = try await Self.merge(server, apple, ["proof": proof, "dry_run": true])
            #expect(dry.status == 200, "\(dry.text)")
            #expect(dry.json["dry_run"] as? Bool == true && dry.json["merge_id"] is NSNull)
            #expect(dry.json["records_moved"] as? Int == 2)
            #expect(try await server.get("/v1/users/me", bearer: google.accessToken).status == 200)
            #expect(try await server.get("/v1/data/notes/only-apple", bearer: google.accessToken).status == 404)

            let merged = try await Self.merge(server, apple, ["proof": proof], key: "merge-1")
            #expect(merged.status == 200, "\(merged.text)")
            let mergeID = try #require(merged.json["merge_id"] as? String)
            #expect(merged.json["into"] as? String == apple.userID && merged.json["from"] as? String == google.userID)
            #expect(merged.json["identities_moved"] as? [String] == ["google"])
            #expect(merged.json["records_moved"] as? Int == 2)
            let conflicts = try #require(merged.json["conflicts"] as? [[String: Any]])
            #expect(conflicts.count == 1 && conflicts.first?["id"] as? String == "both"
                    && conflicts.first?["winner"] as? String == "other")
            #expect(merged.json["groups"] as? [String] == [groupID])
            #expect(merged.json["session"] == nil)

            // The survivor: both sign-in methods (its own still primary), all the records, the clash settled above
            // both versions, the group.
            let me = try await server.get("/v1/users/me", bearer: apple.accessToken)
            #expect(me.identities.map { $0["provider"] as? String } == ["apple", "google"])
            #expect(me.identities.map { $0["primary"] as? Bool } == [true, false])
            #expect(me.json["display_name"] as? String == "Ada Lovelace")
            let both = try await server.get("/v1/data/notes/both", bearer: apple.accessToken)
            #expect((both.json["data"] as? [String: Any])?["t"] as? String == "google's, newer")
            #expect(both.json["version"] as? Int == 2)
            #expect(try await server.get("/v1/data/notes/only-google", bearer: apple.accessToken).status == 200)
            #expect(try await GroupTests.roles(server, groupID, as: apple) == [apple.userID: "owner"])
            // Signing in with Google now lands in the survivor.
            #expect(try await server.signIn(.google, sub: "ada-google").userID == apple.userID)

            // The absorbed account's tokens say where it went.
            let old = try await server.get("/v1/users/me", bearer: google.accessToken)
            #expect(old.status == 401 && old.errorCode == "ACCOUNT_MERGED")
            #expect(old.errorDetails["merged_into"] as? String == apple.userID)
            let refresh = try await server.refresh(google.refreshToken)
            #expect(refresh.errorCode == "ACCOUNT_MERGED")

            // Retried with the same key, or the same proof: the same merge, nothing moved twice.
            let again = try await Self.merge(server, apple, ["proof": proof], key: "merge-1")
            #expect(again.json["merge_id"] as? String == mergeID && again.json["records_moved"] as? Int == 2)
            let sameProof = try await Self.merge(server, apple, ["proof": proof])
            #expect(sameProof.json["merge_id"] as? String == mergeID)
            let notes = try await server.get("/v1/data/notes?limit=500", bearer: apple.accessToken)
            #expect((notes.json["records"] as? [Any])?.count == 3)

            // The report and the losing version, for 30 days.
            let details = try await server.get("/v1/users/me/merges/\(mergeID)", bearer: apple.accessToken)
            #expect((details.json["report"] as? [String: Any])?["merge_id"] as? String == mergeID)
            let losers = try #require(details.json["losing_versions"] as? [[String: Any]])
            #expect(losers.count == 1 && losers.first?["account_id"] as? String == apple.userID)
            #expect((losers.first?["data"] as? [String: Any])?["t"] as? String == "apple's")
            let stranger = try await server.signIn(.apple, sub: "stranger")
            #expect(try await server.get("/v1/users/me/merges/\(mergeID)", bearer: stranger.accessToken).status == 404)

            // After 30 days the losing versions are forgotten; the report stays.
            server.clock.advance(by: 31 * 86_400)
            try await AccountMerges(server.runtime.dependencies).forgetExpired()
            let fresh = try await server.signIn(.apple, sub: "ada-apple")
            let later = try await server.get("/v1/users/me/merges/\(mergeID)", bearer: fresh.accessToken)
            #expect((later.json["losing_versions"] as? [Any])?.isEmpty == true)
            #expect((later.json["report"] as? [String: Any])?["merge_id"] as? String == mergeID)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aProofWithoutThisSessionsFreshChallengeIsRefusedAndNothingChanges(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.rateLimits.link = .init(limit: 50, window: 3600) }) { server in
            let first = try await server.signIn(.apple, sub: "proof-a")
            _ = try await server.signIn(.google, sub: "proof-g")
            // No challenge at all; a token without a nonce.
            let bare = ["provider": "google", "id_token": try server.idToken(.google, sub: "proof-g")]
            var refused = try await Self.merge(server, first, ["proof": bare])
            #expect(refused.errorCode == "INVALID_PROVIDER_TOKEN" && refused.errorReason == "nonce_mismatch")
            // Another session's challenge.
            let otherDevice = try await server.signIn(.apple, sub: "proof-a")
            let othersProof = try await Self.proof(server, for: otherDevice, sub: "proof-g")
            _ = try await server.post("/v1/users/me/merge/challenge", bearer: first.accessToken)
            refused = try await Self.merge(server, first, ["proof": othersProof])
            #expect(refused.errorReason == "nonce_mismatch")
            // Stale: past its five minutes.
            let stale = try await Self.proof(server, for: first, sub: "proof-g")
            server.clock.advance(by: 301)
            refused = try await Self.merge(server, first, ["proof": stale])
            #expect(refused.errorReason == "nonce_mismatch" || refused.errorReason == "expired", "\(refused.text)")
            // A challenge needs a recent sign-in.
            server.clock.advance(by: 300)
            #expect(try await server.post("/v1/users/me/merge/challenge", bearer: first.accessToken).errorCode
                    == "REAUTHENTICATION_REQUIRED")
            let fresh = try await server.signIn(.apple, sub: "proof-a")
            // The same account twice; a provider account nobody has; a guest.
            var proof = try await Self.proof(server, for: fresh, provider: .apple, sub: "proof-a")
            refused = try await Self.merge(server, fresh, ["proof": proof])
            #expect(refused.status == 409 && refused.errorCode == "MERGE_CONFLICT" && refused.errorReason == "same_account")
            proof = try await Self.proof(server, for: fresh, sub: "nobody-has-this")
            #expect(try await Self.merge(server, fresh, ["proof": proof]).status == 404)
            let guest = try await server.anonymous()
            #expect(try await server.post("/v1/users/me/merge/challenge", bearer: guest.accessToken).errorReason == "anonymous")
            // A used challenge cannot be used again.
            let challenge = try await server.post("/v1/users/me/merge/challenge", bearer: fresh.accessToken)
            let nonce = try #require(challenge.json["nonce"] as? String)
            let used = ["provider": "google", "id_token": try server.idToken(.google, sub: "proof-g", nonce: nonce)]
            #expect(try await Self.merge(server, fresh, ["proof": used]).status == 200)
            _ = try await server.signIn(.google, sub: "proof-g2")
            let reused = ["provider": "google", "id_token": try server.idToken(.google, sub: "proof-g2", nonce: nonce)]
            refused = try await Self.merge(server, fresh, ["proof": reused])
            #expect(refused.errorReason == "nonce_mismatch")
            // Nothing changed for the refused ones: the Google account of the first attempts is the only one moved.
            let me = try await server.get("/v1/users/me", bearer: fresh.accessToken)
            #expect(me.identities.map { $0["provider"] as? String } == ["apple", "google"])
            // Bad bodies are refused by field.
            for (body, field) in [([:], "proof"), (["proof": ["provider": "google"]], "proof.id_token"),
                                  (["proof": bare, "keep": "both"], "keep"), (["proof": bare, "on_conflict": "x"], "on_conflict"),
                                  (["proof": bare, "release": "apple"], "release")] as [([String: Any], String)] {
                let bad = try await Self.merge(server, fresh, body)
                #expect(bad.status == 400 && bad.errorDetails["field"] as? String == field, "\(body): \(bad.text)")
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func twoAppleAccountsCollideUnlessOneIsReleasedAndKeepOtherHandsOverTheSession(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let work = try await server.signIn(.apple, sub: "apple-work")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g-work")],
                                          bearer: work.accessToken).status == 200)
            let home = try await server.signIn(.apple, sub: "apple-home")
            try await Self.put(server, home, "notes", "n", ["t": "home"])
            // Both hold an Apple account: refused, naming the provider.
            var proof = try await Self.proof(server, for: home, provider: .google, sub: "g-work")
            let collision = try await Self.merge(server, home, ["proof": proof, "keep": "other"])
            #expect(collision.status == 409 && collision.errorReason == "provider_collision")
            #expect(collision.errorDetails["providers"] as? [String] == ["apple"])
            // Released: home's Apple identity is detached; the work account survives and this device gets its session.
            proof = try await Self.proof(server, for: home, provider: .google, sub: "g-work")
            let merged = try await Self.merge(server, home, ["proof": proof, "keep": "other", "release": ["apple"]])
            #expect(merged.status == 200, "\(merged.text)")
            #expect(merged.json["into"] as? String == work.userID && merged.json["identities_released"] as? [String] == ["apple"])
            let session = try #require(merged.json["session"] as? [String: Any])
            let adopted = try #require(session["access_token"] as? String)
            let me = try await server.get("/v1/users/me", bearer: adopted)
            #expect(me.json["id"] as? String == work.userID)
            #expect(me.identities.map { $0["provider"] as? String } == ["apple", "google"])
            #expect(try await server.get("/v1/data/notes/n", bearer: adopted).status == 200)
            #expect(try await server.get("/v1/users/me", bearer: home.accessToken).errorCode == "ACCOUNT_MERGED")
            // The released Apple account is nobody's now: it signs up afresh.
            let again = try await server.signIn(.apple, sub: "apple-home")
            #expect(again.isNewUser && again.userID != work.userID && again.userID != home.userID)
        }
    }

    @Test(arguments: TestDatabase.available)
    func mergesOfTwoAccountsIntoEachOtherRacingEndInOne(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            for round in 0..<6 {
                let a = try await server.signIn(.apple, sub: "race-a-\(round)")
                let b = try await server.signIn(.google, sub: "race-b-\(round)")
                let proofOfB = try await Self.proof(server, for: a, sub: "race-b-\(round)")
                let proofOfA = try await Self.proof(server, for: b, provider: .apple, sub: "race-a-\(round)")
                async let intoA = Self.merge(server, a, ["proof": proofOfB])
                async let intoB = Self.merge(server, b, ["proof": proofOfA])
                let answers = try await [intoA, intoB]
                #expect(answers.filter { $0.status == 200 }.count == 1, "\(answers.map(\.text))")
                let loser = try #require(answers.first { $0.status != 200 })
                #expect(["ACCOUNT_MERGED", "MERGE_CONFLICT"].contains(loser.errorCode ?? ""), "\(loser.text)")
                // One account holds both identities.
                let winner = try #require(answers.first { $0.status == 200 })
                let into = try #require(winner.json["into"] as? String)
                let owner = try await server.signIn(.apple, sub: "race-a-\(round)")
                #expect(owner.userID == into)
                #expect(try await server.signIn(.google, sub: "race-b-\(round)").userID == into)
            }
        }
    }

    @Test func mergesCountAgainstTheLinkLimit() async throws {
        try await TestServer.with(.sqlite, configure: {
            $0.rateLimits.enabled = true
            $0.rateLimits.link = .init(limit: 2, window: 3600)
        }) { server in
            let account = try await server.signIn(.apple, sub: "limited")
            let bare = ["provider": "google", "id_token": try server.idToken(.google, sub: "limited-g")]
            for _ in 0..<2 { #expect(try await Self.merge(server, account, ["proof": bare]).errorReason == "nonce_mismatch") }
            let limited = try await Self.merge(server, account, ["proof": bare])
            #expect(limited.status == 429 && limited.errorCode == "RATE_LIMITED")
        }
    }

    @Test(arguments: TestDatabase.available)
    func anOperatorMergesAndRevertsWithinThirtyDays(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.adminKey = AdminTests.key }) { server in
            let key = AdminTests.key
            let a = try await server.signIn(.apple, sub: "op-a")
            try await Self.put(server, a, "notes", "mine", ["t": "a"])
            try await Self.put(server, a, "notes", "both", ["t": "a's"])
            server.clock.advance(by: 5)
            let b = try await server.signIn(.google, sub: "op-b")
            try await Self.put(server, b, "notes", "theirs", ["t": "b"])
            try await Self.put(server, b, "notes", "edited-later", ["t": "b"])
            try await Self.put(server, b, "notes", "both", ["t": "b's, newer"])

            let merged = try await server.post("/v1/admin/merges", ["into": a.userID, "from": b.userID], bearer: key)
            #expect(merged.status == 200, "\(merged.text)")
            let mergeID = try #require(merged.json["merge_id"] as? String)
            #expect(try await server.get("/v1/users/me", bearer: b.accessToken).errorCode == "ACCOUNT_MERGED")
            let listed = try await server.get("/v1/admin/merges?user_id=\(a.userID)", bearer: key)
            #expect((listed.json["merges"] as? [[String: Any]])?.map { $0["merge_id"] as? String } == [mergeID])
            #expect((listed.json["merges"] as? [[String: Any]])?.first?["actor"] as? String == "admin")
            #expect(try await server.post("/v1/admin/merges", ["into": a.userID, "from": b.userID], bearer: key)
                .errorReason == "already_merged")

            // The survivor edits one moved record: it stays with the survivor when the merge is reverted.
            try await Self.put(server, a, "notes", "edited-later", ["t": "a edited it"])
            let reverted = try await server.post("/v1/admin/merges/\(mergeID)/revert", bearer: key)
            #expect(reverted.status == 200, "\(reverted.text)")
            #expect(reverted.json["identities_returned"] as? Int == 1)
            #expect(reverted.json["records_returned"] as? Int == 2 && reverted.json["records_kept"] as? Int == 1)
            #expect(try await server.post("/v1/admin/merges/\(mergeID)/revert", bearer: key).errorReason == "already_reverted")

            // The absorbed account is back, with its Google sign-in and its records; each side has its own clash
            // version again, and the survivor's devices learn that `theirs` left.
            let back = try await server.signIn(.google, sub: "op-b")
            #expect(back.userID == b.userID)
            let theirs = try await server.get("/v1/data/notes/theirs", bearer: back.accessToken)
            #expect((theirs.json["data"] as? [String: Any])?["t"] as? String == "b")
            let bBoth = try await server.get("/v1/data/notes/both", bearer: back.accessToken)
            #expect((bBoth.json["data"] as? [String: Any])?["t"] as? String == "b's, newer")
            let aBoth = try await server.get("/v1/data/notes/both", bearer: a.accessToken)
            #expect((aBoth.json["data"] as? [String: Any])?["t"] as? String == "a's")
            #expect(try await server.get("/v1/data/notes/theirs", bearer: a.accessToken).status == 404)
            let kept = try await server.get("/v1/data/notes/edited-later", bearer: a.accessToken)
            #expect((kept.json["data"] as? [String: Any])?["t"] as? String == "a edited it")
            let me = try await server.get("/v1/users/me", bearer: a.accessToken)
            #expect(me.identities.map { $0["provider"] as? String } == ["apple"])
            let audit = try await server.get("/v1/admin/audit?user_id=\(b.userID)&limit=50", bearer: key)
            #expect(audit.text.contains("account.unmerged"))

            // A moved sign-in method unlinked since: the revert is refused, and nothing changes.
            let again = try await server.post("/v1/admin/merges", ["into": a.userID, "from": b.userID], bearer: key)
            let secondID = try #require(again.json["merge_id"] as? String)
            let fresh = try await server.signIn(.apple, sub: "op-a")
            #expect(try await server.delete("/v1/auth/link/google", bearer: fresh.accessToken).status == 200)
            let refused = try await server.post("/v1/admin/merges/\(secondID)/revert", bearer: key)
            #expect(refused.status == 409 && refused.errorReason == "changed_since")
            // Past 30 days: too old.
            server.clock.advance(by: 31 * 86_400)
            #expect(try await server.post("/v1/admin/merges/\(secondID)/revert", bearer: key).errorReason == "too_old")
        }
    }

    @Test(arguments: TestDatabase.available)
    func streamsSeeTheMovedRecordsAndTheAbsorbedAccountsStreamsEnd(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: ChangeFeedTests.quick) { server in
            let kept = try await server.signIn(.apple, sub: "stream-kept")
            let absorbed = try await server.signIn(.google, sub: "stream-absorbed")
            try await Self.put(server, absorbed, "notes", "moving", ["t": "along"])
            let keptStream = try await ChangeFeedTests.stream(server, kept)
            defer { keptStream.close() }
            _ = try await keptStream.events(until: "ready")
            let absorbedStream = try await ChangeFeedTests.stream(server, absorbed)
            defer { absorbedStream.close() }
            _ = try await absorbedStream.events(until: "ready")

            let proof = try await Self.proof(server, for: kept, sub: "stream-absorbed")
            #expect(try await Self.merge(server, kept, ["proof": proof]).status == 200)
            let moved = try #require(try await keptStream.next())
            #expect(moved.name == "change" && moved.json["id"] as? String == "moving")
            let end = try #require(try await absorbedStream.events(until: "end").last)
            #expect(end.json["reason"] as? String == "account_merged" && end.json["into"] as? String == kept.userID)
        }
    }
}
