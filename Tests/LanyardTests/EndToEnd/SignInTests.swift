import Foundation
import Testing
import LanyardEmulator
import LanyardStore
import LanyardSupport

@Suite struct PostgresAvailabilityTests {
    @Test(.enabled(if: TestDatabase.postgresURL != nil,
                   "LANYARD_TEST_POSTGRES_URL is not set: the PostgreSQL half of the suite is SKIPPED (SQLite only)"))
    func postgresIsConfiguredForThisRun() {
        #expect(TestDatabase.available.contains(.postgres))
    }
}

@Suite struct SignInTests {
    @Test(arguments: TestDatabase.available)
    func aNewAppleIdentityCreatesAnAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let response = try await server.post("/v1/auth/signin/apple", [
                "id_token": try server.idToken(.apple, sub: "001.apple", email: "ada@privaterelay.appleid.com"),
                "given_name": "Ada", "family_name": "Lovelace",
            ])
            #expect(response.status == 200)
            let json = response.json
            #expect(json["token_type"] as? String == "Bearer")
            #expect(json["expires_in"] as? Int == 900)
            #expect(json["is_new_user"] as? Bool == true)
            #expect(json["merged_from"] is NSNull)
            #expect(json["linked_providers"] as? [String] == ["apple"])
            let user = try #require(json["user"] as? [String: Any])
            #expect(user["display_name"] as? String == "Ada Lovelace")
            #expect(user["is_anonymous"] as? Bool == false)
            #expect(user["email"] as? String == "ada@privaterelay.appleid.com")
            let identity = try #require((user["identities"] as? [[String: Any]])?.first)
            #expect(identity["provider"] as? String == "apple")
            #expect(identity["email_verified"] as? Bool == true)
            #expect(identity["last_sign_in_at"] is String)
        }
    }

    @Test(arguments: TestDatabase.available)
    func signingInAgainReachesTheSameAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let first = try await server.signIn(.google, sub: "g-1", email: "ada@gmail.com")
            server.clock.advance(by: 30)
            let second = try await server.signIn(.google, sub: "g-1", email: "ada@gmail.com")
            #expect(first.isNewUser)
            #expect(!second.isNewUser)
            #expect(first.userID == second.userID)
            #expect(first.accessToken != second.accessToken)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aSignInAnswersWithTheAccountAsItNowIs(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let first = try await server.post("/v1/auth/signin/google",
                                              ["id_token": try server.idToken(.google, sub: "g-2", email: "ada@old.example")])
            server.clock.advance(by: 120)
            let again = try await server.post("/v1/auth/signin/google", [
                "id_token": try server.idToken(.google, sub: "g-2", email: "ada@new.example"),
                "given_name": "Ada", "family_name": "Lovelace",
            ])
            let me = try await server.get("/v1/users/me", bearer: try Session(again).accessToken)
            #expect(again.sessionAccount == me.meAccount)
            #expect(me.json["email"] as? String == "ada@new.example")
            #expect(me.json["display_name"] as? String == "Ada Lovelace")
            let signedIn = { (response: TestResponse) in response.identities.first?["last_sign_in_at"] as? String }
            #expect(signedIn(first) != nil && signedIn(first) != signedIn(again))
            #expect(first.sessionAccount != again.sessionAccount)
        }
    }

    @Test(arguments: TestDatabase.available)
    func theLastSignInIsKeptToTheSecond(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let signIn = { (email: String) in
                try await server.post("/v1/auth/signin/google", ["id_token": try server.idToken(.google, sub: "g-3", email: email)])
            }
            let identity = { (response: TestResponse) in response.identities.first ?? [:] }
            let first = try await signIn("ada@gmail.com")
            server.clock.advance(by: 0.5)
            let repeated = try await signIn("ada@gmail.com")
            let me = try await server.get("/v1/users/me", bearer: try Session(repeated).accessToken)
            // Within the second: the recorded time stands, in the answer and afterwards.
            #expect(identity(repeated)["last_sign_in_at"] as? String == identity(first)["last_sign_in_at"] as? String)
            #expect(repeated.sessionAccount == me.meAccount)
            #expect(try Session(repeated).accessToken != (try Session(first).accessToken))

            // A new email is recorded at once, with the time of that sign-in.
            let moved = try await signIn("ada@new.example")
            #expect(identity(moved)["email"] as? String == "ada@new.example")
            #expect(identity(moved)["last_sign_in_at"] as? String != identity(first)["last_sign_in_at"] as? String)

            server.clock.advance(by: 1)
            let later = try await signIn("ada@new.example")
            let meLater = try await server.get("/v1/users/me", bearer: try Session(later).accessToken)
            #expect(identity(later)["last_sign_in_at"] as? String != identity(moved)["last_sign_in_at"] as? String)
            #expect(later.sessionAccount == meLater.meAccount)
        }
    }

    @Test(arguments: TestDatabase.available)
    func theNameAppleSendsOnceIsKeptButNeverOverwritten(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            _ = try await server.signIn(.apple, sub: "named", extra: ["given_name": "Grace", "family_name": "Hopper"])
            let again = try await server.signIn(.apple, sub: "named", extra: ["given_name": "Someone", "family_name": "Else"])
            let me = try await server.get("/v1/users/me", bearer: again.accessToken)
            #expect(me.json["display_name"] as? String == "Grace Hopper")
        }
    }

    @Test(arguments: TestDatabase.available)
    func derivedStrategyDerivesTheAccountID(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.userIDStrategy = .derived }) { server in
            let session = try await server.signIn(.apple, sub: "001")
            #expect(session.userID == "e7cb0564-8bc2-4f27-a365-27d1cf514c2b")
        }
    }

    @Test(arguments: TestDatabase.available)
    func concurrentFirstSignInsOfOneIdentityCreateOneAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let token = try server.idToken(.google, sub: "racer", email: "racer@example.com")
            let responses = try await server.concurrently(12) { try await server.post("/v1/auth/signin/google", ["id_token": token]) }
            #expect(responses.allSatisfy { $0.status == 200 })
            let sessions = try responses.map(Session.init)
            #expect(Set(sessions.map(\.userID)).count == 1)
            #expect(sessions.filter(\.isNewUser).count == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func concurrentRepeatSignInsOfOneIdentityAllSucceedAndAgreeOnItsTime(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let first = try await server.signIn(.google, sub: "repeater", email: "r@example.com")
            server.clock.advance(by: 5)
            let token = try server.idToken(.google, sub: "repeater", email: "r@example.com")
            let responses = try await server.concurrently(12) { try await server.post("/v1/auth/signin/google", ["id_token": token]) }
            #expect(responses.allSatisfy { $0.status == 200 })
            let times = Set(responses.map { $0.identities.first?["last_sign_in_at"] as? String })
            let me = try await server.get("/v1/users/me", bearer: first.accessToken)
            let recorded = me.identities.first?["last_sign_in_at"] as? String
            // Whether a sign-in wrote the time or found it written within the second, all answer the same one.
            #expect(times == [recorded])
            #expect(try Set(responses.map { try Session($0).userID }) == [first.userID])
        }
    }

    /// Sign-ins of many people at once (their identity reads share queries on PostgreSQL): each lands in its own
    /// account, an Apple and a Google account with the same subject are two people, and first sign-ins racing
    /// each other create one account each.
    @Test(arguments: TestDatabase.available)
    func concurrentSignInsOfManyPeopleEachLandInTheirOwnAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var known: [String: String] = [:]
            for person in 0..<12 {
                known["apple shared-\(person)"] = try await server.signIn(.apple, sub: "shared-\(person)").userID
                if person.isMultiple(of: 2) {
                    known["google shared-\(person)"] = try await server.signIn(.google, sub: "shared-\(person)").userID
                }
            }
            server.clock.advance(by: 5)
            var tokens: [(key: String, provider: String, token: String)] = []
            for person in 0..<12 {
                tokens.append(("apple shared-\(person)", "apple", try server.idToken(.apple, sub: "shared-\(person)")))
                if person.isMultiple(of: 2) {
                    tokens.append(("google shared-\(person)", "google", try server.idToken(.google, sub: "shared-\(person)")))
                }
                if person < 6 { tokens.append(("google fresh-\(person)", "google", try server.idToken(.google, sub: "fresh-\(person)"))) }
            }
            let answers = try await withThrowingTaskGroup(of: (String, TestResponse).self) { group in
                for _ in 0..<3 {
                    for (key, provider, token) in tokens {
                        group.addTask { (key, try await server.post("/v1/auth/signin/\(provider)", ["id_token": token])) }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == tokens.count * 3)
            var landed: [String: [Session]] = [:]
            for (key, answer) in answers { landed[key, default: []].append(try Session(answer)) }
            for (key, sessions) in landed {
                let accounts = Set(sessions.map(\.userID))
                #expect(accounts.count == 1, "\(key)")
                if let account = known[key] {
                    #expect(accounts == [account], "\(key)")
                    #expect(sessions.filter(\.isNewUser).isEmpty, "\(key)")
                } else {
                    #expect(sessions.filter(\.isNewUser).count == 1, "\(key)")
                }
                #expect(sessions.allSatisfy { $0.linkedProviders == [String(key.prefix { $0 != " " })] }, "\(key)")
            }
            #expect(Set(landed.values.compactMap { $0.first?.userID }).count == landed.count)
        }
    }

    /// The batched identity read itself, on both databases: each identity found with its own account, an unknown
    /// one and another provider's account with the same subject left out, whatever the batch's size.
    @Test(arguments: TestDatabase.available)
    func oneQueryReadsManyIdentitiesEachWithItsOwnAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            var accounts: [String: String] = [:]
            for person in 0..<15 {
                accounts["id-\(person)"] = try await server.signIn(.apple, sub: "id-\(person)").userID
            }
            _ = try await server.signIn(.google, sub: "google-only")
            let subjects = Array(accounts.keys)
            for batch in [[subjects[0]], Array(subjects[0..<2]) + ["google-only"], subjects + ["no-such-subject"]] {
                let found = try await server.runtime.database.read {
                    try await IdentityStore($0).findWithOwners(provider: "apple", providerUserIDs: batch)
                }
                #expect(Set(found.keys) == Set(batch).subtracting(["google-only", "no-such-subject"]))
                for (subject, read) in found {
                    #expect(read.identity.provider == "apple")
                    #expect(read.identity.providerUserID == subject)
                    #expect(read.owner.id == accounts[subject])
                    #expect(read.ownerIdentities.map(\.id) == [read.identity.id])
                }
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func theAccessTokenCarriesTheDesignClaims(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "claims")
            let claims = session.claims
            #expect(claims["iss"] as? String == server.runtime.issuer)
            #expect(claims["sub"] as? String == session.userID)
            #expect(claims["aud"] as? String == "authenticated")
            #expect(claims["role"] as? String == "authenticated")
            #expect(claims["amr"] as? [String] == ["apple"])
            #expect(claims["is_anonymous"] as? Bool == false)
            #expect(claims["sid"] is String)
            #expect(claims["jti"] is String)
            let issuedAt = try #require(claims["iat"] as? Int)
            #expect(claims["exp"] as? Int == issuedAt + 900)
            #expect(claims["auth_time"] as? Int == issuedAt)
        }
    }

    @Test(arguments: TestDatabase.available)
    func emulatorTokensMintedOverHTTPSignIn(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let minted = try await server.post("/_emulator/google/id-token",
                                               ["sub": "http-minted", "email": "m@example.com", "name": "Minted Person"])
            #expect(minted.status == 200)
            let token = try #require(minted.json["id_token"] as? String)
            let session = try Session(try await server.post("/v1/auth/signin/google", ["id_token": token]))
            let me = try await server.get("/v1/users/me", bearer: session.accessToken)
            #expect(me.json["display_name"] as? String == "Minted Person")
            let page = try await server.get("/_emulator")
            #expect(page.status == 200)
            #expect(page.text.contains("<html"))

            // Typed members reach the token; a wrong type is named.
            let typed = try await server.post("/_emulator/apple/id-token",
                                              ["sub": "typed", "email": "t@example.com", "email_verified": false,
                                               "is_private_email": true, "expires_in": 60])
            let parts = try #require(typed.json["id_token"] as? String).split(separator: ".")
            let payload = try #require(Base64URL.decode(parts[1]))
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
            #expect(claims["email_verified"] as? String == "false")
            #expect(claims["is_private_email"] as? String == "true")
            #expect((claims["exp"] as? Int).map { $0 - (claims["iat"] as? Int ?? 0) } == 60)
            let fractional = try await server.post("/_emulator/apple/id-token", ["sub": "typed", "expires_in": 1.5])
            #expect(fractional.errorCode == "INVALID_REQUEST")
            #expect(fractional.errorDetails["field"] as? String == "expires_in")
            let wrongType = try await server.post("/_emulator/apple/id-token", ["sub": "typed", "email_verified": "yes"])
            #expect(wrongType.errorDetails["field"] as? String == "email_verified")
        }
    }
}
