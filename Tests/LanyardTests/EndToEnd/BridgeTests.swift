import Crypto
import Foundation
import LanyardCore
import LanyardEmulator
import LanyardSupport
import LanyardWire
import Testing

extension TestServer {
    /// A session token of the old system, shaped like its own and signed with the emulator's keys, which the dev
    /// server's bridge settings point at (the production verification path).
    func legacyToken(_ source: LegacySource, _ request: LegacyMintRequest) throws -> String {
        guard let minter = runtime.legacyMinter else { throw TestSetupError("the server is not in dev mode") }
        return try minter.mint(source, request)
    }

    func migrate(_ source: LegacySource, _ token: String) async throws -> TestResponse {
        try await post("/v1/auth/migrate/\(source.rawValue)", [source.tokenField: token])
    }
}

/// The bridge (reference section 24): the app sends the old system's session once and gets a Lanyard session.
@Suite struct BridgeTests {
    static let chiara = "Mm7ZlSDz8PZJW9AxsDR2HcSLJ6iY"
    static let chiaraApple = "000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917"
    static let chiaraGoogle = "117650938271640593827"

    static func chiarasToken(_ server: TestServer, uid: String = chiara, expiresIn: Int? = nil, iat: Int64? = nil,
                             aud: String? = nil, iss: String? = nil) throws -> String {
        try server.legacyToken(.firebase, LegacyMintRequest(
            sub: uid, identities: ["google.com": [chiaraGoogle], "apple.com": [chiaraApple]], signInProvider: "google.com",
            email: "chiara.bellini@example.org", emailVerified: true, name: "Chiara Bellini", expiresIn: expiresIn,
            aud: aud, iss: iss, iat: iat))
    }

