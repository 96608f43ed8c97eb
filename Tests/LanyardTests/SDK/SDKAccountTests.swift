import Foundation
import Lanyard
import Testing

/// Linking, re-authentication, profile, sessions, sign-out and deletion through the SDK, with the server's
/// refusals arriving as typed errors.
@Suite struct SDKAccountTests {
    @Test func linkConflictsArriveWithTheirReason() async throws {
        try await TestServer.with(.sqlite) { server in
            let other = server.client()
            try await other.signInWithGoogle(idToken: try server.idToken(.google, sub: "taken"))

            let client = server.client()
            try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            await #expect(throws: LanyardError.providerConflict(reason: .alreadyLinked, mergeAvailable: false)) {
                try await client.link(.apple(idToken: try server.idToken(.apple, sub: "ada")))
            }
            await #expect(throws: LanyardError.providerConflict(reason: .providerAlreadyLinked, mergeAvailable: false)) {
                try await client.link(.apple(idToken: try server.idToken(.apple, sub: "another-apple")))
            }
            await #expect(throws: LanyardError.providerConflict(reason: .identityInUse, mergeAvailable: false)) {
                try await client.link(.google(idToken: try server.idToken(.google, sub: "taken")))
            }

            let guest = server.client()
            try await guest.signInAnonymously()
            await #expect(throws: LanyardError.providerConflict(reason: .identityInUse, mergeAvailable: true)) {
                try await guest.link(.google(idToken: try server.idToken(.google, sub: "taken")))
            }
        }
    }

    @Test func unlinkingFollowsTheServersRulesAndReauthenticationUnlocksIt() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let events = await EventLog(client)
            try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            await #expect(throws: LanyardError.cannotUnlinkOnlyProvider) { try await client.unlink(.apple) }
            await #expect(throws: LanyardError.providerNotLinked(.google)) { try await client.unlink(.google) }

            try await client.link(.google(idToken: try server.idToken(.google, sub: "ada-g")))
            server.clock.advance(by: 601)
            await #expect(throws: LanyardError.reauthenticationRequired) { try await client.unlink(.google) }
            #expect(client.user?.isLinked(.google) == true)

            await #expect(throws: LanyardError.identityNotOnAccount) {
                try await client.reauthenticate(.apple(idToken: try server.idToken(.apple, sub: "not-ada")))
            }
            try await client.reauthenticate(.apple(idToken: try server.idToken(.apple, sub: "ada")))
            let user = try await client.unlink(.google)
            #expect(user.identities.map(\.provider) == [.apple])
            #expect(client.linkedProviders.map(\.provider) == [.apple])
            #expect(await events.waitFor { $0 == .unlinked(.google) })
        }
    }

    @Test func profileChangesAndRefreshUserShowWhatTheServerHolds() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let events = await EventLog(client)
            try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            let renamed = try await client.updateProfile(displayName: "  Countess  ")
            #expect(renamed.displayName == "Countess")
            #expect(client.user?.displayName == "Countess")
            #expect(await events.waitFor { $0 == .userUpdated(renamed) })
            await #expect(throws: LanyardError.invalidRequest(
                field: "display_name", message: "display_name is longer than 200 characters")) {
                try await client.updateProfile(displayName: String(repeating: "x", count: 201))
            }

            // Another device links Google; this one learns of it on refreshUser().
            let other = server.client()
            try await other.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            try await other.link(.google(idToken: try server.idToken(.google, sub: "ada-g")))
            #expect(client.user?.isLinked(.google) == false)
            let fresh = try await client.refreshUser()
            #expect(fresh.isLinked(.google))
            #expect(client.user?.isLinked(.google) == true)
        }
    }

    @Test func sessionsCanBeListedAndRevokedAndARevokedDeviceIsSignedOut() async throws {
        try await TestServer.with(.sqlite) { server in
            let phone = server.client(), laptop = server.client()
            try await phone.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            try await laptop.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            let laptopEvents = await EventLog(laptop)

            let sessions = try await phone.sessions()
            #expect(sessions.count == 2)
            #expect(sessions.filter(\.isCurrent).count == 1)
            #expect(sessions.allSatisfy { $0.method == "apple" })
            let laptopSession = try #require(sessions.first { !$0.isCurrent })
            try await phone.revokeSession(laptopSession)
            #expect(try await phone.sessions().count == 1)

            // The laptop's bearer is refused, its refresh too: it signs out and says why.
            await #expect(throws: LanyardError.invalidRefreshToken) { try await laptop.refreshUser() }
            #expect(laptop.user == nil)
            #expect(await laptopEvents.waitFor { $0 == .signedOut(.sessionEnded) })
            await #expect(throws: LanyardError.notSignedIn) { try await laptop.accessToken() }

            await #expect(throws: LanyardError.notFound) { try await phone.revokeSession(id: .init(UUID().uuidString.lowercased())) }
            // Revoking its own session signs the client out.
            let own = try #require(try await phone.sessions().first { $0.isCurrent })
            try await phone.revokeSession(own)
            #expect(phone.user == nil)
        }
    }

    @Test func signOutScopes() async throws {
        try await TestServer.with(.sqlite) { server in
            let a = server.client(), b = server.client(), c = server.client()
            for client in [a, b, c] { try await client.signInWithGoogle(idToken: try server.idToken(.google, sub: "g")) }

            try await a.signOut(scope: .others)
            #expect(a.user != nil)
            #expect(try await a.sessions().count == 1)
            await #expect(throws: LanyardError.invalidRefreshToken) { try await b.refreshUser() }

            let events = await EventLog(a)
            try await a.signOut()
            #expect(a.user == nil)
            #expect(await events.waitFor { $0 == .signedOut(.userRequested) })

            try await c.signOut(scope: .global)
            #expect(c.user == nil)
            try await a.signOut() // signed out already: nothing to do
        }
    }

    @Test func deletingTheAccountNeedsARecentSignInAndSignsOut() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let events = await EventLog(client)
            try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            try await client.collection("reminders", of: Reminder.self).put(Reminder(title: "x"), id: "r1")
            server.clock.advance(by: 601)
            await #expect(throws: LanyardError.reauthenticationRequired) { try await client.deleteAccount() }
            try await client.reauthenticate(.apple(idToken: try server.idToken(.apple, sub: "ada")))
            try await client.deleteAccount()
            #expect(client.user == nil)
            #expect(await events.waitFor { $0 == .signedOut(.accountDeleted) })

            // The identity is free again: signing in makes a new account with no records.
            let again = try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            #expect(again.isNewUser)
            #expect(try await client.collection("reminders", of: Reminder.self).get("r1") == nil)
        }
    }

    @Test func linkAttemptsOverTheLimitAreRateLimitedWithRetryAfter() async throws {
        try await TestServer.with(.sqlite, configure: {
            $0.rateLimits.enabled = true
            $0.rateLimits.link = .init(limit: 1, window: 3600)
        }) { server in
            let client = server.client()
            try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            try await client.link(.google(idToken: try server.idToken(.google, sub: "g1")))
            do {
                try await client.link(.google(idToken: try server.idToken(.google, sub: "g2")))
                Issue.record("a second link within the hour was not limited")
            } catch LanyardError.rateLimited(let retryAfter) {
                let seconds = try #require(retryAfter)
                #expect(seconds > 0 && seconds <= 3600)
            }
        }
    }
}
