import Crypto
import Foundation
import LanyardStore
import LanyardSupport
import Testing

/// Apple token revocation (reference section 10) against the emulator's `/auth/token` and `/auth/revoke`, which check
/// every `client_secret` against the team key.
@Suite struct AppleLifecycleTests {
    static func fastOutbox(_ configuration: inout LanyardConfiguration) { configuration.outboxPollInterval = 0.05 }

    /// Signs in with Apple and a fresh authorization code; waits until the refresh token is stored.
    static func signInWithCode(_ server: TestServer, sub: String, bearer: String? = nil) async throws -> Session {
        let code = try await server.post("/_emulator/apple/authorization-code", ["sub": sub]).json["code"] as? String ?? ""
        let before = try await storedTokens(server)
        let session = try await server.signIn(.apple, sub: sub, bearer: bearer, extra: ["authorization_code": code])
        #expect(try await eventually { try await storedTokens(server) != before }, "the Apple refresh token was stored")
        return session
    }

    static func storedTokens(_ server: TestServer) async throws -> Int {
        try await server.runtime.database.read { try await $0.query("SELECT count(*) AS n FROM apple_tokens", []) }
            .first.map { Int(try $0.integer("n")) } ?? 0
    }

    /// Waits until the outbox has recorded `count` revocation attempts in all: moving the clock before an attempt
    /// is recorded would schedule its retry from the moved time.
    static func waitForRecordedAttempts(_ count: Int, in server: TestServer) async throws {
        let recorded = try await eventually {
            let rows = try await server.runtime.database.read {
                try await $0.query("SELECT CAST(coalesce(sum(attempts), 0) AS BIGINT) AS n FROM apple_revocations", [])
            }
            return (try? rows.first?.integer("n")) ?? 0 >= Int64(count)
        }
        #expect(recorded, "\(count) revocation attempts recorded")
    }

    static func revocations(_ server: TestServer) async throws -> [String] {
        try await server.get("/_emulator/apple/revocations").json["revoked"] as? [String] ?? []
    }

