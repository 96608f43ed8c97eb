import Foundation
import Lanyard
import Testing

/// The `@Observable` model follows the client (Observation exists on Linux too, so it is tested here).
@Suite struct SDKObservationTests {
    @Test func theModelFollowsSignInAndSignOut() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            let model = await LanyardAuthModel(client: client)
            #expect(await !model.isSignedIn)
            let result = try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "ada"))
            try await Self.waitUntil { model.user == result.user }
            #expect(await model.linkedProviders.map(\.provider) == [.apple])
            try await client.signOut()
            try await Self.waitUntil { !model.isSignedIn }
            #expect(await model.lastSignOutReason == .userRequested)
        }
    }

    @MainActor
    static func waitUntil(_ condition: @MainActor () -> Bool) async throws {
        for _ in 0..<3000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }
}
