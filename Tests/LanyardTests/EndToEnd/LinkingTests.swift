import Foundation
import Testing
import LanyardStore

/// The account-linking plan's acceptance criteria, end to end.
@Suite struct LinkingTests {
    @Test(arguments: TestDatabase.available)
    func linkGoogleFromAppleThenSignInOnASecondDevice(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let iPhone = try await server.signIn(.apple, sub: "apple-ada", email: "ada@privaterelay.appleid.com")
            server.clock.advance(by: 5)
            let linked = try await server.post("/v1/auth/link/google",
                                               ["id_token": try server.idToken(.google, sub: "google-ada", email: "ada@work.com")],
                                               bearer: iPhone.accessToken)
            #expect(linked.status == 200)
            #expect(linked.json["linked_providers"] as? [String] == ["apple", "google"])
            #expect(linked.json["message"] as? String == "Google account linked")
            let identities = try #require((linked.json["user"] as? [String: Any])?["identities"] as? [[String: Any]])
            #expect(identities.map { $0["provider"] as? String } == ["apple", "google"])
            #expect(identities.map { $0["email"] as? String } == ["ada@privaterelay.appleid.com", "ada@work.com"])
            // Linking never signs anyone out.
            #expect(try await server.get("/v1/users/me", bearer: iPhone.accessToken).status == 200)
            #expect(try await server.refresh(iPhone.refreshToken).status == 200)

            let android = try await server.signIn(.google, sub: "google-ada")
            #expect(android.userID == iPhone.userID)
            #expect(!android.isNewUser)
            #expect(android.linkedProviders == ["apple", "google"])
            let me = try await server.get("/v1/users/me", bearer: android.accessToken)
            // The primary (first) identity's email represents the account; different emails are normal.
            #expect(me.json["email"] as? String == "ada@privaterelay.appleid.com")
        }
    }

    @Test(arguments: TestDatabase.available)
    func linkAppleFromGoogle(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let android = try await server.signIn(.google, sub: "google-bob")
            let linked = try await server.post("/v1/auth/link/apple", ["id_token": try server.idToken(.apple, sub: "apple-bob")],
                                               bearer: android.accessToken)
            #expect(linked.json["linked_providers"] as? [String] == ["google", "apple"])
            let iPhone = try await server.signIn(.apple, sub: "apple-bob")
            #expect(iPhone.userID == android.userID)
            #expect(iPhone.linkedProviders == ["google", "apple"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func aGuestWhoLinksSeesTheirAccountAsItNowIs(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let guest = try await server.anonymous()
            let linked = try await server.post("/v1/auth/link/google",
                                               ["id_token": try server.idToken(.google, sub: "g-guest", email: "kim@gmail.com",
                                                                               name: "Kim Lee")],
                                               bearer: guest.accessToken)
            #expect(linked.status == 200)
            let me = try await server.get("/v1/users/me", bearer: guest.accessToken)
            #expect(linked.sessionAccount == me.meAccount)
            #expect(me.json["is_anonymous"] as? Bool == false)
            #expect(me.json["display_name"] as? String == "Kim Lee")
            #expect(me.json["linked_providers"] as? [String] == ["google"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func conflictsAreExplained(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "apple-1")
            let bob = try await server.signIn(.google, sub: "google-bob")

            let again = try await server.post("/v1/auth/link/apple", ["id_token": try server.idToken(.apple, sub: "apple-1")],
                                              bearer: ada.accessToken)
            #expect(again.status == 409)
            #expect(again.errorCode == "PROVIDER_CONFLICT")
            #expect(again.errorReason == "already_linked")

            let secondApple = try await server.post("/v1/auth/link/apple", ["id_token": try server.idToken(.apple, sub: "apple-2")],
                                                    bearer: ada.accessToken)
            #expect(secondApple.errorReason == "provider_already_linked")

            let taken = try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "google-bob")],
                                              bearer: ada.accessToken)
            #expect(taken.errorReason == "identity_in_use")
            #expect(taken.error["message"] as? String == "This Google account is already linked to a different account")
            #expect(taken.errorDetails["merge_available"] == nil)
            // Nothing moved: Bob still signs into Bob's account.
            #expect(try await server.signIn(.google, sub: "google-bob").userID == bob.userID)
        }
    }

    @Test(arguments: TestDatabase.available)
    func unlinkingFollowsTheRules(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "apple-unlink")
            let only = try await server.delete("/v1/auth/link/apple", bearer: ada.accessToken)
            #expect(only.status == 400)
            #expect(only.errorCode == "CANNOT_UNLINK_ONLY_PROVIDER")
            #expect(only.error["message"] as? String == "Cannot unlink your only authentication method")
            #expect(try await server.delete("/v1/auth/link/google", bearer: ada.accessToken).errorCode == "PROVIDER_NOT_LINKED")
            #expect(try await server.delete("/v1/auth/link/google", bearer: ada.accessToken).status == 404)

            _ = try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "google-unlink")],
                                      bearer: ada.accessToken)
            server.clock.advance(by: 601)
            let stale = try await server.delete("/v1/auth/link/google", bearer: ada.accessToken)
            #expect(stale.status == 401)
            #expect(stale.errorCode == "REAUTHENTICATION_REQUIRED")

            let fresh = try Session(try await server.post("/v1/auth/reauthenticate/apple",
                                                          ["id_token": try server.idToken(.apple, sub: "apple-unlink")],
                                                          bearer: ada.accessToken))
            #expect(fresh.userID == ada.userID)
            // The old session ended; the new one has a fresh auth_time.
            #expect(try await server.get("/v1/users/me", bearer: ada.accessToken).status == 401)
            let unlinked = try await server.delete("/v1/auth/link/google", bearer: fresh.accessToken)
            #expect(unlinked.status == 200)
            #expect(unlinked.json["linked_providers"] as? [String] == ["apple"])

            // The mapping is gone: that Google account now signs up afresh, and can be linked again later.
            let newcomer = try await server.signIn(.google, sub: "google-unlink")
            #expect(newcomer.isNewUser)
            #expect(newcomer.userID != ada.userID)
        }
    }

    @Test(arguments: TestDatabase.available)
    func reauthenticationOnlyAcceptsTheAccountsOwnIdentities(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "apple-own")
            _ = try await server.signIn(.google, sub: "google-someone-else")
            _ = try await server.signIn(.apple, sub: "apple-someone-else")
            // Another person's identity, of a provider the account has, of one it has not, or nobody's yet: each
            // is refused as not this account's, never as "no such provider linked".
            for (provider, sub, hasProvider) in [("apple", "apple-someone-else", true), ("google", "google-someone-else", false),
                                                 ("apple", "apple-nobody", true), ("google", "google-nobody", false)] {
                let answer = try await server.post("/v1/auth/reauthenticate/\(provider)",
                                                   ["id_token": try server.idToken(provider == "apple" ? .apple : .google, sub: sub)],
                                                   bearer: ada.accessToken)
                #expect(answer.status == 403, "\(sub)")
                #expect(answer.errorCode == "FORBIDDEN", "\(sub)")
                #expect(answer.errorReason == "identity_not_on_account", "\(sub)")
                let message = answer.error["message"] as? String ?? ""
                #expect(message.contains(hasProvider ? "not the one linked" : "not one of your account's sign-in methods"))
            }
            #expect(try await server.get("/v1/users/me", bearer: ada.accessToken).status == 200)
        }
    }

    /// The guard a link writes under (the account is read without a lock): an account merged away or deleted
    /// since the read refuses the identity, and every write held with it is undone.
    @Test(arguments: TestDatabase.available)
    func aLinkIntoAnAccountThatIsGoneWritesNothing(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let target = try await server.signIn(.apple, sub: "guard-target")
            let merged = try await server.anonymous()
            let deleted = try await server.anonymous()
            let db = server.runtime.database
            try await db.transaction { connection in
                try await UserStore(connection).markMerged(id: merged.userID, into: target.userID, at: Date())
                try await UserStore(connection).delete(id: deleted.userID)
            }
            for (index, userID) in [merged.userID, deleted.userID].enumerated() {
                let identity = IdentityRecord(id: "guarded-\(index)", userID: userID, provider: "google",
                                              providerUserID: "guarded-sub-\(index)", email: nil, emailVerified: false,
                                              isPrivateEmail: false, linkedAt: Date(), lastSignInAt: nil)
                await #expect(throws: StoreError.notNullViolation) {
                    try await db.transaction { connection in
                        try await IdentityStore(connection).link(identity)
                        try await UserStore(connection).setAnonymous(id: userID, false, at: Date())
                        try await AuditStore(connection).append(AuditEntry(at: Date(), event: "identity.linked", userID: userID,
                                                                           sessionID: nil, clientIP: nil, details: nil))
                    }
                }
                let written = try await db.read { connection in
                    (try await IdentityStore(connection).find(provider: "google", providerUserID: "guarded-sub-\(index)"),
                     try await AuditStore(connection).entries(userID: userID))
                }
                #expect(written.0 == nil)
                #expect(written.1.filter { $0.event == "identity.linked" }.isEmpty)
            }
            let guest = try await db.read { try await UserStore($0).find(id: merged.userID) }
            #expect(guest?.isAnonymous == true)
            // Over HTTP, the merged guest's old session is refused before any of this.
            let refused = try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "late")],
                                                bearer: merged.accessToken)
            #expect(refused.errorCode == "UNAUTHORIZED")
        }
    }

    /// A double tap, and a second Google account in the same instant: one link wins, the others are told why not.
    @Test(arguments: TestDatabase.available)
    func oneAccountRacingToLinkLinksOnceAndExplainsTheRest(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "double-tap")
            let same = try server.idToken(.google, sub: "double-tap-google")
            let other = try server.idToken(.google, sub: "double-tap-other-google")
            let answers = try await withThrowingTaskGroup(of: (String, TestResponse).self) { group in
                for index in 0..<10 {
                    let token = index == 5 ? other : same
                    group.addTask { (token, try await server.post("/v1/auth/link/google", ["id_token": token], bearer: ada.accessToken)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let winners = answers.filter { $0.1.status == 200 }
            #expect(winners.count == 1)
            let winner = try #require(winners.first?.0)
            for (token, answer) in answers where answer.status != 200 {
                #expect(answer.errorReason == (token == winner ? "already_linked" : "provider_already_linked"))
            }
            let me = try await server.get("/v1/users/me", bearer: ada.accessToken)
            #expect(me.json["linked_providers"] as? [String] == ["apple", "google"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func manyAccountsLinkingAtOnceEachKeepTheirOwn(database: TestDatabase) async throws {
        // On PostgreSQL these links share commits (`GroupCommit`): each must still land in its own account.
        try await TestServer.with(database) { server in
            var sessions: [Session] = []
            for index in 0..<24 { sessions.append(try await server.signIn(.apple, sub: "many-links-\(index)")) }
            let answers = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
                for (index, session) in sessions.enumerated() {
                    let token = try server.idToken(.google, sub: "many-links-google-\(index)")
                    group.addTask { (index, try await server.post("/v1/auth/link/google", ["id_token": token], bearer: session.accessToken)) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            for (index, session) in sessions.enumerated() {
                #expect(answers[index]?.status == 200, "link \(index)")
                let me = try await server.get("/v1/users/me", bearer: session.accessToken)
                #expect(me.json["linked_providers"] as? [String] == ["apple", "google"])
                #expect(try await server.signIn(.google, sub: "many-links-google-\(index)").userID == session.userID)
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func aLinkAfterAnUnlinkComesLastInTheAccountsOrder(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "order-apple")
            let google = try server.idToken(.google, sub: "order-google")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": google], bearer: ada.accessToken).status == 200)
            #expect(try await server.delete("/v1/auth/link/apple", bearer: ada.accessToken).status == 200)
            let relinked = try await server.post("/v1/auth/link/apple", ["id_token": try server.idToken(.apple, sub: "order-apple")],
                                                 bearer: ada.accessToken)
            #expect(relinked.status == 200)
            #expect(relinked.json["linked_providers"] as? [String] == ["google", "apple"])
            let me = try await server.get("/v1/users/me", bearer: ada.accessToken)
            #expect(me.json["linked_providers"] as? [String] == ["google", "apple"], "as stored, not only as answered")
        }
    }

    @Test(arguments: TestDatabase.available)
    func manyAccountsRacingToLinkOneIdentityLeaveItOnOne(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var sessions: [Session] = []
            for index in 0..<12 { sessions.append(try await server.signIn(.apple, sub: "racer-\(index)")) }
            let token = try server.idToken(.google, sub: "contested")
            let responses = try await withThrowingTaskGroup(of: (String, TestResponse).self) { group in
                for session in sessions {
                    group.addTask {
                        (session.userID, try await server.post("/v1/auth/link/google", ["id_token": token],
                                                               bearer: session.accessToken))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let winners = responses.filter { $0.1.status == 200 }
            #expect(winners.count == 1)
            #expect(responses.filter { $0.1.errorReason == "identity_in_use" }.count == 11)
            #expect(try await server.signIn(.google, sub: "contested").userID == winners.first?.0)
        }
    }
}

@Suite struct AccountDeletionTests {
    @Test(arguments: TestDatabase.available)
    func deletingTheAccountEndsEverythingAndFreesItsIdentities(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "apple-delete")
            _ = try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "google-delete")],
                                      bearer: ada.accessToken)
            let otherDevice = try await server.signIn(.google, sub: "google-delete")
            #expect(try await server.delete("/v1/users/me", bearer: ada.accessToken).status == 204)
            #expect(try await server.get("/v1/users/me", bearer: ada.accessToken).errorCode == "UNAUTHORIZED")
            #expect(try await server.get("/v1/users/me", bearer: otherDevice.accessToken).errorCode == "UNAUTHORIZED")
            #expect(try await server.refresh(otherDevice.refreshToken).errorCode == "INVALID_REFRESH_TOKEN")

            let reborn = try await server.signIn(.apple, sub: "apple-delete")
            #expect(reborn.isNewUser)
            #expect(reborn.userID != ada.userID)
            #expect(reborn.linkedProviders == ["apple"])
            let audit = try await server.runtime.database.read { try await AuditStore($0).entries(event: "user.deleted") }
            #expect(audit.map(\.userID) == [ada.userID])
        }
    }

    /// Sign-ins read the identity before they write the session; one that read it just before the account was
    /// deleted must sign up afresh, like every sign-in after the deletion, never fail.
    @Test(arguments: TestDatabase.available)
    func signInsRacingTheAccountsDeletionAllSucceed(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            for round in 0..<6 {
                let sub = "apple-racing-deletion-\(round)"
                let doomed = try await server.signIn(.apple, sub: sub)
                let token = try server.idToken(.apple, sub: sub)
                let (deletion, signIns) = try await server.racingDeletion(by: doomed, count: 24, deletingAfter: 8) { _ in
                    try await server.post("/v1/auth/signin/apple", ["id_token": token])
                }
                #expect(deletion?.status == 204)
                #expect(signIns.map(\.status) == Array(repeating: 200, count: 24), "\(signIns.map(\.text).filter { !$0.contains("access_token") })")
                // Those that signed up afresh share one new account, the one the identity now signs into.
                let after = try await server.signIn(.apple, sub: sub)
                #expect(after.userID != doomed.userID)
                let landed = Set(try signIns.map { try Session($0).userID })
                #expect(landed.isSubset(of: [doomed.userID, after.userID]))
            }
        }
    }

    /// Refreshes read the token before they rotate it; one whose session goes with the account in between is
    /// refused like a refresh after the deletion, never fails.
    @Test(arguments: TestDatabase.available)
    func refreshesRacingTheAccountsDeletionAreRefusedOrServed(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            for round in 0..<4 {
                let sub = "google-racing-deletion-\(round)"
                var devices: [Session] = []
                for _ in 0..<24 { devices.append(try await server.signIn(.google, sub: sub)) }
                let doomed = devices[0]
                let refreshes = devices.map(\.refreshToken)
                let (deletion, answers) = try await server.racingDeletion(by: doomed, count: refreshes.count, deletingAfter: 8) { index in
                    try await server.refresh(refreshes[index])
                }
                #expect(deletion?.status == 204)
                let unexpected = answers.filter { $0.status != 200 && $0.errorCode != "INVALID_REFRESH_TOKEN" }
                #expect(unexpected.isEmpty, "\(unexpected.map(\.text))")
                // Whatever a refresh was answered with, nothing of the account is left to refresh.
                for answer in answers where answer.status == 200 {
                    #expect(try await server.refresh(try Session(answer).refreshToken).errorCode == "INVALID_REFRESH_TOKEN")
                }
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func reauthenticationsRacingTheAccountsDeletionAreServedOrRefused(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            for round in 0..<4 {
                let sub = "apple-reauth-racing-deletion-\(round)"
                // Two devices: each reauthentication ends the session it is made with.
                let doomed = try await server.signIn(.apple, sub: sub)
                let deleter = try await server.signIn(.apple, sub: sub)
                let token = try server.idToken(.apple, sub: sub)
                let (deletion, answers) = try await server.racingDeletion(by: deleter, count: 16, deletingAfter: 6) { _ in
                    try await server.post("/v1/auth/reauthenticate/apple", ["id_token": token], bearer: doomed.accessToken)
                }
                #expect(deletion?.status == 204)
                let unexpected = answers.filter { $0.status != 200 && $0.errorCode != "UNAUTHORIZED" }
                #expect(unexpected.isEmpty, "\(unexpected.map(\.text))")
            }
        }
    }

    /// A stolen or replayed session re-authenticating many times at once: one new session, as one at a time would
    /// give; the rest find the old session ended (the new session is what may delete the account or unlink).
    @Test(arguments: TestDatabase.available)
    func oneSessionReauthenticatesOnceHoweverManyRequestsRace(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "apple-reauth-racing-itself")
            let token = try server.idToken(.apple, sub: "apple-reauth-racing-itself")
            let answers = try await server.concurrently(12) {
                try await server.post("/v1/auth/reauthenticate/apple", ["id_token": token], bearer: ada.accessToken)
            }
            #expect(answers.filter { $0.status == 200 }.count == 1, "\(answers.map(\.status))")
            #expect(answers.allSatisfy { $0.status == 200 || ($0.status == 401 && $0.errorCode == "UNAUTHORIZED") },
                    "\(answers.map(\.text))")
            let sessions = try await server.get("/v1/sessions", bearer: try Session(try #require(
                answers.first { $0.status == 200 })).accessToken)
            #expect((sessions.json["sessions"] as? [[String: Any]])?.count == 1, "\(sessions.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func deletionNeedsARecentSignIn(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let ada = try await server.signIn(.apple, sub: "apple-stale")
            server.clock.advance(by: 601)
            let refreshed = try Session(try await server.refresh(ada.refreshToken))
            // Refreshing keeps the session's original auth_time.
            #expect(try await server.delete("/v1/users/me", bearer: refreshed.accessToken).errorCode == "REAUTHENTICATION_REQUIRED")
            #expect(try await server.get("/v1/users/me", bearer: refreshed.accessToken).status == 200)
        }
    }

    /// The primary sign-in method (reference section 1): the one the account was made with, then the oldest remaining.
    @Test(arguments: TestDatabase.available)
    func thePrimarySignInMethodIsTheFirstAndPassesToTheOldestRemaining(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.adminKey = AdminTests.key }) { server in
            func primaries(_ bearer: String) async throws -> [String: Bool] {
                let me = try await server.get("/v1/users/me", bearer: bearer)
                return Dictionary(uniqueKeysWithValues: me.identities.map {
                    ($0["provider"] as? String ?? "", $0["primary"] as? Bool ?? false)
                })
            }
            // A guest upgraded with Google: Google is primary.
            let guest = try await server.anonymous()
            let upgraded = try await server.signIn(.google, sub: "primary-g", bearer: guest.accessToken)
            #expect(upgraded.userID == guest.userID)
            #expect(try await primaries(upgraded.accessToken) == ["google": true])
            server.clock.advance(by: 1)
            let linked = try await server.post("/v1/auth/link/apple", ["id_token": try server.idToken(.apple, sub: "primary-a")],
                                               bearer: upgraded.accessToken)
            #expect(linked.identities.map { $0["primary"] as? Bool } == [true, false])
            #expect(try await primaries(upgraded.accessToken) == ["google": true, "apple": false])
            let admin = try await server.get("/v1/admin/users/\(upgraded.userID)", bearer: AdminTests.key)
            #expect((admin.json["identities"] as? [[String: Any]])?.map { $0["primary"] as? Bool } == [true, false])
            // Google unlinked: Apple, the oldest remaining, becomes the primary.
            #expect(try await server.delete("/v1/auth/link/google", bearer: upgraded.accessToken).status == 200)
            #expect(try await primaries(upgraded.accessToken) == ["apple": true])
            // A guest has none; GoTrue's identities are unchanged.
            #expect(try await server.get("/v1/users/me", bearer: try await server.anonymous().accessToken).identities.isEmpty)
        }
    }

    /// The review's race: two unlinks at once, each of the other method. On PostgreSQL one statement that joined
    /// the identities to the locked account answered them as they were before the other commit, and both went
    /// through: an account with no way in. Exactly one may win, every time.
    @Test(arguments: TestDatabase.available)
    func racingUnlinksNeverRemoveTheLastWayIn(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.rateLimits.enabled = false }) { server in
            for round in 0..<8 {
                let ada = try await server.signIn(.apple, sub: "race-apple-\(round)")
                let linked = try await server.post("/v1/auth/link/google",
                                                   ["id_token": try server.idToken(.google, sub: "race-google-\(round)")],
                                                   bearer: ada.accessToken)
                #expect(linked.status == 200)
                async let apple = server.delete("/v1/auth/link/apple", bearer: ada.accessToken)
                async let google = server.delete("/v1/auth/link/google", bearer: ada.accessToken)
                let statuses = [try await apple.status, try await google.status].sorted()
                #expect(statuses == [200, 400], "round \(round): \(statuses)")
                let me = try await server.get("/v1/users/me", bearer: ada.accessToken)
                #expect(me.identities.count == 1, "round \(round)")
            }
        }
    }
}