    @Test(arguments: TestDatabase.available)
    func deletingTheAccountRevokesExactlyItsAppleTokenEvenWhenAppleFailsAtFirst(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.fastOutbox) { server in
            let ada = try await Self.signInWithCode(server, sub: "ada")
            _ = try await Self.signInWithCode(server, sub: "someone-else")
            #expect(try await Self.storedTokens(server) == 2)
            let emulator = try #require(server.runtime.appleEmulator)
            emulator.failNextRevocations(2)

            // Deletion never waits on Apple.
            #expect(try await server.delete("/v1/users/me", bearer: ada.accessToken).status == 204)
            #expect(try await Self.storedTokens(server) == 1)
            try await Self.waitForRecordedAttempts(1, in: server)
            #expect(try await Self.revocations(server).isEmpty)
            server.clock.advance(by: 6)   // the second attempt, after 5 s
            try await Self.waitForRecordedAttempts(2, in: server)
            server.clock.advance(by: 11)  // the third, after 10 s more
            #expect(try await eventually { try await Self.revocations(server).count == 1 })
            let revoked = try await Self.revocations(server)
            #expect(revoked.count == 1)
            #expect(revoked.first.map(emulator.issued.contains) == true)
            // The revoked token is erased; the other account's stays. Apple's side answered before Lanyard recorded
            // the outcome: wait for the record.
            let erased = try await eventually {
                let rows = try await server.runtime.database.read {
                    try await $0.query("SELECT count(*) AS n FROM apple_revocations WHERE status = 'revoked' AND sealed_token IS NULL", [])
                }
                return try rows.first?.integer("n") == 1
            }
            #expect(erased, "the revoked token is erased")
            server.clock.advance(by: 3600)
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await Self.revocations(server).count == 1, "revoked once")
        }
    }

    @Test func unlinkingAppleRevokesItsTokenAndUnlinkingGoogleDoesNot() async throws {
        try await TestServer.with(.sqlite, configure: Self.fastOutbox) { server in
            let ada = try await Self.signInWithCode(server, sub: "ada")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g")],
                                          bearer: ada.accessToken).status == 200)
            #expect(try await server.delete("/v1/auth/link/google", bearer: ada.accessToken).status == 200)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await Self.revocations(server).isEmpty)
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g")],
                                          bearer: ada.accessToken).status == 200)
            #expect(try await server.delete("/v1/auth/link/apple", bearer: ada.accessToken).status == 200)
            #expect(try await eventually { try await Self.revocations(server).count == 1 })
        }
    }

    @Test func anAppleAccountReleasedByAMergeIsRevokedAndTheKeptOneIsNot() async throws {
        try await TestServer.with(.sqlite, configure: Self.fastOutbox) { server in
            let work = try await Self.signInWithCode(server, sub: "apple-work")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g-work")],
                                          bearer: work.accessToken).status == 200)
            let home = try await Self.signInWithCode(server, sub: "apple-home")
            #expect(try await Self.storedTokens(server) == 2)
            let proof = try await MergeTests.proof(server, for: home, sub: "g-work")
            let merged = try await MergeTests.merge(server, home, ["proof": proof, "keep": "other", "release": ["apple"]])
            #expect(merged.status == 200, "\(merged.text)")
            // The released Apple account's token is revoked; the survivor's own Apple token is kept.
            #expect(try await eventually { try await Self.revocations(server).count == 1 })
            #expect(try await Self.storedTokens(server) == 1)
        }
    }

    @Test func codesSentWithLinkAndReauthenticationAreRedeemedToo() async throws {
        try await TestServer.with(.sqlite, configure: Self.fastOutbox) { server in
            let grace = try await server.signIn(.google, sub: "grace")
            let code = try await server.post("/_emulator/apple/authorization-code", ["sub": "grace-apple"]).json["code"] as? String ?? ""
            #expect(try await server.post("/v1/auth/link/apple", ["id_token": try server.idToken(.apple, sub: "grace-apple"),
                                                                 "authorization_code": code], bearer: grace.accessToken).status == 200)
            #expect(try await eventually { try await Self.storedTokens(server) == 1 })
            let next = try await server.post("/_emulator/apple/authorization-code", ["sub": "grace-apple"]).json["code"] as? String ?? ""
            let reauthenticated = try await server.post("/v1/auth/reauthenticate/apple",
                                                        ["id_token": try server.idToken(.apple, sub: "grace-apple"),
                                                         "authorization_code": next], bearer: grace.accessToken)
            #expect(reauthenticated.status == 200)
            #expect(try await eventually { (server.runtime.appleEmulator?.issued.count ?? 0) == 2 })
            #expect(try await Self.storedTokens(server) == 1, "the identity keeps its newest token")
        }
    }

    @Test func aCodeThatCannotBeRedeemedNeverFailsTheSignIn() async throws {
        try await TestServer.with(.sqlite, configure: Self.fastOutbox) { server in
            let session = try await server.signIn(.apple, sub: "ada", extra: ["authorization_code": "not-a-code"])
            #expect(!session.accessToken.isEmpty)
            #expect(try await eventually {
                try await server.get("/metrics").text.contains(#"lanyard_apple_code_redemptions_total{outcome="failed"} 1"#)
            })
            #expect(try await Self.storedTokens(server) == 0)
            // A code is single-use: the second redemption of one code fails, the first stays stored.
            let code = try await server.post("/_emulator/apple/authorization-code", ["sub": "ada"]).json["code"] as? String ?? ""
            _ = try await server.signIn(.apple, sub: "ada", extra: ["authorization_code": code])
            _ = try await server.signIn(.apple, sub: "ada", extra: ["authorization_code": code])
            #expect(try await eventually {
                try await server.get("/metrics").text.contains(#"lanyard_apple_code_redemptions_total{outcome="failed"} 2"#)
            })
            #expect(try await Self.storedTokens(server) == 1)
        }
    }

    /// `lanyard emulator mint --authorization-code` makes a code offline that a dev server on the same data
    /// directory redeems.
    @Test func theCommandMintsACodeTheServerRedeems() async throws {
        try await TestServer.with(.sqlite, configure: Self.fastOutbox) { server in
            let (status, output) = try await AdminCommandTests.run(
                ["emulator", "mint", "--provider", "apple", "--sub", "cli-ada", "--authorization-code"], databaseURL: "sqlite::memory:")
            #expect(status == 0)
            let lines = output.split(separator: "\n").map(String.init)
            try #require(lines.count == 2)
            let answer = try await server.post("/v1/auth/signin/apple", ["id_token": lines[0], "authorization_code": lines[1]])
            #expect(answer.status == 200)
            #expect(try await eventually { try await Self.storedTokens(server) == 1 })
        }
    }

    @Test func appleRefusesAClientSecretNotSignedByTheTeamKey() async throws {
        try await TestServer.with(.sqlite) { server in
            let forged = try ES256.sign("eyJhbGciOiJFUzI1NiIsImtpZCI6IkRFVktFWTAwMDEifQ.eyJzdWIiOiJkZXYubGFueWFyZC5lbXVsYXRvciJ9",
                                        key: .init())
            var request = "client_id=dev.lanyard.emulator&client_secret=\(forged)&token=r1&token_type_hint=refresh_token"
            let answer = try await server.request(.POST, "/_emulator/apple/auth/revoke", rawBody: request)
            #expect(answer.status == 401)
            request = "client_id=dev.lanyard.emulator&client_secret=x&grant_type=authorization_code&code=c1"
            #expect(try await server.request(.POST, "/_emulator/apple/auth/token", rawBody: request).status == 401)
        }
    }

    @Test func appleSettingsAreAllOrNothingAndTheKeyMustBeAP8() throws {
        #expect(throws: ConfigurationError.self) {
            try LanyardConfiguration.load(environment: ["LANYARD_APPLE_TEAM_ID": "T", "LANYARD_APPLE_KEY_ID": "K"])
        }
        do {
            _ = try LanyardConfiguration.load(environment: ["LANYARD_APPLE_TEAM_ID": "T", "LANYARD_APPLE_KEY_ID": "K",
                                                            "LANYARD_APPLE_PRIVATE_KEY": "not a key"])
            Issue.record("a key that is not PEM was accepted")
        } catch {
            #expect(error.variable == "LANYARD_APPLE_PRIVATE_KEY")
        }
        let pem = P256KeyForTests.pem
        let configuration = try LanyardConfiguration.load(environment: ["LANYARD_APPLE_TEAM_ID": "T", "LANYARD_APPLE_KEY_ID": "K",
                                                                        "LANYARD_APPLE_PRIVATE_KEY": pem])
        #expect(configuration.applePrivateKey == pem)
    }
}

enum P256KeyForTests {
    static let pem = P256.Signing.PrivateKey().pemRepresentation
}