    @Test(arguments: TestDatabase.available)
    func anImportedFirebaseUserCrossesIntoTheirAccountWithNoSignInScreen(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: ImportTests.admin) { server in
            _ = try await ImportTests.importFile(.firebase, "firebase-auth-export.json", on: server)
            let imported = try #require(try await ImportTests.users(server, query: "&legacy_id=\(Self.chiara)").first?["id"] as? String)
            let crossed = try await server.migrate(.firebase, try Self.chiarasToken(server))
            #expect(crossed.status == 200)
            let session = try Session(crossed)
            #expect(session.userID == imported && !session.isNewUser)
            #expect(session.linkedProviders == ["google", "apple", "email"])
            let me = try await server.get("/v1/users/me", bearer: session.accessToken)
            #expect(me.json["legacy_id"] as? String == Self.chiara && me.json["legacy_source"] as? String == "firebase")
            // Later, Sign in with Apple on a new device reaches the same person.
            #expect(try await server.signIn(.apple, sub: Self.chiaraApple).userID == imported)
            // A second device sends its own old session: the same account again.
            server.clock.advance(by: 5)
            #expect(try Session(try await server.migrate(.firebase, try Self.chiarasToken(server))).userID == imported)
            let audit = try await server.request(.GET, "/v1/admin/audit?type=user.migrated&user_id=\(imported)",
                                                 headers: ["Authorization": "Bearer \(AdminTests.key)"])
            #expect((audit.json["events"] as? [[String: Any]])?.count == 2)
            // A disabled one stays disabled: the import carried the old system's state.
            let hana = try server.legacyToken(.firebase, LegacyMintRequest(
                sub: "JqebCwbY5K0qRozzd24h5jk3N0pd", identities: ["google.com": ["112093847561029384756"]]))
            #expect(try await server.migrate(.firebase, hana).errorCode == "ACCOUNT_DISABLED")
        }
    }

    /// An export older than firebase-tools 15.19 leaves Apple out: the person is imported with Google only. Their
    /// crossing names Apple too, and that Apple identity, held by nobody, joins their account, so Sign in with Apple
    /// later reaches them; an identity another account holds is left where it is.
    @Test(arguments: TestDatabase.available)
    func aCrossingBringsTheAppleIdentityAnOldExportLeftOut(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: ImportTests.admin) { server in
            let line = #"{"legacy_id": "exported-without-apple", "legacy_source": "firebase", "identities": [{"provider": "google", "subject": "google-kept"}]}"#
            let imported = try await server.request(.POST, "/v1/admin/imports", rawBody: line,
                                                    headers: ["Authorization": "Bearer \(AdminTests.key)"])
            #expect(imported.status == 201)
            let stranger = try await server.signIn(.apple, sub: "apple-of-someone-else")
            let crossed = try Session(try await server.migrate(.firebase, try server.legacyToken(.firebase, LegacyMintRequest(
                sub: "exported-without-apple", identities: ["google.com": ["google-kept"], "apple.com": ["apple-left-out"]],
                signInProvider: "apple.com"))))
            #expect(!crossed.isNewUser && crossed.linkedProviders == ["google", "apple"])
            let apple = try await server.signIn(.apple, sub: "apple-left-out")
            #expect(apple.userID == crossed.userID && !apple.isNewUser)
            // Only at the account's first appearance: Apple unlinked since does not come back with another device's
            // crossing, and an address the token names never joins.
            server.clock.advance(by: 5)
            #expect(try await server.delete("/v1/auth/link/apple", bearer: apple.accessToken).status == 200)
            let again = try Session(try await server.migrate(.firebase, try server.legacyToken(.firebase, LegacyMintRequest(
                sub: "exported-without-apple", identities: ["google.com": ["google-kept"], "apple.com": ["apple-left-out"]],
                signInProvider: "apple.com", email: "left-out@example.org", emailVerified: true))))
            #expect(again.userID == crossed.userID && again.linkedProviders == ["google"])
            // A guest of the import (anonymous at the old system when exported) that has linked Google since: Google
            // joins, and the account is a guest no more (an idle-guest purge must not take it).
            let guestLine = #"{"legacy_id": "guest-at-export", "legacy_source": "firebase", "anonymous": true, "identities": []}"#
            #expect(try await server.request(.POST, "/v1/admin/imports", rawBody: guestLine,
                                             headers: ["Authorization": "Bearer \(AdminTests.key)"]).status == 201)
            let grownUp = try Session(try await server.migrate(.firebase, try server.legacyToken(.firebase, LegacyMintRequest(
                sub: "guest-at-export", identities: ["google.com": ["google-linked-after-export"]], signInProvider: "google.com",
                name: "Grown Up"))))
            #expect(!grownUp.isNewUser && !grownUp.isAnonymous && grownUp.linkedProviders == ["google"])
            let me = try await server.get("/v1/users/me", bearer: grownUp.accessToken)
            #expect(me.json["is_anonymous"] as? Bool == false && me.json["display_name"] as? String == "Grown Up", "\(me.text)")
            // A second person's export names an Apple identity a Lanyard account holds: the crossing answers, the
            // identity stays with its holder.
            let second = #"{"legacy_id": "exported-second", "legacy_source": "firebase", "identities": [{"provider": "google", "subject": "google-second"}]}"#
            _ = try await server.request(.POST, "/v1/admin/imports", rawBody: second,
                                         headers: ["Authorization": "Bearer \(AdminTests.key)"])
            let answered = try Session(try await server.migrate(.firebase, try server.legacyToken(.firebase, LegacyMintRequest(
                sub: "exported-second", identities: ["google.com": ["google-second"], "apple.com": ["apple-of-someone-else"]],
                signInProvider: "google.com"))))
            #expect(answered.linkedProviders == ["google"])
            #expect(try await server.signIn(.apple, sub: "apple-of-someone-else").userID == stranger.userID)
        }
    }

    @Test(arguments: TestDatabase.available)
    func anAnonymousUserComesAcrossAsAGuestThatKeepsItsLegacyID(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let token = try server.legacyToken(.firebase, LegacyMintRequest(sub: "tf9LGUEC6PJCPE0VZFFhjAmIR7Ga",
                                                                            signInProvider: "anonymous"))
            let guest = try Session(try await server.migrate(.firebase, token))
            #expect(guest.isAnonymous && guest.isNewUser)
            let me = try await server.get("/v1/users/me", bearer: guest.accessToken)
            #expect(me.json["legacy_id"] as? String == "tf9LGUEC6PJCPE0VZFFhjAmIR7Ga")
            // The habit tracker's fix: the guest signs in with Apple and keeps its id, legacy id and all.
            let upgraded = try await server.signIn(.apple, sub: "001.guest-now-apple", bearer: guest.accessToken)
            #expect(upgraded.userID == guest.userID)
            #expect(try await server.get("/v1/users/me", bearer: upgraded.accessToken).json["legacy_id"] as? String
                        == "tf9LGUEC6PJCPE0VZFFhjAmIR7Ga")
            let supabase = try server.legacyToken(.supabase, LegacyMintRequest(sub: "7f453a0e-f509-4b4f-95de-6e91074206e2",
                                                                              isAnonymous: true))
            let supabaseGuest = try Session(try await server.migrate(.supabase, supabase))
            #expect(supabaseGuest.isAnonymous && supabaseGuest.userID != guest.userID)
        }
    }

    /// With `LANYARD_SUPABASE_KEEP_IDS`, a Supabase guest who signed up after the import keeps its UUID as its
    /// Lanyard id when the bridge brings it across, so `auth.uid()` in the app's policies still finds its rows; a
    /// UUID some account already has is never given twice (that guest gets an id of its own, the legacy id kept).
    @Test(arguments: TestDatabase.available)
    func aSupabaseGuestKeepsItsUUIDWhenAsked(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            $0.migration.supabaseKeepIDs = true
            ImportTests.admin(&$0)
        }) { server in
            let uuid = "5d1c9e07-3b2a-4f68-8e41-0a9b7c6d5e4f"
            let guest = try Session(try await server.migrate(.supabase, try server.legacyToken(.supabase, LegacyMintRequest(
                sub: uuid, isAnonymous: true))))
            #expect(guest.isAnonymous && guest.isNewUser && guest.userID == uuid)
            // An account whose kept id is this UUID under another legacy id (a line's `id`): the guest is not it.
            let taken = "0e6f3d2c-1b4a-4c59-9d87-6a5b4c3d2e1f"
            let line = #"{"legacy_id": "someone-else", "legacy_source": "supabase", "id": "\#(taken)", "identities": [{"provider": "google", "subject": "google-of-someone-else"}]}"#
            #expect(try await server.request(.POST, "/v1/admin/imports", rawBody: line,
                                             headers: ["Authorization": "Bearer \(AdminTests.key)"]).status == 201)
            let other = try Session(try await server.migrate(.supabase, try server.legacyToken(.supabase, LegacyMintRequest(
                sub: taken, isAnonymous: true))))
            #expect(other.isNewUser && other.userID != taken)
            #expect(try await server.get("/v1/users/me", bearer: other.accessToken).json["legacy_id"] as? String == taken)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aFirebaseTokenNamesTheIdentitiesOfTheAccountItMakes(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let made = try Session(try await server.migrate(.firebase, try Self.chiarasToken(server)))
            #expect(made.isNewUser && !made.isAnonymous && made.linkedProviders == ["google", "apple", "email"])
            #expect(try await server.signIn(.google, sub: Self.chiaraGoogle).userID == made.userID)
            // The same identities with another Firebase uid belong to another person's old account: a conflict.
            let other = try await server.migrate(.firebase, try Self.chiarasToken(server, uid: "another-firebase-uid"))
            #expect(other.status == 409 && other.errorCode == "PROVIDER_CONFLICT" && other.errorReason == "identity_in_use")
        }
    }

    @Test(arguments: TestDatabase.available)
    func anAccountThatSignedInBeforeTheSwitchGainsItsLegacyID(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let before = try await server.signIn(.apple, sub: Self.chiaraApple)
            let crossed = try Session(try await server.migrate(.firebase, try Self.chiarasToken(server)))
            #expect(crossed.userID == before.userID && !crossed.isNewUser)
            #expect(Set(crossed.linkedProviders) == ["apple", "google", "email"])
            let me = try await server.get("/v1/users/me", bearer: crossed.accessToken)
            #expect(me.json["legacy_id"] as? String == Self.chiara)
        }
    }

    @Test(arguments: TestDatabase.available)
    func expiredForeignAndWrongTokensAreRefusedWithTheirReason(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let now = server.clock.now().unixSeconds
            let expired = try Self.chiarasToken(server, expiresIn: 3600, iat: now - 3600 - 61)
            #expect(try await server.migrate(.firebase, expired).errorReason == "expired")
            let foreign = try Self.chiarasToken(server, aud: "another-project", iss: "https://securetoken.google.com/another-project")
            let refused = try await server.migrate(.firebase, foreign)
            #expect(refused.status == 401 && refused.errorCode == "INVALID_PROVIDER_TOKEN" && refused.errorReason == "issuer")
            let tenant = try server.legacyToken(.firebase, LegacyMintRequest(sub: "tenant-user", signInProvider: "anonymous",
                                                                            tenant: "tenant-1"))
            #expect(try await server.migrate(.firebase, tenant).errorReason == "tenant")

            // Supabase: a token of another project's secret; the anon key, a token of the same secret.
            let supabaseUser = "f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c"
            let claims = """
                {"sub":"\(supabaseUser)","aud":"authenticated","role":"authenticated","iat":\(now),"exp":\(now + 3600),"is_anonymous":true}
                """
            let input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
            let otherSecret = HS256.sign(input, secret: SymmetricKey(data: Data("another-projects-secret-of-32-characters!".utf8)))
            #expect(try await server.migrate(.supabase, otherSecret).errorReason == "signature")
            let anonKey = try server.legacyToken(.supabase, LegacyMintRequest(sub: supabaseUser, role: "anon", alg: "HS256"))
            #expect(try await server.migrate(.supabase, anonKey).errorReason == "role")
            let signedWithTheSecret = try server.legacyToken(.supabase, LegacyMintRequest(sub: supabaseUser, isAnonymous: true, alg: "HS256"))
            #expect(try await server.migrate(.supabase, signedWithTheSecret).status == 200)
            let notImported = try server.legacyToken(.supabase, LegacyMintRequest(sub: UUID().uuidString.lowercased()))
            let missing = try await server.migrate(.supabase, notImported)
            #expect(missing.status == 404 && missing.errorReason == "not_imported")

            // Clerk: impersonation and pending sessions, and a JWT template's token for another service.
            let impersonated = try server.legacyToken(.clerk, LegacyMintRequest(sub: "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6",
                                                                               impersonatedBy: "user_support"))
            #expect(try await server.migrate(.clerk, impersonated).errorReason == "impersonation")
            let pending = try server.legacyToken(.clerk, LegacyMintRequest(sub: "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6", pending: true))
            #expect(try await server.migrate(.clerk, pending).errorReason == "pending")
            let template = try server.legacyToken(.clerk, LegacyMintRequest(sub: "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6", aud: "convex"))
            #expect(try await server.migrate(.clerk, template).errorReason == "audience")
            // A Clerk token presented as Firebase's: another key set, another shape.
            let clerk = try server.legacyToken(.clerk, LegacyMintRequest(sub: "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6"))
            #expect(try await server.migrate(.firebase, clerk).status == 401)

            #expect(try await server.post("/v1/auth/migrate/auth0", ["id_token": "x"]).errorCode == "UNSUPPORTED_PROVIDER")
            #expect(try await server.post("/v1/auth/migrate/firebase", ["access_token": "x"]).errorCode == "INVALID_REQUEST")
            #expect(try await server.migrate(.firebase, "not.a.token").errorReason == "malformed")
        }
    }

    @Test(arguments: TestDatabase.available)
    func importedSupabaseAndClerkUsersCrossAndAPersonImportedTwiceIsReported(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: ImportTests.admin) { server in
            _ = try await ImportTests.importFile(.supabase, "supabase-users.json", on: server, options: ImportOptions(keepIDs: true))
            let supabase = try server.legacyToken(.supabase, LegacyMintRequest(sub: "f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c"))
            let court = try Session(try await server.migrate(.supabase, supabase))
            #expect(court.userID == "f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c" && !court.isNewUser)
            #expect(court.linkedProviders == ["google", "apple", "email"])
            // A crossing is not a sign-in: a token that says nothing of when the person signed in (Supabase's,
            // Clerk's) opens a session that must sign in again before it changes the account's ways in or ends it.
            let deletion = try await server.request(.DELETE, "/v1/users/me", bearer: court.accessToken)
            #expect(deletion.status == 401 && deletion.errorCode == "REAUTHENTICATION_REQUIRED", "\(deletion.text)")
            // The same people from Clerk: their identities are Supabase's imports' now, so each line is reported and
            // left out, except Elif, whose only address was never verified (a guest carrying her Clerk id).
            let clerk = try await ImportTests.importFile(.clerk, "clerk-users.json", on: server)
            #expect(clerk.created == 1 && clerk.conflictCounts["identity_in_use"] == 7)
            let elif = try server.legacyToken(.clerk, LegacyMintRequest(sub: "user_23pxTnHyf6t5YdIngBaVbVJBMQK"))
            let crossed = try Session(try await server.migrate(.clerk, elif))
            let me = try await server.get("/v1/users/me", bearer: crossed.accessToken)
            #expect(me.json["legacy_source"] as? String == "clerk" && me.json["display_name"] as? String == "Elif Kaya")
            #expect(crossed.isAnonymous && !crossed.isNewUser)
            let chiara = try server.legacyToken(.clerk, LegacyMintRequest(sub: "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6"))
            #expect(try await server.migrate(.clerk, chiara).errorReason == "not_imported")
        }
    }

    /// A stolen Firebase ID token lives an hour: its crossing counts from the person's own sign-in at Firebase
    /// (`auth_time`), so it cannot delete the account or change its ways in unless that sign-in was recent.
    @Test(arguments: TestDatabase.available)
    func aCrossingCountsFromTheOldSignInNotFromNow(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let now = Int64(server.clock.now().timeIntervalSince1970)
            let old = try Session(try await server.migrate(.firebase, try Self.chiarasToken(
                server, uid: "signed-in-long-ago", expiresIn: 3 * 3600, iat: now - 2 * 3600)))
            let refused = try await server.request(.DELETE, "/v1/users/me", bearer: old.accessToken)
            #expect(refused.status == 401 && refused.errorCode == "REAUTHENTICATION_REQUIRED", "\(refused.text)")
            let fresh = try Session(try await server.migrate(.firebase, try server.legacyToken(.firebase, LegacyMintRequest(
                sub: "signed-in-just-now", identities: ["google.com": ["fresh-google-subject"]], signInProvider: "google.com"))))
            #expect(try await server.request(.DELETE, "/v1/users/me", bearer: fresh.accessToken).status == 204)
        }
    }

    /// An address is no proof of being the same person (a recycled work address): a Firebase user whose only match
    /// here is an email identity of an account Lanyard made is refused, and that account gains nothing.
    @Test(arguments: TestDatabase.available)
    func anAddressAloneAdoptsNoAccount(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: EmailFlowTests.configure) { server in
            let address = "recycled@example.org"
            let flow = try EmailFlowTests.Flow(try await EmailFlowTests.start(server, address))
            let owner = try Session(try await EmailFlowTests.verify(server, flow, code: try #require(
                try await EmailFlowTests.mail(server, to: address)["code"] as? String)))
            let token = try server.legacyToken(.firebase, LegacyMintRequest(
                sub: "someone-else-years-ago", identities: ["email": [address], "apple.com": ["someone-elses-apple"]],
                signInProvider: "password", email: address, emailVerified: true))
            let refused = try await server.migrate(.firebase, token)
            #expect(refused.status == 409 && refused.errorCode == "PROVIDER_CONFLICT", "\(refused.text)")
            let me = try await server.get("/v1/users/me", bearer: owner.accessToken)
            #expect((me.json["linked_providers"] as? [String]) == ["email"] && me.json["legacy_id"] is NSNull)
        }
    }

    @Test(arguments: TestDatabase.available)
    func racesOfOneOldSessionEndInOneAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let anonymous = try server.legacyToken(.firebase, LegacyMintRequest(sub: "racing-uid", signInProvider: "anonymous"))
            // People with identities, several rounds: on PostgreSQL a racer's reads can straddle the winner's commit.
            let named = try (0..<8).map { round in
                try server.legacyToken(.firebase, LegacyMintRequest(
                    sub: "racing-named-uid-\(round)", identities: ["google.com": ["racing-google-\(round)"],
                                                                   "apple.com": ["racing-apple-\(round)"]],
                    signInProvider: "google.com", email: "racing-\(round)@example.org", emailVerified: true))
            }
            let supabase = try server.legacyToken(.supabase, LegacyMintRequest(sub: UUID().uuidString, isAnonymous: true))
            let races = [(LegacySource.firebase, anonymous)] + named.map { (.firebase, $0) } + [(.supabase, supabase)]
            for (source, token) in races {
                let answers = try await server.concurrently(12) { try await server.migrate(source, token) }
                #expect(answers.allSatisfy { $0.status == 200 }, "\(answers.map(\.status))")
                let accounts = Set(try answers.map { try Session($0).userID })
                #expect(accounts.count == 1)
                #expect(answers.filter { (try? Session($0).isNewUser) == true }.count == 1)
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func accessTokensCarryTheLegacyIDWhenAsked(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: { $0.migration.tokenLegacyID = true }) { server in
            let token = try server.legacyToken(.firebase, LegacyMintRequest(sub: "uid-with-claim", signInProvider: "anonymous"))
            let session = try Session(try await server.migrate(.firebase, token))
            func claim(_ accessToken: String) -> String? { CompactJWS(accessToken)?.claims["legacy_id"]?.stringValue }
            #expect(claim(session.accessToken) == "uid-with-claim")
            server.clock.advance(by: 60)
            let refreshed = try Session(try await server.refresh(session.refreshToken))
            #expect(claim(refreshed.accessToken) == "uid-with-claim")
            let plain = try await server.signIn(.google, sub: "no-legacy-id")
            #expect(CompactJWS(plain.accessToken)?.claims["legacy_id"] == nil)
        }
        try await TestServer.with(database) { server in
            let token = try server.legacyToken(.firebase, LegacyMintRequest(sub: "uid-without-claim", signInProvider: "anonymous"))
            let session = try Session(try await server.migrate(.firebase, token))
            #expect(CompactJWS(session.accessToken)?.claims["legacy_id"] == nil)
        }
    }

    @Test func theBridgeCountsAgainstTheClientsSignInLimit() async throws {
        try await TestServer.with(.sqlite, configure: {
            $0.rateLimits.enabled = true
            $0.rateLimits.signIn = .init(limit: 2, window: 300)
        }) { server in
            let token = try server.legacyToken(.firebase, LegacyMintRequest(sub: "limited", signInProvider: "anonymous"))
            #expect(try await server.migrate(.firebase, token).status == 200)
            #expect(try await server.migrate(.firebase, token).status == 200)
            let limited = try await server.migrate(.firebase, token)
            #expect(limited.status == 429 && limited.errorCode == "RATE_LIMITED")
        }
    }
}
