import Foundation
import LanyardSupport
import Testing

/// `lanyard users …` and `lanyard audit tail` as an operator runs them: processes on the server's database.
@Suite struct AdminCommandTests {
    /// Runs `lanyard` to completion on the database at `url`; its status and standard output.
    static func run(_ arguments: [String], databaseURL: String) async throws -> (Int32, String) {
        let process = try CommandTests.launch(arguments, environment: [
            "LANYARD_DATABASE_URL": databaseURL, "LANYARD_DATA_DIR": TestServer.sharedDataDirectory,
            "LANYARD_MASTER_KEY": Data(repeating: 7, count: 32).base64EncodedString(), "LANYARD_LOG_LEVEL": "error"])
        let text = String(decoding: process.standardOutput.readDataToEndOfFile(), as: UTF8.self)
        #expect(await CommandTests.waitForExit(process, seconds: 30))
        return (process.terminationStatus, text)
    }

    @Test func anOperatorListsShowsDisablesSignsOutAndDeletesFromTheCommandLine() async throws {
        let (databaseURL, cleanup) = try await TestDatabase.sqlite.makeFresh()
        defer { Task { await cleanup() } }
        let clock = ManualClock(Date())
        let running = try await RunningServer.startOnFreePort(databaseURL: databaseURL, clock: clock)
        let server = TestServer(running, clock: clock)
        let ada = try await server.signIn(.apple, sub: "ada-sub", email: "ada@example.com")
        _ = try await server.signIn(.google, sub: "grace", email: "grace@example.com")

        let (listed, table) = try await Self.run(["users", "list"], databaseURL: databaseURL)
        #expect(listed == 0)
        #expect(table.contains("ada@example.com") && table.contains("grace@example.com") && table.hasPrefix("ID"))

        let (_, json) = try await Self.run(["users", "list", "--query", "ada-sub", "--json"], databaseURL: databaseURL)
        let users = (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["users"] as? [[String: Any]]
        #expect(users?.compactMap { $0["id"] as? String } == [ada.userID])

        let (shown, details) = try await Self.run(["users", "show", ada.userID], databaseURL: databaseURL)
        #expect(shown == 0)
        #expect(details.contains("ada-sub") && details.contains("sign_in"))

        #expect(try await Self.run(["users", "disable", ada.userID], databaseURL: databaseURL).0 == 0)
        #expect(try await server.get("/v1/users/me", bearer: ada.accessToken).errorCode == "ACCOUNT_DISABLED")
        #expect(try await Self.run(["users", "enable", ada.userID], databaseURL: databaseURL).0 == 0)
        let again = try await server.signIn(.apple, sub: "ada-sub")
        let (_, signedOut) = try await Self.run(["users", "signout", ada.userID], databaseURL: databaseURL)
        #expect(signedOut.contains("Ended 1 session"))
        #expect(try await server.get("/v1/users/me", bearer: again.accessToken).status == 401)

        let (_, tail) = try await Self.run(["audit", "tail", "--user", ada.userID, "--json"], databaseURL: databaseURL)
        let types = tail.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["type"] as? String
        }
        #expect(types.suffix(3) == ["user.enabled", "sign_in", "sign_out"])

        #expect(try await Self.run(["users", "delete", ada.userID, "--yes"], databaseURL: databaseURL).0 == 0)
        #expect(try await Self.run(["users", "show", ada.userID], databaseURL: databaseURL).0 == 1)
        await running.stop()
    }

    @Test func anOperatorListsShowsAndDissolvesGroupsFromTheCommandLine() async throws {
        let (databaseURL, cleanup) = try await TestDatabase.sqlite.makeFresh()
        defer { Task { await cleanup() } }
        let clock = ManualClock(Date())
        let running = try await RunningServer.startOnFreePort(databaseURL: databaseURL, clock: clock)
        let server = TestServer(running, clock: clock)
        let parent = try await server.signIn(.apple, sub: "cli-parent", email: "p@privaterelay.appleid.com")
        let groupID = try await GroupTests.family(server, parent, name: "The Lovelaces")
        let child = try await server.signIn(.google, sub: "cli-child")
        #expect(try await GroupTests.join(server, try await GroupTests.invite(server, groupID, by: parent), child).status == 200)
        let pendingCode = try await GroupTests.invite(server, groupID, by: parent, ["role": "viewer"])

        let (listed, table) = try await Self.run(["groups", "list", "--query", "lovelace"], databaseURL: databaseURL)
        #expect(listed == 0 && table.contains(groupID) && table.contains("The Lovelaces"))
        let (_, json) = try await Self.run(["groups", "show", groupID, "--json"], databaseURL: databaseURL)
        let details = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let group = try #require(details["group"] as? [String: Any])
        #expect((group["members"] as? [[String: Any]])?.compactMap { $0["user_id"] as? String } == [parent.userID, child.userID])
        #expect((details["invites"] as? [[String: Any]])?.count == 1)
        #expect(!json.contains(pendingCode) && !json.contains("privaterelay"))

        #expect(try await Self.run(["groups", "dissolve", groupID, "--yes"], databaseURL: databaseURL).0 == 0)
        #expect(try await server.get("/v1/groups/\(groupID)", bearer: child.accessToken).status == 404)
        #expect(try await Self.run(["groups", "show", groupID], databaseURL: databaseURL).0 == 1)
        await running.stop()
    }

    @Test func anOperatorListsAndRevertsAMergeFromTheCommandLine() async throws {
        let (databaseURL, cleanup) = try await TestDatabase.sqlite.makeFresh()
        defer { Task { await cleanup() } }
        let clock = ManualClock(Date())
        let running = try await RunningServer.startOnFreePort(databaseURL: databaseURL, clock: clock)
        let server = TestServer(running, clock: clock)
        let kept = try await server.signIn(.apple, sub: "cli-kept")
        let absorbed = try await server.signIn(.google, sub: "cli-absorbed")
        let challenge = try await server.post("/v1/users/me/merge/challenge", bearer: kept.accessToken)
        let nonce = try #require(challenge.json["nonce"] as? String)
        let merged = try await server.post("/v1/users/me/merge", ["proof": ["provider": "google",
            "id_token": try server.idToken(.google, sub: "cli-absorbed", nonce: nonce)]], bearer: kept.accessToken)
        let mergeID = try #require(merged.json["merge_id"] as? String)

        let (listed, table) = try await Self.run(["merges", "list", "--user", kept.userID], databaseURL: databaseURL)
        #expect(listed == 0 && table.contains(mergeID) && table.contains(absorbed.userID))
        let (reverted, output) = try await Self.run(["merges", "revert", mergeID], databaseURL: databaseURL)
        #expect(reverted == 0 && output.contains("is back with 1 sign-in method"))
        #expect(try await server.signIn(.google, sub: "cli-absorbed").userID == absorbed.userID)
        #expect(try await Self.run(["merges", "revert", mergeID], databaseURL: databaseURL).0 == 1)
        await running.stop()
    }
}
