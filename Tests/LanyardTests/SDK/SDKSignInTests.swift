import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lanyard
import Testing

/// Sign-in through the SDK against a real server on SQLite: the stories of reference section 9.
@Suite struct SDKSignInTests {
    @Test func signingInWithAppleAndANonceHoldsTheSessionAndTheUser() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let events = await EventLog(client)
            let nonce = AppleNonce()
            let token = try server.idToken(.apple, sub: "ada", email: "ada@example.com", nonce: nonce.hashed)
            let result = try await client.signInWithApple(
                idToken: token, rawNonce: nonce.raw, fullName: PersonNameComponents(givenName: "Ada", familyName: "Lovelace"),
                authorizationCode: "c0de")
            #expect(result.isNewUser)
            #expect(result.mergedFrom == nil)
            #expect(result.user.displayName == "Ada Lovelace")
            #expect(client.user == result.user)
            #expect(client.linkedProviders.map(\.provider) == [.apple])
            #expect(client.linkedProviders.first?.isPrimary == true)
            #expect(await events.waitFor { $0 == .signedIn(result.user) })
            #expect(await events.events.first == .restored(nil))

            // The app's own backend gets a bearer the server accepts.
            let request = try await client.authorize(URLRequest(url: server.url.appendingPathComponent("v1/users/me")))
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? String == result.user.id.rawValue)
        }
    }

    @Test func aNonceThatDoesNotMatchTheTokenIsRefusedWithItsReason() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let token = try server.idToken(.apple, sub: "ada", nonce: AppleNonce().hashed)
            await #expect(throws: LanyardError.invalidProviderToken(reason: "nonce_mismatch")) {
                try await client.signInWithApple(idToken: token, rawNonce: AppleNonce().raw)
            }
            #expect(client.user == nil)
        }
    }

    @Test func googleSignInWithARawNonceAndAnonymousSignIn() async throws {
        try await TestServer.with(.sqlite) { server in
            let guestClient = server.client()
            let guest = try await guestClient.signInAnonymously()
            #expect(guest.user.isAnonymous)
            #expect(guest.isNewUser)

            let client = server.client()
            let result = try await client.signInWithGoogle(
                idToken: try server.idToken(.google, sub: "g-1", email: "g@example.com", nonce: "raw-nonce"), nonce: "raw-nonce")
            #expect(result.user.identities.map(\.provider) == [.google])
            #expect(result.user.email == "g@example.com")
            #expect(!result.user.isAnonymous)
        }
    }

    /// A guest with data signs in with an identity that already has an account: the SDK sends the guest's
    /// bearer, the server merges, and the data is the account's.
    @Test func aGuestWhoSignsInWithAnExistingAccountKeepsTheirData() async throws {
        try await TestServer.with(.sqlite) { server in
            let phone = server.client()
            let owner = try await phone.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))

            let tablet = server.client()
            let events = await EventLog(tablet)
            let guest = try await tablet.signInAnonymously()
            try await tablet.collection("habits", of: Habit.self).put(Habit(name: "Read", streak: 12), id: "h1")

            let merged = try await tablet.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            #expect(merged.user.id == owner.user.id)
            #expect(merged.mergedFrom == guest.user.id)
            #expect(!merged.isNewUser)
            #expect(await events.waitFor { $0 == .merged(from: guest.user.id) })
            #expect(try await phone.collection("habits", of: Habit.self).get("h1")?.value == Habit(name: "Read", streak: 12))
        }
    }

    @Test func aGuestWhoSignsInWithANewIdentityIsUpgradedInPlace() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let guest = try await client.signInAnonymously()
            let upgraded = try await client.signInWithGoogle(idToken: try server.idToken(.google, sub: "new"))
            #expect(upgraded.user.id == guest.user.id)
            #expect(!upgraded.user.isAnonymous)
            #expect(upgraded.mergedFrom == nil)
        }
    }

    /// Apple on one device, Google linked, the second device signs in with Google and reads the same records.
    @Test func theSameAccountFromTwoDevicesSeesTheSameReminders() async throws {
        try await TestServer.with(.sqlite) { server in
            let iPhone = server.client()
            let first = try await iPhone.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            let reminders = iPhone.collection("reminders", of: Reminder.self)
            try await reminders.put(Reminder(title: "Buy milk"), id: "r1")
            try await reminders.put(Reminder(title: "Call Charles"), id: "r2")
            let events = await EventLog(iPhone)
            try await iPhone.link(.google(idToken: try server.idToken(.google, sub: "ada-g")))
            #expect(iPhone.linkedProviders.map(\.provider) == [.apple, .google])
            #expect(iPhone.linkedProviders.map(\.isPrimary) == [true, false])
            #expect(await events.waitFor { $0 == .linked(.google) })

            let android = server.client()
            let second = try await android.signInWithGoogle(idToken: try server.idToken(.google, sub: "ada-g"))
            #expect(second.user.id == first.user.id)
            let seen = try await android.collection("reminders", of: Reminder.self).pullChanges()
            #expect(seen.map(\.id) == ["r1", "r2"])
            #expect(seen.compactMap(\.value?.title) == ["Buy milk", "Call Charles"])
        }
    }
}

struct Reminder: Codable, Sendable, Equatable {
    var title: String
    var done = false
}

struct Habit: Codable, Sendable, Equatable {
    var name: String
    var streak: Int
}

