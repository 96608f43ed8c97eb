import Crypto
import Foundation
import LanyardServer
import LanyardSupport
import Testing

/// Account events delivered to a real HTTP receiver (reference section 7), signatures checked by an HMAC computed
/// here from the Standard Webhooks rule, not by Lanyard's signer.
@Suite struct WebhookTests {
    static let secretKey = Data((0..<24).map { UInt8($0 * 7 % 251) })
    static let secret = "whsec_" + secretKey.base64EncodedString()

    static func configure(_ receiver: WebhookReceiver) -> (inout LanyardConfiguration) -> Void {
        { configuration in
            configuration.webhookURL = receiver.url
            configuration.webhookSecret = secret
            configuration.outboxPollInterval = 0.05
        }
    }

    /// Waits until the outbox has recorded `count` attempts in all: the receiver sees an attempt just before the
    /// worker records it, and moving the clock in between would schedule the retry from the moved time.
    static func waitForRecordedAttempts(_ count: Int, in runtime: LanyardRuntime) async throws {
        let recorded = try await eventually {
            let rows = try await runtime.database.read { try await $0.query("SELECT CAST(coalesce(sum(attempts), 0) AS BIGINT) AS n FROM webhook_events", []) }
            return (try? rows.first?.integer("n")) ?? 0 >= Int64(count)
        }
        #expect(recorded, "\(count) webhook attempts recorded")
    }

