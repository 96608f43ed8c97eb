import Foundation
import Lanyard
import LanyardEmulator
import LanyardSupport
import Testing

/// Switching day through the SDK (reference section 24): the bridge from Firebase, Supabase and Clerk against a real
/// server, whose dev-mode emulator mints each old system's session token and whose bridge verifies it as in
/// production.
@Suite struct SDKMigrationTests {
    @Test func aFirebaseUserCrossesWithNoSignInScreenAndKeepsTheirUID() async throws {
        try await TestServer.with(.sqlite, configure: ImportTests.admin) { server in
            let storage = MemorySessionStore()
            let client = server.client(storage: storage)
            let events = await EventLog(client)
            let crossed = try await client.migrate(fromFirebase: try BridgeTests.chiarasToken(server))
            #expect(crossed.isNewUser && !crossed.user.isAnonymous && crossed.mergedFrom == nil)
            #expect(client.user == crossed.user)
            #expect(client.linkedProviders.map(\.provider) == [.google, .apple, .email])
            #expect(await events.waitFor { $0 == .signedIn(crossed.user) })
            let account = try await client.account()
            #expect(account.legacyID == BridgeTests.chiara && account.legacySource == "firebase")
            #expect(account.user.displayName == "Chiara Bellini")

            // The app calls the bridge on every launch while the Firebase SDK still has its session: the held session
            // answers and nothing is sent (a token the server would refuse is not even looked at).
            let again = try await client.migrate(fromFirebase: "not.a.token")
            #expect(again.user.id == crossed.user.id && !again.isNewUser)
            let audit = try await server.request(.GET, "/v1/admin/audit?type=user.migrated&user_id=\(crossed.user.id.rawValue)",
                                                 headers: ["Authorization": "Bearer \(AdminTests.key)"])
            #expect((audit.json["events"] as? [[String: Any]])?.count == 1)

            // The next launch restores the session; Sign in with Apple on a new device reaches the same person.
            #expect(server.client(storage: storage).user?.id == crossed.user.id)
            let apple = try await server.client().signInWithApple(idToken: try server.idToken(.apple, sub: BridgeTests.chiaraApple))
            #expect(apple.user.id == crossed.user.id)
        }
    }

    @Test func anAnonymousSupabaseUserCrossesAsAGuestAndAHeldGuestIsNotBridgedOver() async throws {
        try await TestServer.with(.sqlite) { server in
            let supabaseID = UUID().uuidString.lowercased()
            let client = server.client()
            let guest = try await client.migrate(fromSupabase: try server.legacyToken(.supabase, LegacyMintRequest(
                sub: supabaseID, isAnonymous: true)))
            #expect(guest.user.isAnonymous && guest.isNewUser)
            let account = try await client.account()
            #expect(account.legacyID == supabaseID && account.legacySource == "supabase")

            // Another old session while the guest is held: refused, the guest kept.
            let other = try server.legacyToken(.supabase, LegacyMintRequest(sub: UUID().uuidString.lowercased(), isAnonymous: true))
            do {
                try await client.migrate(fromSupabase: other)
                Issue.record("a guest held was bridged over")
            } catch LanyardError.invalidRequest(let field, let message) {
                #expect(field == "session" && message.contains("guest"))
            }
            #expect(client.user?.id == guest.user.id)

            // The guest signs in with Google and keeps its id and its legacy id.
            let upgraded = try await client.signInWithGoogle(idToken: try server.idToken(.google, sub: "supabase-guest"))
            #expect(upgraded.user.id == guest.user.id && !upgraded.user.isAnonymous)
            #expect(try await client.account().legacyID == supabaseID)
        }
    }

    @Test func anImportedClerkUserCrossesIntoTheImportedAccount() async throws {
        try await TestServer.with(.sqlite, configure: ImportTests.admin) { server in
            _ = try await ImportTests.importFile(.clerk, "clerk-users.json", on: server)
            let chiara = "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6"
            let imported = try #require(try await ImportTests.users(server, query: "&legacy_id=\(chiara)").first?["id"] as? String)
            let client = server.client()
            let crossed = try await client.migrate(fromClerk: try server.legacyToken(.clerk, LegacyMintRequest(sub: chiara)))
            #expect(crossed.user.id.rawValue == imported && !crossed.isNewUser)
            #expect(Set(client.linkedProviders.map(\.provider)).isSuperset(of: [.google, .apple]))
            let account = try await client.account()
            #expect(account.legacyID == chiara && account.legacySource == "clerk")
        }
    }

    @Test func expiredForeignAndForgedTokensAreTypedErrorsAndTheClientStaysSignedOut() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let events = await EventLog(client)
            let now = server.clock.now().unixSeconds

            let expired = try BridgeTests.chiarasToken(server, uid: "uid-expired", expiresIn: 3600, iat: now - 3600 - 61)
            await #expect(throws: LanyardError.invalidProviderToken(reason: "expired")) {
                try await client.migrate(fromFirebase: expired)
            }
            let foreign = try BridgeTests.chiarasToken(server, uid: "uid-foreign", aud: "another-project",
                                                       iss: "https://securetoken.google.com/another-project")
            await #expect(throws: LanyardError.invalidProviderToken(reason: "issuer")) {
                try await client.migrate(fromFirebase: foreign)
            }

            // A real token whose claims were changed after signing: another uid under the same signature.
            let parts = try BridgeTests.chiarasToken(server, uid: "uid-genuine").split(separator: ".").map(String.init)
            let claims = """
                {"iss":"https://securetoken.google.com/\(LegacyTokenMinter.devFirebaseProject)","aud":"\(LegacyTokenMinter.devFirebaseProject)",\
                "sub":"uid-forged","user_id":"uid-forged","iat":\(now),"auth_time":\(now),"exp":\(now + 3600),\
                "firebase":{"identities":{"google.com":["g-forged"]},"sign_in_provider":"google.com"}}
                """
            let forged = [parts[0], Base64URL.encode(Array(claims.utf8)), parts[2]].joined(separator: ".")
            await #expect(throws: LanyardError.invalidProviderToken(reason: "signature")) {
                try await client.migrate(fromFirebase: forged)
            }

            // Clerk: a support agent's impersonation session; a user nobody imported.
            let impersonated = try server.legacyToken(.clerk, LegacyMintRequest(sub: "user_impersonated", impersonatedBy: "user_support"))
            await #expect(throws: LanyardError.invalidProviderToken(reason: "impersonation")) {
                try await client.migrate(fromClerk: impersonated)
            }
            let missing = try server.legacyToken(.clerk, LegacyMintRequest(sub: "user_never_imported"))
            await #expect(throws: LanyardError.notFound) { try await client.migrate(fromClerk: missing) }
            // Supabase's anon key is not a user's session.
            let anonKey = try server.legacyToken(.supabase, LegacyMintRequest(sub: UUID().uuidString, role: "anon"))
            await #expect(throws: LanyardError.invalidProviderToken(reason: "role")) {
                try await client.migrate(fromSupabase: anonKey)
            }

            #expect(client.user == nil)
            await #expect(throws: LanyardError.notSignedIn) { try await client.accessToken() }
            #expect(await events.events == [.restored(nil)])
        }
    }
}
