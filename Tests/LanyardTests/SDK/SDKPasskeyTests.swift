import Foundation
import Lanyard
import Testing

/// `client.passkeys` against a real server, with a software authenticator standing in for the platform's (the
/// SDK's `PasskeyAuthenticator`): register, sign in (a guest's data along), list, rename, remove, re-authenticate,
/// and refusals as typed errors.
@Suite struct SDKPasskeyTests {
    /// The tests' software authenticator, as the SDK drives one.
    struct Authenticator: PasskeyAuthenticator {
        let software: SoftwareAuthenticator
        var fault: SoftwareAuthenticator.Fault?

        func create(_ options: PublicKeyCredentialCreationOptionsJSON) async throws -> RegistrationResponseJSON {
            try software.create(options, fault: fault)
        }

        func get(_ options: PublicKeyCredentialRequestOptionsJSON) async throws -> AuthenticationResponseJSON {
            try software.get(options, fault: fault)
        }
    }

    @Test func aPasskeyRegisteredOnOneDeviceSignsInOnAnotherAndIsManaged() async throws {
        try await TestServer.with(.sqlite) { server in
            let phone = Authenticator(software: PasskeyTests.authenticator(server))
            let first = server.client()
            let guest = try await first.signInAnonymously()
            let events = await EventLog(first)
            let passkey = try await first.passkeys.register(name: "Ada's iPhone", with: phone)
            #expect(passkey.name == "Ada's iPhone" && passkey.lastUsedAt == nil)
            #expect(first.user?.id == guest.user.id && first.user?.isAnonymous == false)
            #expect(first.linkedProviders.map(\.provider) == [.passkey])
            #expect(await events.waitFor { $0 == .linked(.passkey) })

            // Another device (a fresh client) signs in with it: the same account.
            let second = server.client()
            let result = try await second.passkeys.signIn(with: phone)
            #expect(result.user.id == guest.user.id && !result.isNewUser)
            let listed = try await second.passkeys.list()
            #expect(listed.map(\.name) == ["Ada's iPhone"] && listed.first?.lastUsedAt != nil)
            #expect(try await second.passkeys.rename(listed[0], to: "Old phone").name == "Old phone")

            // A second passkey, then the first removed; the last one stays.
            let key = Authenticator(software: PasskeyTests.authenticator(server))
            let added = try await second.passkeys.register(name: "YubiKey", with: key)
            let user = try await second.passkeys.remove(listed[0])
            #expect(user.linkedProviders.map(\.provider) == [.passkey])
            await #expect(throws: LanyardError.cannotUnlinkOnlyProvider) { try await second.passkeys.remove(added) }
            #expect(try await second.passkeys.reauthenticate(with: key).id == guest.user.id)
            // The removed one signs no one in.
            await #expect(throws: LanyardError.invalidPasskey(reason: "unknown_credential")) {
                try await server.client().passkeys.signIn(with: phone)
            }
        }
    }

    @Test func aGuestSigningInWithAnAccountsPasskeyBringsItsDataAndRefusalsAreTyped() async throws {
        try await TestServer.with(.sqlite) { server in
            let software = PasskeyTests.authenticator(server)
            let owner = server.client()
            _ = try await owner.signInWithGoogle(idToken: try server.idToken(.google, sub: "ada"))
            try await owner.passkeys.register(with: Authenticator(software: software))

            let device = server.client()
            let guest = try await device.signInAnonymously()
            let result = try await device.passkeys.signIn(with: Authenticator(software: software))
            #expect(result.mergedFrom == guest.user.id && result.user.id == owner.user?.id)

            for (fault, reason) in [(SoftwareAuthenticator.Fault.wrongOrigin, "origin"), (.badSignature, "signature"),
                                    (.noUserVerification, "user_verification")] {
                await #expect(throws: LanyardError.invalidPasskey(reason: reason)) {
                    try await server.client().passkeys.signIn(with: Authenticator(software: software, fault: fault))
                }
            }
        }
    }
}