    static func isSigned(_ delivery: WebhookReceiver.Delivery) -> Bool {
        let signed = Data("\(delivery.id).\(delivery.timestamp).\(delivery.body)".utf8)
        let expected = Data(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: secretKey)))
        return delivery.signature.split(separator: " ").contains { $0 == "v1," + expected.base64EncodedString() }
    }

    @Test(arguments: TestDatabase.available)
    func accountEventsArriveSignedAndInOrder(database: TestDatabase) async throws {
        let receiver = try await WebhookReceiver()
        try await TestServer.with(database, configure: Self.configure(receiver)) { server in
            let ada = try await server.signIn(.apple, sub: "ada")
            #expect(try await server.post("/v1/auth/link/google", ["id_token": try server.idToken(.google, sub: "g")],
                                          bearer: ada.accessToken).status == 200)
            let guest = try await server.anonymous()
            _ = try await server.signIn(.apple, sub: "ada", bearer: guest.accessToken)
            #expect(try await server.request(.PATCH, "/v1/users/me", json: ["display_name": "Ada"], bearer: ada.accessToken).status == 200)
            #expect(try await server.delete("/v1/auth/link/google", bearer: ada.accessToken).status == 200)
            #expect(try await server.delete("/v1/users/me", bearer: ada.accessToken).status == 204)

            let deliveries = try await receiver.waitFor(7)
            #expect(deliveries.count == 7)
            #expect(deliveries.allSatisfy(Self.isSigned))
            #expect(Set(deliveries.map(\.id)).count == deliveries.count)
            let adas = deliveries.filter { $0.data["user_id"] == ada.userID || $0.data["to"] == ada.userID }
            #expect(adas.map(\.type) == ["user.created", "identity.linked", "account.merged", "user.updated",
                                         "identity.unlinked", "user.deleted"])
            let merged = try #require(adas.first { $0.type == "account.merged" }?.data)
            #expect(merged.filter { $0.key != "merge_id" } == ["from": guest.userID, "to": ada.userID, "user_id": ada.userID,
                                                               "kind": "guest", "actor": ada.userID])
            #expect(merged["merge_id"]?.isEmpty == false)
            #expect(adas.first { $0.type == "identity.linked" }?.data["provider"] == "google")
            #expect(deliveries.contains { $0.type == "user.created" && $0.data["user_id"] == guest.userID })
            #expect(deliveries.allSatisfy { ($0.json["timestamp"] as? String)?.hasSuffix("Z") == true })
            // Counted once the worker has the receiver's answer, a moment after the receiver saw the request.
            var metrics = ""
            for _ in 0..<100 where !metrics.contains(#"lanyard_webhook_attempts_total{outcome="delivered"} 7"#) {
                metrics = try await server.get("/metrics").text
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(metrics.contains(#"lanyard_webhook_attempts_total{outcome="delivered"} 7"#))
            #expect(metrics.contains("lanyard_webhook_attempt_duration_seconds_bucket"))
        }
        await receiver.stop()
    }

    @Test(arguments: TestDatabase.available)
    func everyGroupChangeArrivesSignedWithItsActor(database: TestDatabase) async throws {
        let receiver = try await WebhookReceiver()
        try await TestServer.with(database, configure: { Self.configure(receiver)(&$0); $0.adminKey = AdminTests.key }) { server in
            let parent = try await server.signIn(.apple, sub: "hook-parent")
            let child = try await server.signIn(.google, sub: "hook-child")
            let groupID = try await GroupTests.family(server, parent)
            _ = try await server.request(.PATCH, "/v1/groups/\(groupID)", json: ["name": "Renamed"], bearer: parent.accessToken)
            #expect(try await GroupTests.join(server, try await GroupTests.invite(server, groupID, by: parent), child).status == 200)
            _ = try await server.request(.PATCH, "/v1/groups/\(groupID)/members/\(child.userID)", json: ["role": "admin"],
                                         bearer: parent.accessToken)
            #expect(try await server.post("/v1/groups/\(groupID)/transfer", ["user_id": child.userID],
                                          bearer: parent.accessToken).status == 200)
            #expect(try await server.post("/v1/groups/\(groupID)/leave", bearer: parent.accessToken).status == 204)
            #expect(try await server.delete("/v1/admin/groups/\(groupID)", bearer: AdminTests.key).status == 204)

            // Two sign-ups, then the group's seven changes.
            let deliveries = try await receiver.waitFor(9)
            #expect(deliveries.allSatisfy(Self.isSigned))
            let group = deliveries.filter { $0.data["group_id"] == groupID }
            #expect(group.map(\.type).sorted() == ["group.created", "group.deleted", "group.member_joined",
                                                   "group.member_removed", "group.member_role_changed",
                                                   "group.ownership_transferred", "group.updated"])
            func event(_ type: String) -> [String: String] { group.first { $0.type == type }?.data ?? [:] }
            #expect(event("group.created")["actor"] == parent.userID && event("group.created")["user_id"] == parent.userID)
            #expect(event("group.member_joined")["user_id"] == child.userID && event("group.member_joined")["role"] == "member")
            #expect(event("group.member_role_changed")["role"] == "admin" && event("group.member_role_changed")["from"] == "member")
            #expect(event("group.ownership_transferred")["to"] == child.userID
                    && event("group.ownership_transferred")["actor"] == parent.userID)
            #expect(event("group.member_removed")["reason"] == "left" && event("group.member_removed")["user_id"] == parent.userID)
            #expect(event("group.deleted")["actor"] == "admin" && event("group.deleted")["members"] == child.userID)
            // Each is in the audit log too, with its actor.
            let audit = try await server.get("/v1/admin/audit?limit=50", bearer: AdminTests.key)
            #expect(audit.text.contains("group.ownership_transferred") && audit.text.contains("group.member_role_changed"))
        }
        await receiver.stop()
    }

    @Test func aFullMergeAndItsRevertArriveAsWebhooks() async throws {
        let receiver = try await WebhookReceiver()
        try await TestServer.with(.sqlite, configure: { Self.configure(receiver)(&$0); $0.adminKey = AdminTests.key }) { server in
            let kept = try await server.signIn(.apple, sub: "hook-kept")
            _ = try await server.signIn(.google, sub: "hook-absorbed")
            let proof = try await MergeTests.proof(server, for: kept, sub: "hook-absorbed")
            let merged = try await MergeTests.merge(server, kept, ["proof": proof])
            let mergeID = try #require(merged.json["merge_id"] as? String)
            #expect(try await server.post("/v1/admin/merges/\(mergeID)/revert", bearer: AdminTests.key).status == 200)
            // Two sign-ups, the merge, the revert.
            let deliveries = try await receiver.waitFor(4)
            #expect(deliveries.allSatisfy(Self.isSigned))
            let full = try #require(deliveries.first { $0.type == "account.merged" })
            #expect(full.data["kind"] == "full" && full.data["merge_id"] == mergeID && full.data["to"] == kept.userID)
            #expect(full.data["actor"] == kept.userID)
            let reverted = try #require(deliveries.first { $0.type == "account.unmerged" })
            #expect(reverted.data["merge_id"] == mergeID && reverted.data["actor"] == "admin")
        }
        await receiver.stop()
    }

    @Test func aFailingReceiverGetsTheEventAfterItRecoversWithTheSameID() async throws {
        let receiver = try await WebhookReceiver()
        receiver.answer([500, 503, 404])
        try await TestServer.with(.sqlite, configure: Self.configure(receiver)) { server in
            _ = try await server.signIn(.google, sub: "g")
            #expect(try await receiver.waitFor(1).count == 1)
            // The retries come on the schedule: 5 s, then 5 min, then 30 min (±10%).
            for (wait, count) in [(6.0, 2), (331.0, 3), (1981.0, 4)] {
                try await Self.waitForRecordedAttempts(count - 1, in: server.runtime)
                try await Task.sleep(for: .milliseconds(200))
                #expect(receiver.deliveries.count == count - 1, "no attempt before it is due")
                server.clock.advance(by: wait)
                #expect(try await receiver.waitFor(count).count == count)
            }
            let attempts = receiver.deliveries
            #expect(Set(attempts.map(\.id)).count == 1)
            #expect(attempts.allSatisfy(Self.isSigned))
            try await Task.sleep(for: .milliseconds(300))
            server.clock.advance(by: 86_400)
            try await Task.sleep(for: .milliseconds(300))
            #expect(receiver.deliveries.count == 4, "delivered: never sent again")
        }
        await receiver.stop()
    }

    /// A receiver that does not answer fails the attempt at the timeout (here 0.5 s, 15 s by default) and holds
    /// no worker: the retry comes on the schedule, and API requests meanwhile are answered as usual.
    @Test func aReceiverThatDoesNotAnswerFailsTheAttemptAtTheTimeout() async throws {
        let receiver = try await WebhookReceiver()
        receiver.answer([0])
        try await TestServer.with(.sqlite, configure: {
            Self.configure(receiver)(&$0)
            $0.webhookTimeout = 0.5
        }) { server in
            _ = try await server.signIn(.google, sub: "g")
            #expect(try await receiver.waitFor(1).count == 1)
            let started = ContinuousClock.now
            try await Self.waitForRecordedAttempts(1, in: server.runtime)
            // Well under the 15 s default and the receiver's silence; the margin is for a starved test machine.
            #expect(ContinuousClock.now - started < .seconds(14), "the attempt was given up at its timeout")
            let recorded = try await server.runtime.database.read {
                try await $0.query("SELECT status, last_error FROM webhook_events", [])
            }
            #expect(try recorded.first?.string("status") == "pending")
            #expect(try recorded.first?.optionalString("last_error")?.isEmpty == false)
            #expect(try await server.signIn(.apple, sub: "meanwhile").accessToken.isEmpty == false)
            // The first event again (same id), and the other account's, in either order: accounts do not wait
            // for each other. (At least once: a delivery may come twice, as the receiver deduplicates by id.) On a
            // starved machine an attempt can outlast the 0.5 s timeout although the receiver answers: the clock
            // moves on to the next retry until both have arrived (waiting for those two, not for a count: a slow
            // answer to the other account's event makes it come twice too).
            let firstID = try #require(receiver.deliveries.first?.id)
            _ = try await eventually(within: 60, every: .milliseconds(500)) {
                server.clock.advance(by: 60)
                let deliveries = receiver.deliveries
                return deliveries.filter { $0.id == firstID }.count >= 2
                    && deliveries.contains { $0.id != firstID && $0.type == "user.created" }
            }
            let deliveries = receiver.deliveries
            #expect(deliveries.count >= 3)
            #expect(deliveries.filter { $0.id == firstID }.count >= 2)
            #expect(deliveries.contains { $0.id != firstID && $0.type == "user.created" })
        }
        await receiver.stop()
    }

    @Test func aRestartBetweenAttemptsLosesNothing() async throws {
        let receiver = try await WebhookReceiver()
        receiver.answer([500])
        let (databaseURL, cleanup) = try await TestDatabase.sqlite.makeFresh()
        let clock = ManualClock(Date())
        let first = try await RunningServer.startOnFreePort(databaseURL: databaseURL, clock: clock,
                                                            configure: Self.configure(receiver))
        _ = try await TestServer(first, clock: clock).signIn(.apple, sub: "ada")
        #expect(try await receiver.waitFor(1).count == 1)
        await first.stop()

        clock.advance(by: 6)
        let second = try await RunningServer.startOnFreePort(databaseURL: databaseURL, clock: clock,
                                                             configure: Self.configure(receiver))
        let deliveries = try await receiver.waitFor(2)
        #expect(deliveries.count == 2)
        #expect(deliveries.first?.id == deliveries.last?.id)
        #expect(deliveries.last?.type == "user.created")
        await second.stop()
        await receiver.stop()
        await cleanup()
    }

    @Test func twoInstancesDeliverEachEventOnce() async throws {
        let receiver = try await WebhookReceiver()
        try await MultiInstanceTests.withTwoInstances(Self.configure(receiver)) { a, b in
            for index in 0..<20 { _ = try await (index % 2 == 0 ? a : b).signIn(.google, sub: "g\(index)") }
            let deliveries = try await receiver.waitFor(20)
            try await Task.sleep(for: .milliseconds(500))
            #expect(receiver.deliveries.count == 20)
            #expect(Set(deliveries.map(\.id)).count == 20)
        }
        await receiver.stop()
    }

    /// After every attempt of the schedule failed, the event is marked failed; `lanyard webhooks list --failed`
    /// shows it and `lanyard webhooks retry` delivers it.
    @Test func aFailedEventIsListedAndRetriedByCommand() async throws {
        let receiver = try await WebhookReceiver()
        receiver.answer(Array(repeating: 500, count: 10))
        let (databaseURL, cleanup) = try await TestDatabase.sqlite.makeFresh()
        let clock = ManualClock(Date())
        let running = try await RunningServer.startOnFreePort(databaseURL: databaseURL, clock: clock,
                                                              configure: Self.configure(receiver))
        _ = try await TestServer(running, clock: clock).signIn(.google, sub: "g")
        for attempt in 1...10 {
            #expect(try await receiver.waitFor(attempt).count == attempt)
            try await Self.waitForRecordedAttempts(attempt, in: running.runtime)
            clock.advance(by: 86_400 * 1.2)
        }
        let (_, failed) = try await AdminCommandTests.run(["webhooks", "list", "--failed", "--json"], databaseURL: databaseURL)
        let firstLine = Data(String(failed.split(separator: "\n").first ?? "").utf8)
        let parsed = try JSONSerialization.jsonObject(with: firstLine) as? [String: Any]
        let line = try #require(parsed)
        #expect(line["status"] as? String == "failed")
        #expect(line["attempts"] as? Int == 10)
        let id = try #require(line["webhook_id"] as? String)
        #expect(try await AdminCommandTests.run(["webhooks", "retry", id], databaseURL: databaseURL).0 == 0)
        let deliveries = try await receiver.waitFor(11)
        #expect(deliveries.count == 11)
        #expect(deliveries.last?.id == id)
        // The receiver sees the attempt just before the worker records it as delivered.
        try await Self.waitForRecordedAttempts(11, in: running.runtime)
        let (_, after) = try await AdminCommandTests.run(["webhooks", "list", "--failed"], databaseURL: databaseURL)
        #expect(after.contains("No failed deliveries."))
        await running.stop()
        await receiver.stop()
        await cleanup()
    }
}
