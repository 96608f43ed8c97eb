import Foundation
import Lanyard
import Testing

/// The SDK's merge of two full accounts against a real server.
@Suite struct SDKMergeTests {
    struct Note: Codable, Sendable, Equatable { var text: String }

    @Test func aPersonMergesTheirOtherAccountAndItsDevicesAreToldWhere() async throws {
        try await TestServer.with(.sqlite) { server in
            let phone = server.client(), tablet = server.client()
            try await phone.signInWithApple(idToken: try server.idToken(.apple, sub: "sdk-merge-apple"))
            try await tablet.signInWithGoogle(idToken: try server.idToken(.google, sub: "sdk-merge-google"))
            try await tablet.collection("notes", of: Note.self).put(Note(text: "from the tablet"), id: "t1")
            let events = await EventLog(tablet)

            // A dry run first, then the merge; the proof is a Google sign-in carrying the server's nonce.
            let proving: @Sendable (String) async throws -> ProviderCredential = { nonce in
                .google(idToken: try server.idToken(.google, sub: "sdk-merge-google", nonce: nonce), nonce: nonce)
            }
            let preview = try await phone.merge(proving: proving, dryRun: true)
            #expect(preview.dryRun && preview.mergeID == nil && preview.recordsMoved == 1)
            let result = try await phone.merge(proving: proving)
            #expect(result.into == phone.user?.id && result.identitiesMoved == ["google"] && result.recordsMoved == 1)
            #expect(try await phone.collection("notes", of: Note.self).get("t1")?.value == Note(text: "from the tablet"))
            let me = try await phone.refreshUser()
            #expect(me.linkedProviders.map(\.provider) == [.apple, .google])
            #expect(me.linkedProviders.map(\.isPrimary) == [true, false])

            // The tablet's next call: the account it held was merged; it signs out and says into which.
            do {
                _ = try await tablet.collection("notes", of: Note.self).get("t1")
                Issue.record("the merged account's session still worked")
            } catch LanyardError.accountMerged(let into) {
                #expect(into == result.into)
            }
            #expect(tablet.user == nil)
            #expect(try await eventually { await events.events.contains(.signedOut(.accountMerged(into: result.into))) })
        }
    }

    @Test func keepingTheOtherAccountAdoptsItsSessionAndRefusalsAreTyped() async throws {
        try await TestServer.with(.sqlite) { server in
            let phone = server.client()
            try await phone.signInWithApple(idToken: try server.idToken(.apple, sub: "keep-other-apple"))
            let absorbedID = try #require(phone.user?.id)
            let other = server.client()
            try await other.signInWithGoogle(idToken: try server.idToken(.google, sub: "keep-other-google"))
            let survivorID = try #require(other.user?.id)

            // Proving this same account: refused, typed.
            do {
                try await phone.merge(proving: { nonce in
                    .apple(idToken: try server.idToken(.apple, sub: "keep-other-apple", nonce: nonce), rawNonce: nonce)
                })
                Issue.record("merged with itself")
            } catch LanyardError.mergeConflict(let reason, _, _) {
                #expect(reason == "same_account")
            }
            let result = try await phone.merge(proving: { nonce in
                .google(idToken: try server.idToken(.google, sub: "keep-other-google", nonce: nonce), nonce: nonce)
            }, keep: .other)
            #expect(result.into == survivorID && result.from == absorbedID)
            // This device now holds the survivor's session.
            #expect(phone.user?.id == survivorID)
            #expect(try await phone.refreshUser().id == survivorID)
        }
    }
}
