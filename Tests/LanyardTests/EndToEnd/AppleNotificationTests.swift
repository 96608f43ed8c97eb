import Foundation
import Testing

/// Apple's server-to-server notifications, signed by the emulator as Apple signs them, verified by the server
/// through Apple's (the emulator's) JWKS.
@Suite struct AppleNotificationTests {
    static func notify(_ server: TestServer, _ type: String, sub: String, extra: [String: Any] = [:]) async throws -> TestResponse {
        var body: [String: Any] = ["type": type, "sub": sub]
        body.merge(extra) { $1 }
        return try await server.post("/_emulator/apple/notify", body)
    }

    static func outcome(_ answer: TestResponse) -> String? {
        (try? JSONSerialization.jsonObject(with: Data((answer.json["answer"] as? String ?? "").utf8)) as? [String: Any])?["outcome"] as? String
    }

    @Test(arguments: TestDatabase.available)
    func consentRevokedEndsTheAppleSessionsOnceAndIsAWebhook(database: TestDatabase) async throws {
        let receiver = try await WebhookReceiver()
        try await TestServer.with(database, configure: WebhookTests.configure(receiver)) { server in
            let apple = try await server.signIn(.apple, sub: "ada")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g")],
                                          bearer: apple.accessToken).status == 200)
            let google = try await server.signIn(.google, sub: "g")

            let sent = try await Self.notify(server, "consent-revoked", sub: "ada")
            #expect(sent.json["status"] as? Int == 200)
            #expect(Self.outcome(sent) == "applied")
            #expect(try await server.get("/v1/users/me", bearer: apple.accessToken).status == 401)
            #expect(try await server.get("/v1/users/me", bearer: google.accessToken).status == 200)

            // The same notification again changes nothing.
            let replay = try await server.post("/v1/providers/apple/notifications", ["payload": sent.json["payload"] as? String ?? ""])
            #expect(replay.json["outcome"] as? String == "replayed")
            let deliveries = try await receiver.waitFor(3)
            #expect(deliveries.map(\.type) == ["user.created", "identity.linked", "identity.revoked"])
            #expect(deliveries.first { $0.type == "identity.revoked" }?.data["user_id"] == apple.userID)
        }
        await receiver.stop()
    }

    @Test(arguments: TestDatabase.available)
    func accountDeleteUnlinksAppleOrDeletesTheAccountItWasTheOnlyWayInto(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let both = try await server.signIn(.apple, sub: "both")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g-both")],
                                          bearer: both.accessToken).status == 200)
            let only = try await server.signIn(.apple, sub: "only")

            #expect(Self.outcome(try await Self.notify(server, "account-delete", sub: "both")) == "applied")
            let me = try await server.get("/v1/users/me", bearer: both.accessToken)
            #expect((me.json["linked_providers"] as? [String]) == ["google"])

            #expect(Self.outcome(try await Self.notify(server, "account-deleted", sub: "only")) == "applied")
            #expect(try await server.get("/v1/users/me", bearer: only.accessToken).status == 401)
            #expect(try await server.signIn(.apple, sub: "only").isNewUser)
            #expect(Self.outcome(try await Self.notify(server, "account-delete", sub: "nobody")) == "unknown_identity")
        }
    }

    @Test func emailForwardingIsRecordedAndAudited() async throws {
        try await TestServer.with(.sqlite, configure: { $0.adminKey = "k" }) { server in
            let ada = try await server.signIn(.apple, sub: "ada", email: "x@privaterelay.appleid.com")
            #expect(Self.outcome(try await Self.notify(server, "email-disabled", sub: "ada",
                                                       extra: ["email": "x@privaterelay.appleid.com"])) == "applied")
            let state = try await server.runtime.database.read {
                try await $0.query("SELECT email_forwarding FROM apple_identity_state", [])
            }
            #expect(try state.first?.string("email_forwarding") == "disabled")
            _ = try await Self.notify(server, "email-enabled", sub: "ada")
            let audit = try await server.request(.GET, "/v1/admin/audit?user_id=\(ada.userID)&type=user.updated", bearer: "k")
            #expect((audit.json["events"] as? [Any])?.count == 2)
        }
    }

    @Test func forgedOrForeignNotificationsAreRefused() async throws {
        try await TestServer.with(.sqlite) { server in
            _ = try await server.signIn(.apple, sub: "ada")
            let foreign = try await Self.notify(server, "account-delete", sub: "ada", extra: ["aud": "com.someone.else"])
            #expect(foreign.json["status"] as? Int == 401)
            #expect((foreign.json["answer"] as? String)?.contains("audience") == true)

            let genuine = try await Self.notify(server, "consent-revoked", sub: "ada", extra: ["jti": "one"])
            var forged = genuine.json["payload"] as? String ?? ""
            forged = String(forged.dropLast(4)) + (forged.hasSuffix("AAAA") ? "BBBB" : "AAAA")
            let refused = try await server.post("/v1/providers/apple/notifications", ["payload": forged])
            #expect(refused.status == 401)
            #expect(refused.errorReason == "signature")
            #expect(try await server.post("/v1/providers/apple/notifications", ["payload": "not.a.jws"]).status == 401)
            #expect(try await server.post("/v1/providers/apple/notifications", [:]).errorCode == "INVALID_REQUEST")
        }
    }
}