/// Providers by name through the SDK: what the server offers, and an OpenID Connect provider of the server's
/// configuration signing in, linking and unlinking (reference section 20).
@Suite struct SDKProviderTests {
    @Test func anyConfiguredProviderSignsInLinksAndUnlinksByName() async throws {
        try await OIDCProviderTests.withIssuer(.sqlite) { server, issuer in
            let client = server.client()
            let offered = try await client.providers()
            #expect(offered.map(\.name) == [.apple, .google, Provider("acme"), .microsoft, .facebook, .email, .passkey])
            #expect(offered.map(\.displayName) == ["Apple", "Google", "Acme SSO", "Microsoft", "Facebook", "Email", "Passkey"])
            #expect(offered.allSatisfy {
                $0.kind == ($0.name == .apple ? .apple : $0.name == .google ? .google : $0.name == .email ? .email
                            : $0.name == .passkey ? .passkey : .oidc)
            })

            let signedIn = try await client.signIn(with: Provider("acme"), idToken: try await issuer.token(sub: "ada"), nonce: "n-1")
            #expect(signedIn.isNewUser)
            #expect(client.linkedProviders.map(\.provider) == [Provider("acme")])
            let microsoft = try await OIDCProviderTests.microsoftToken(server, sub: "oid-ada")
            let linked = try await client.link(ProviderCredential(provider: .microsoft, idToken: microsoft, nonce: "n-1"))
            #expect(linked.linkedProviders.map(\.provider) == [Provider("acme"), .microsoft])
            let unlinked = try await client.unlink(Provider("acme"))
            #expect(unlinked.linkedProviders.map(\.provider) == [.microsoft])
            await #expect(throws: LanyardError.self) {
                try await client.signIn(with: Provider("okta"), idToken: try await issuer.token(sub: "ada"), nonce: "n-1")
            }
        }
    }
}

/// `client.email` against a real server (dev mode keeps the mail in the emulator's mailbox): a code signs up and
/// in, a guest upgrades in place, an address is linked and unlinked, the link finishes on the waiting device.
@Suite struct SDKEmailTests {
    @Test func aCodeSignsUpAGuestInPlaceAndLinksAnAddress() async throws {
        try await TestServer.with(.sqlite, configure: EmailFlowTests.configure) { server in
            let client = server.client()
            let guest = try await client.signInAnonymously()
            let flow = try await client.email.start("Ada@Example.com")
            #expect((10...99).contains(flow.match))
            let code = try #require(try await EmailFlowTests.mail(server, to: "ada@example.com")["code"] as? String)
            do {
                try await flow.verify(code: code == "000000" ? "111111" : "000000")
                Issue.record("a wrong code was accepted")
            } catch LanyardError.invalidCode(let reason, let left) {
                #expect(reason == "wrong_code" && left == 4)
            }
            let result = try await flow.verify(code: code)
            #expect(result.user.id == guest.user.id && !result.user.isAnonymous)
            #expect(client.linkedProviders.map(\.provider) == [.email])

            let other = server.client()
            try await other.signIn(with: .google, idToken: try server.idToken(.google, sub: "g-bob"))
            let linking = try await other.email.link(email: "bob@example.com")
            let linkCode = try #require(try await EmailFlowTests.mail(server, to: "bob@example.com")["code"] as? String)
            let linked = try await linking.verify(code: linkCode)
            #expect(linked.user.linkedProviders.map(\.provider) == [.google, .email])
            #expect(other.linkedProviders.map(\.provider) == [.google, .email])
            let unlinked = try await other.unlink(.email)
            #expect(unlinked.linkedProviders.map(\.provider) == [.google])
        }
    }

    @Test func theWaitingDeviceFinishesOnceTheLinkIsConfirmed() async throws {
        try await TestServer.with(.sqlite, configure: EmailFlowTests.configure) { server in
            let client = server.client()
            let flow = try await client.email.start("wait@example.com")
            let token = try EmailFlowTests.token(try await EmailFlowTests.mail(server, to: "wait@example.com"))
            async let finished = flow.awaitConfirmation(timeout: 60)
            try await Task.sleep(for: .milliseconds(200))
            let confirmed = try await server.request(.POST, "/e/\(token)", rawBody: "match=\(flow.match)",
                                                     headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(confirmed.status == 200)
            let result = try await finished
            #expect(result.isNewUser && client.user?.id == result.user.id)
            do {
                _ = try await client.email.start("wait@example.com").awaitConfirmation(timeout: 1)
                Issue.record("a second mail within the minute was sent")
            } catch LanyardError.rateLimited(let retryAfter) {
                #expect((retryAfter ?? 0) > 0)
            }
        }
    }

    @Test func anEmailCodeProvesTheOtherAccountOfAMerge() async throws {
        try await TestServer.with(.sqlite, configure: EmailFlowTests.configure) { server in
            let work = server.client()
            let first = try await work.email.start("work@example.com")
            try await first.verify(code: try #require(try await EmailFlowTests.mail(server, to: "work@example.com")["code"] as? String))
            let home = server.client()
            try await home.signIn(with: .google, idToken: try server.idToken(.google, sub: "g-home"))
            server.clock.advance(by: 61)
            let flow = try await home.email.start("work@example.com")
            let code = try #require(try await EmailFlowTests.mail(server, to: "work@example.com", count: 2)["code"] as? String)
            let result = try await home.merge(provingEmail: flow, code: code)
            #expect(result.identitiesMoved == ["email"])
            #expect(try await home.refreshUser().linkedProviders.map(\.provider) == [.google, .email])
        }
    }
}
