import Foundation
import Lanyard
import LanyardEmulator
import LanyardSupport
import Testing

/// Sessions that survive restarts, expiry and bad networks, through the SDK against a real server.
@Suite struct SDKSessionTests {
    @Test func aClientOnTheSameStorageIsSignedInAtOnceAfterARestart() async throws {
        try await TestServer.with(.sqlite) { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-sdk-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("session.json")
            let before = server.client(storage: FileSessionStore(fileURL: file))
            let signedIn = try await before.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(permissions == 0o600)

            // `user` is read synchronously from storage: no request can have been made.
            let after = server.client(storage: FileSessionStore(fileURL: file))
            #expect(after.user == signedIn.user)
            let events = await EventLog(after)
            #expect(await events.events == [.restored(signedIn.user)])
            #expect(try await after.refreshUser().id == signedIn.user.id)
            #expect(try await server.refreshRequests() == 0)
        }
    }

    @Test func fiftyConcurrentCallsWithAnExpiredAccessTokenRefreshOnce() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let events = await EventLog(client)
            try await client.signInWithGoogle(idToken: try server.idToken(.google, sub: "g"))
            let firstToken = try await client.accessToken()
            server.clock.advance(by: 901)

            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { try await client.refreshUser().id.rawValue } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(ids.count == 50)
            #expect(Set(ids).count == 1)
            #expect(try await server.refreshRequests() == 1)
            #expect(try await client.accessToken() != firstToken)
            #expect(await events.waitFor { $0 == .tokenRefreshed })
        }
    }

    /// The server refuses a token the client still believes valid (its clock is behind): one refresh, one retry.
    @Test func anUnauthorizedAnswerRefreshesOnceAndRetries() async throws {
        try await TestServer.with(.sqlite) { server in
            let deviceClock = ManualClock(server.clock.now())
            let client = server.client(clock: deviceClock)
            try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            server.clock.advance(by: 901)
            async let first = client.refreshUser()
            async let second = client.sessions()
            let (user, sessions) = try await (first, second)
            #expect(user.identities.map(\.provider) == [.apple])
            #expect(sessions.count == 1)
            #expect(try await server.refreshRequests() == 1)
        }
    }

    @Test func aServerThatIsDownFailsCallsWithNetworkAndKeepsTheSession() async throws {
        let (databaseURL, cleanup) = try await TestDatabase.sqlite.makeFresh()
        defer { Task { await cleanup() } }
        let clock = ManualClock(Date())
        var running = try await RunningServer.startOnFreePort(databaseURL: databaseURL, clock: clock)
        let port = try #require(URLComponents(string: running.baseURL)?.port)
        let server = TestServer(running, clock: clock)
        let store = MemorySessionStore()
        let client = server.client(storage: store)
        let events = await EventLog(client)
        let signedIn = try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
        await running.stop()

        clock.advance(by: 901)
        do {
            _ = try await client.refreshUser()
            Issue.record("a call to a stopped server succeeded")
        } catch LanyardError.network {
        }
        await #expect(throws: LanyardError.self) { try await client.accessToken() }
        #expect(client.user == signedIn.user)
        #expect(try store.data(forKey: "session") != nil)

        // The same port, as a restarted server has (tried again while the old socket lets go of it).
        var restarted: RunningServer?
        for _ in 0..<20 where restarted == nil {
            restarted = try await RunningServer.start(databaseURL: databaseURL, port: port, clock: clock)
            if restarted == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard let restarted else { throw TestSetupError("the server did not start again on port \(port)") }
        running = restarted
        let again = TestServer(running, clock: clock)
        #expect(try await client.refreshUser().id == signedIn.user.id)
        #expect(try await again.refreshRequests() == 1)
        #expect(await events.events.contains { if case .signedOut = $0 { true } else { false } } == false)
        await running.stop()
    }

    @Test func aReusedRefreshTokenSignsTheClientOutAndSaysWhy() async throws {
        try await TestServer.with(.sqlite) { server in
            let store = MemorySessionStore()
            let client = server.client(storage: store)
            let events = await EventLog(client)
            try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            // Someone else rotates the client's refresh token first; after the grace window the client's own
            // refresh presents a used token.
            #expect(try await server.refresh(try storedRefreshToken(store)).status == 200)
            server.clock.advance(by: 901)
            await #expect(throws: LanyardError.refreshTokenReused) { try await client.accessToken() }
            #expect(client.user == nil)
            #expect(try store.data(forKey: "session") == nil)
            #expect(await events.waitFor { $0 == .signedOut(.refreshTokenReused) })
        }
    }

    @Test func anAccountAnOperatorDisablesIsSignedOutAndSaysWhy() async throws {
        try await TestServer.with(.sqlite, configure: { $0.adminKey = "k" }) { server in
            let client = server.client()
            let events = await EventLog(client)
            let signedIn = try await client.signInWithGoogle(idToken: try server.idToken(.google, sub: "g"))
            let disabled = try await server.request(.PATCH, "/v1/admin/users/\(signedIn.user.id)", json: ["disabled": true],
                                                    bearer: "k")
            #expect(disabled.status == 200)
            await #expect(throws: LanyardError.accountDisabled) { try await client.refreshUser() }
            #expect(client.user == nil)
            #expect(await events.waitFor { $0 == .signedOut(.accountDisabled) })
            await #expect(throws: LanyardError.accountDisabled) {
                try await client.signInWithGoogle(idToken: try server.idToken(.google, sub: "g"))
            }
        }
    }

    /// A provider the server does not offer, and one whose keys cannot be fetched, through the SDK.
    @Test func providersTheServerCannotUseArriveAsTypedErrors() async throws {
        let fake = try await FakeKeyServer(keys: TestServer.sharedKeys)
        fake.set(.failing)
        try await TestServer.with(.sqlite, configure: {
            $0.devMode = false
            $0.appleClientIDs = [EmulatedProvider.apple.defaultClientID]
            $0.appleJWKSURL = fake.url
        }) { server in
            let client = server.client()
            await #expect(throws: LanyardError.providerUnavailable) {
                try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            }
            await #expect(throws: LanyardError.unsupportedProvider(.google)) {
                try await client.signInWithGoogle(idToken: try server.idToken(.google, sub: "g"))
            }
            #expect(client.user == nil)
        }
        await fake.stop()
    }
}
