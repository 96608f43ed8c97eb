import Foundation
import Testing
import LanyardCore
import LanyardStore

@Suite struct GuestTests {
    @Test(arguments: TestDatabase.available)
    func aGuestGetsAnAnonymousAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let guest = try await server.anonymous()
            #expect(guest.isAnonymous)
            #expect(guest.isNewUser)
            #expect(guest.linkedProviders.isEmpty)
            #expect(guest.claims["is_anonymous"] as? Bool == true)
            #expect(guest.claims["amr"] as? [String] == ["anonymous"])
            let me = try await server.get("/v1/users/me", bearer: guest.accessToken)
            #expect(me.json["is_anonymous"] as? Bool == true)
            #expect(me.json["identities"] as? [Any] != nil)
            #expect(try Session(try await server.refresh(guest.refreshToken)).isAnonymous)
        }
    }

    @Test(arguments: TestDatabase.available)
    func signingInAsAGuestUpgradesTheSameAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let guest = try await server.anonymous()
            let upgraded = try await server.signIn(.apple, sub: "apple-new", bearer: guest.accessToken)
            #expect(upgraded.userID == guest.userID)
            #expect(!upgraded.isAnonymous)
            #expect(upgraded.mergedFrom == nil)
            #expect(upgraded.linkedProviders == ["apple"])
            #expect(upgraded.claims["is_anonymous"] as? Bool == false)
            #expect(try await server.signIn(.apple, sub: "apple-new").userID == guest.userID)
        }
    }

    @Test(arguments: TestDatabase.available)
    func linkingAsAGuestUpgradesTheSameAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let guest = try await server.anonymous()
            let linked = try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g-new")],
                                               bearer: guest.accessToken)
            #expect(linked.status == 200)
            #expect((linked.json["user"] as? [String: Any])?["is_anonymous"] as? Bool == false)
            #expect(try await server.signIn(.google, sub: "g-new").userID == guest.userID)
        }
    }

    /// The guest story: data made as a guest survives signing in with an identity that already has an account.
    @Test(arguments: TestDatabase.available)
    func aGuestSigningIntoAnExistingAccountIsMergedIntoIt(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let existing = try await server.signIn(.apple, sub: "apple-owner")
            let guest = try await server.anonymous()
            _ = try await server.request(.PATCH, "/v1/users/me", json: ["display_name": "Made as a guest"],
                                         bearer: guest.accessToken)

            let merged = try await server.signIn(.apple, sub: "apple-owner", bearer: guest.accessToken)
            #expect(merged.userID == existing.userID)
            #expect(merged.mergedFrom == guest.userID)
            #expect(!merged.isAnonymous)
            let me = try await server.get("/v1/users/me", bearer: merged.accessToken)
            #expect(me.json["display_name"] as? String == "Made as a guest")
            // The guest's own session is over; the device now holds the account's.
            #expect(try await server.get("/v1/users/me", bearer: guest.accessToken).status == 401)
            #expect(try await server.refresh(guest.refreshToken).errorCode == "INVALID_REFRESH_TOKEN")

            // The response was lost; the app retries with the same (now merged) guest bearer: same account, no error.
            let retried = try await server.signIn(.apple, sub: "apple-owner", bearer: guest.accessToken)
            #expect(retried.userID == existing.userID)
            #expect(retried.mergedFrom == guest.userID)
            let audit = try await server.runtime.database.read { try await AuditStore($0).entries(event: "account.merged") }
            #expect(audit.count == 1)
            #expect(audit.first?.details?.contains(guest.userID) == true)
        }
    }

    @Test(arguments: TestDatabase.available)
    func linkingAsAGuestToAnIdentityInUseOffersTheMerge(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            _ = try await server.signIn(.google, sub: "g-owner")
            let guest = try await server.anonymous()
            let response = try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g-owner")],
                                                 bearer: guest.accessToken)
            #expect(response.status == 409)
            #expect(response.errorReason == "identity_in_use")
            #expect(response.errorDetails["merge_available"] as? Bool == true)
            #expect(try await server.get("/v1/users/me", bearer: guest.accessToken).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func concurrentMergesOfOneGuestMergeOnce(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.apple, sub: "apple-busy")
            let guest = try await server.anonymous()
            let token = try server.idToken(.apple, sub: "apple-busy")
            let responses = try await server.concurrently(8) {
                try await server.post("/v1/auth/signin/apple", ["id_token": token], bearer: guest.accessToken)
            }
            #expect(responses.allSatisfy { $0.status == 200 })
            let sessions = try responses.map(Session.init)
            #expect(sessions.allSatisfy { $0.userID == owner.userID && $0.mergedFrom == guest.userID })
            let audit = try await server.runtime.database.read { try await AuditStore($0).entries(event: "account.merged") }
            #expect(audit.count == 1)
        }
    }

    /// A guest links Google on one device while signing in with an Apple account that already exists on
    /// another: either the link lands first (the guest becomes an account of its own and the sign-in is a
    /// plain one) or the merge does (the link is refused). Never an identity on a merged account.
    @Test(arguments: TestDatabase.available)
    func aLinkRacingTheGuestsMergeNeverLandsOnTheMergedAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.apple, sub: "merge-target")
            let appleToken = try server.idToken(.apple, sub: "merge-target")
            var outcomes: Set<String> = []
            for round in 0..<10 {
                let guest = try await server.anonymous()
                let googleSub = "racing-link-\(round)"
                let googleToken = try server.idToken(.google, sub: googleSub)
                async let link = server.post("/v1/auth/link/google", ["id_token": googleToken], bearer: guest.accessToken)
                async let signIn = server.post("/v1/auth/signin/apple", ["id_token": appleToken], bearer: guest.accessToken)
                let (linked, signedIn) = try await (link, signIn)
                let session = try Session(signedIn)
                #expect(session.userID == owner.userID)
                if linked.status == 200 {
                    outcomes.insert("link first")
                    #expect(session.mergedFrom == nil)
                    #expect(try await server.signIn(.google, sub: googleSub).userID == guest.userID)
                } else {
                    outcomes.insert("merge first")
                    #expect(linked.errorCode == "UNAUTHORIZED")
                    #expect(session.mergedFrom == guest.userID)
                    #expect(try await server.signIn(.google, sub: googleSub).isNewUser)
                }
            }
            let stranded = try await server.runtime.database.read { connection in
                try await connection.query("""
                    SELECT i.id FROM identities i JOIN users u ON u.id = i.user_id WHERE u.merged_into IS NOT NULL
                    """)
            }
            #expect(stranded.isEmpty)
            // Both orders are legitimate; record which ones this run saw.
            print("link against merge: \(outcomes.sorted())")
        }
    }

    /// A guest linking Apple and Google at once gets both, each at its own place in the account's order.
    @Test(arguments: TestDatabase.available)
    func aGuestLinkingBothProvidersAtOnceKeepsBothInOneOrder(database: TestDatabase) async throws {
        // Both links read an account with no identity and would take the first place in its order; the
        // second to commit finds the place taken and links after the first.
        try await TestServer.with(database) { server in
            for round in 0..<6 {
                let guest = try await server.anonymous()
                let apple = try server.idToken(.apple, sub: "both-apple-\(round)")
                let google = try server.idToken(.google, sub: "both-google-\(round)")
                async let linkApple = server.post("/v1/auth/link/apple", ["id_token": apple], bearer: guest.accessToken)
                async let linkGoogle = server.post("/v1/auth/link/google", ["id_token": google], bearer: guest.accessToken)
                let (first, second) = try await (linkApple, linkGoogle)
                #expect(first.status == 200)
                #expect(second.status == 200)
                let me = try await server.get("/v1/users/me", bearer: guest.accessToken)
                let providers = try #require(me.json["linked_providers"] as? [String])
                #expect(Set(providers) == ["apple", "google"])
                #expect(me.json["is_anonymous"] as? Bool == false)
                let positions = try await server.runtime.database.read { connection in
                    try await connection.query("SELECT link_position FROM identities WHERE user_id = $1", [.text(guest.userID)])
                        .map { try $0.integer("link_position") }
                }
                #expect(Set(positions) == [1, 2])
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func purgingRemovesOnlyIdleGuests(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let idleGuest = try await server.anonymous()
            let idleMember = try await server.signIn(.apple, sub: "apple-idle")
            server.clock.advance(by: 31 * 86_400)
            let activeGuest = try await server.anonymous()
            let purged = try await AnonymousAccounts(server.runtime.dependencies)
                .purge(idleSince: server.clock.now().addingTimeInterval(-30 * 86_400))
            #expect(purged == 1)
            let remaining = try await server.runtime.database.read { connection in
                [try await UserStore(connection).find(id: idleGuest.userID) != nil,
                 try await UserStore(connection).find(id: idleMember.userID) != nil,
                 try await UserStore(connection).find(id: activeGuest.userID) != nil]
            }
            #expect(remaining == [false, true, true])
        }
    }
}

@Suite struct RateLimitTests {
    @Test(arguments: TestDatabase.available)
    func linkAttemptsAreLimitedPerAccount(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.rateLimits.enabled = true }) { server in
            let ada = try await server.signIn(.apple, sub: "apple-limited")
            for _ in 0..<5 {
                let attempt = try await server.post("/v1/auth/link/google", ["id_token": "not-a-token"], bearer: ada.accessToken)
                #expect(attempt.errorCode == "INVALID_PROVIDER_TOKEN")
            }
            let limited = try await server.post("/v1/auth/link/google",
                                                ["id_token": try server.idToken(.google, sub: "g-limited")],
                                                bearer: ada.accessToken)
            #expect(limited.status == 429)
            #expect(limited.errorCode == "RATE_LIMITED")
            let retryAfter = try #require(limited.headers.first(name: "Retry-After").flatMap(Int.init))
            #expect(retryAfter > 0 && retryAfter <= 3600)
            // Another account has its own allowance.
            let bob = try await server.signIn(.apple, sub: "apple-other")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g-limited")],
                                          bearer: bob.accessToken).status == 200)
            // The window passes.
            server.clock.advance(by: 3600)
            let later = try await server.signIn(.apple, sub: "apple-limited")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g-later")],
                                          bearer: later.accessToken).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func guestsAndSignInsAreLimitedPerClientIP(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            $0.rateLimits.enabled = true
            $0.rateLimits.anonymous = .init(limit: 2, window: 3600)
            $0.rateLimits.signIn = .init(limit: 3, window: 300)
            $0.trustedProxies = [CIDRFixtures.loopback]
        }) { server in
            _ = try await server.anonymous()
            _ = try await server.anonymous()
            let third = try await server.post("/v1/auth/anonymous")
            #expect(third.errorCode == "RATE_LIMITED")

            for _ in 0..<3 { _ = try await server.signIn(.google, sub: "g-ip") }
            let limited = try await server.post("/v1/auth/signin/google", ["id_token": try server.idToken(.google, sub: "g-ip")])
            #expect(limited.status == 429)
            #expect(try await server.refresh(String(repeating: "A", count: 43)).status == 429)
            // Behind a trusted proxy, the forwarded client address is the one counted.
            let elsewhere = try await server.post("/v1/auth/signin/google", ["id_token": try server.idToken(.google, sub: "g-ip")],
                                                  headers: ["X-Forwarded-For": "198.51.100.23"])
            #expect(elsewhere.status == 200)
        }
    }

    /// The limits are counted by route, before the body is read: re-authentication, a malformed body and
    /// GoTrue's grants count against the client IP's sign-in limit; GoTrue's sign-up shares the guests' limit, and
    /// its `link_identity` the account's link limit.
    @Test(arguments: TestDatabase.available)
    func everyRouteThatSignsInCountsAgainstTheSameLimits(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            $0.rateLimits.enabled = true
            $0.rateLimits.signIn = .init(limit: 5, window: 300)
            $0.rateLimits.anonymous = .init(limit: 1, window: 3600)
            $0.rateLimits.link = .init(limit: 1, window: 3600)
        }) { server in
            // Windows are fixed (aligned to the epoch): start at an hour's beginning, so the 301 s step below never
            // crosses into a fresh link window, whatever the time of day the test runs.
            let hour = (server.clock.now().timeIntervalSince1970 / 3600).rounded(.up) * 3600
            server.clock.set(Date(timeIntervalSince1970: hour + 1))
            let first = try await server.signIn(.google, sub: "g-ada")  // 1
            let reauthenticated = try await server.post("/v1/auth/reauthenticate/google",
                                                        ["id_token": try server.idToken(.google, sub: "g-ada")],
                                                        bearer: first.accessToken)  // 2
            #expect(reauthenticated.status == 200)
            let ada = try #require(reauthenticated.json["access_token"] as? String)
            #expect(try await server.post("/v1/auth/signin/google", ["idtoken": "typo"]).status == 400)  // 3
            let grant: [String: Any] = ["provider": "google", "id_token": try server.idToken(.apple, sub: "a-ada")]
            let linked = try await server.request(.POST, "/auth/v1/token?grant_type=id_token",
                                                  json: grant.merging(["link_identity": true]) { $1 }, bearer: ada)  // 4
            #expect(linked.status == 400, "an Apple token for Google: refused, and counted \(linked.text)")
            #expect(try await server.post("/auth/v1/token?grant_type=refresh_token",
                                          ["refresh_token": String(repeating: "A", count: 43)]).status == 400)  // 5

            let malformed = try await server.post("/v1/auth/signin/google", ["idtoken": "typo"])
            #expect(malformed.status == 429)
            #expect(malformed.errorCode == "RATE_LIMITED")
            let goTrue = try await server.request(.POST, "/auth/v1/token?grant_type=id_token", json: grant)
            #expect(goTrue.status == 429)
            #expect(goTrue.json["error_code"] as? String == "over_request_rate_limit")
            #expect(goTrue.headers.first(name: "Retry-After") != nil)

            // GoTrue's anonymous sign-up and Lanyard's share one allowance per client IP.
            #expect(try await server.post("/auth/v1/signup").status == 200)
            #expect(try await server.post("/v1/auth/anonymous").errorCode == "RATE_LIMITED")
            // `link_identity` counted against Ada's one link: Lanyard's link route is refused.
            server.clock.advance(by: 301)
            let link = try await server.post("/v1/auth/link/apple", ["id_token": try server.idToken(.apple, sub: "a-ada")],
                                              bearer: ada)
            #expect(link.errorCode == "RATE_LIMITED", "\(link.text)")
        }
    }
}
