import Foundation
import LanyardCore
import LanyardProviders
import LanyardSupport
import struct LanyardWire.SessionResponse
import Testing

/// The rules ARCHITECTURE.md points to, run through the Core services alone (no HTTP, no routes, no middleware),
/// on both databases: what a newcomer changes in `LanyardCore` is tested where it lives.
@Suite struct AccountRulesServiceTests {
    func signIn(_ harness: CoreHarness, _ provider: Provider, sub: String, guest: Caller? = nil) async throws -> SessionResponse {
        let token = try harness.idToken(provider == .apple ? .apple : .google, sub: sub)
        return try await SignIn(harness.dependencies).signIn(
            provider: provider, request: SignInRequest(idToken: token, nonce: nil, givenName: nil, familyName: nil),
            guest: guest, client: CoreHarness.client).answer
    }

    @Test(arguments: TestDatabase.available)
    func theLastIdentityCannotBeUnlinked(database: TestDatabase) async throws {
        try await CoreHarness.with(database) { harness in
            let ada = try await signIn(harness, .apple, sub: "ada")
            let linking = Linking(harness.dependencies)
            _ = try await linking.link(provider: .google, idToken: try harness.idToken(.google, sub: "ada-g"), nonce: nil,
                                       caller: try await harness.caller(ada), client: CoreHarness.client)
            let unlinked = try await linking.unlink(provider: .apple, caller: try await harness.caller(ada), client: CoreHarness.client)
            #expect(unlinked.linkedProviders.map(\.rawValue) == ["google"])
            let refused = await #expect(throws: LanyardError.self) {
                try await linking.unlink(provider: .google, caller: try await harness.caller(ada), client: CoreHarness.client)
            }
            #expect(refused?.code == .cannotUnlinkOnlyProvider)
            let account = try await AccountDetails.load(userID: ada.user.id.rawValue, harness.dependencies)
            #expect(account.identities.map(\.provider) == ["google"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func refreshReuseAfterTheGraceRevokesTheSession(database: TestDatabase) async throws {
        try await CoreHarness.with(database) { harness in
            let ada = try await signIn(harness, .google, sub: "ada")
            let refresh = Refresh(harness.dependencies)
            let next = try await refresh.refresh(token: ada.refreshToken, client: CoreHarness.client).answer
            // Within the grace the same successor is answered again; after it, the old token is a reuse.
            #expect(try await refresh.refresh(token: ada.refreshToken, client: CoreHarness.client).answer.refreshToken == next.refreshToken)
            harness.clock.advance(by: harness.dependencies.refreshReuseGrace + 1)
            let reused = await #expect(throws: LanyardError.self) {
                try await refresh.refresh(token: ada.refreshToken, client: CoreHarness.client)
            }
            #expect(reused?.code == .refreshTokenReused)
            // The whole session went with it: the successor, and the access token, no longer work.
            let ended = await #expect(throws: LanyardError.self) {
                try await refresh.refresh(token: next.refreshToken, client: CoreHarness.client)
            }
            #expect(ended?.code == .invalidRefreshToken)
            await #expect(throws: LanyardError.self) { try await harness.caller(next) }
        }
    }

    @Test(arguments: TestDatabase.available)
    func aGuestWithAKnownIdentityIsMergedIntoItsAccount(database: TestDatabase) async throws {
        try await CoreHarness.with(database) { harness in
            let owner = try await signIn(harness, .apple, sub: "ada")
            let guest = try await AnonymousAccounts(harness.dependencies).create(client: CoreHarness.client).answer
            let guestCaller = try await harness.caller(guest)
            let records = DataRecords(harness.dependencies)
            _ = try await records.put(collection: "notes", id: "n1", data: .object(["text": "from the guest"]), expectedVersion: nil,
                                      caller: guestCaller)

            let merged = try await signIn(harness, .apple, sub: "ada", guest: guestCaller)
            #expect(merged.user.id == owner.user.id)
            #expect(merged.mergedFrom == guest.user.id)
            #expect(!merged.isNewUser)
            // The guest's data now belongs to the account, and the guest's session ended with the merge.
            let note = try await records.get(collection: "notes", id: "n1", caller: try await harness.caller(merged))
            #expect(note.data.flatMap { JSONParser.parseObject(Array($0.text.utf8)) } == ["text": "from the guest"])
            await #expect(throws: LanyardError.self) {
                try await Authenticator(harness.dependencies).authenticate(bearer: guest.accessToken)
            }
            // Retried with the same guest bearer (a lost answer): lands in the same account, merges nothing twice.
            let retried = try await signIn(harness, .apple, sub: "ada", guest: guestCaller)
            #expect(retried.user.id == owner.user.id)
        }
    }
}
