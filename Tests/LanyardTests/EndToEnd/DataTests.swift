import Foundation
import Testing
import LanyardStore

@Suite struct DataTests {
    @Test(arguments: TestDatabase.available)
    func recordsSyncAcrossDevicesWithVersionsAndTombstones(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let phone = try await server.signIn(.apple, sub: "syncer")
            let put = try await server.request(.PUT, "/v1/data/notes/n1", json: ["data": ["text": "hello"]], bearer: phone.accessToken)
            #expect(put.status == 200)
            #expect(put.json["version"] as? Int == 1)
            #expect(put.headers.first(name: "ETag") == "\"1\"")
            #expect((put.json["data"] as? [String: Any])?["text"] as? String == "hello")

            let tablet = try await server.signIn(.apple, sub: "syncer")
            let read = try await server.get("/v1/data/notes/n1", bearer: tablet.accessToken)
            #expect((read.json["data"] as? [String: Any])?["text"] as? String == "hello")

            let stale = try await server.request(.PUT, "/v1/data/notes/n1", json: ["data": ["text": "b"]], bearer: tablet.accessToken,
                                                 headers: ["If-Match": "\"7\""])
            #expect(stale.status == 412)
            #expect(stale.errorCode == "VERSION_CONFLICT")
            let updated = try await server.request(.PUT, "/v1/data/notes/n1", json: ["data": ["text": "b"]],
                                                   bearer: tablet.accessToken, headers: ["If-Match": "\"1\""])
            #expect(updated.json["version"] as? Int == 2)
            _ = try await server.request(.PUT, "/v1/data/notes/n2", json: ["data": ["text": "second"]], bearer: phone.accessToken)
            #expect(try await server.delete("/v1/data/notes/n1", bearer: phone.accessToken).json["deleted"] as? Bool == true)
            #expect(try await server.get("/v1/data/notes/n1", bearer: phone.accessToken).errorCode == "NOT_FOUND")

            let first = try await server.get("/v1/data/notes?limit=1", bearer: tablet.accessToken)
            #expect(first.json["has_more"] as? Bool == true)
            let cursor = try #require(first.json["next_cursor"] as? String)
            let rest = try await server.get("/v1/data/notes?since=\(cursor)&limit=500", bearer: tablet.accessToken)
            let records = try #require(rest.json["records"] as? [[String: Any]])
            #expect(records.map { $0["id"] as? String } == ["n1"])
            #expect(records.first?["deleted"] as? Bool == true)
            #expect(rest.json["has_more"] as? Bool == false)

            // Another account sees none of it.
            let stranger = try await server.signIn(.google, sub: "stranger")
            #expect(try await server.get("/v1/data/notes/n2", bearer: stranger.accessToken).status == 404)
            #expect((try await server.get("/v1/data/notes", bearer: stranger.accessToken).json["records"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(arguments: TestDatabase.available)
    func badRecordRequestsAreRefusedClearly(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "careless")
            let badCollection = try await server.request(.PUT, "/v1/data/Notes/n1", json: ["data": [:]], bearer: session.accessToken)
            #expect(badCollection.errorDetails["field"] as? String == "collection")
            let badID = try await server.request(.PUT, "/v1/data/notes/n%201", json: ["data": [:]], bearer: session.accessToken)
            #expect(badID.errorDetails["field"] as? String == "id")
            let notObject = try await server.request(.PUT, "/v1/data/notes/n1", json: ["data": [1, 2]], bearer: session.accessToken)
            #expect(notObject.errorDetails["field"] as? String == "data")
            let big = try await server.request(.PUT, "/v1/data/notes/n1",
                                               json: ["data": ["text": String(repeating: "x", count: 270_000)]],
                                               bearer: session.accessToken)
            #expect(big.status == 413)
            // The answer names the record's limit (256 KiB), not another route's.
            #expect(big.errorDetails["limit_bytes"] as? Int == 262_144)
            #expect(big.errorMessage?.contains("256 KiB") == true, "\(big.errorMessage ?? "")")
            // Data stored whole but just over the limit once written (under the body's): the same answer.
            let justOver = try await server.request(.PUT, "/v1/data/notes/n1",
                                                    json: ["data": ["text": String(repeating: "x", count: 262_140)]],
                                                    bearer: session.accessToken)
            #expect(justOver.status == 413)
            #expect(justOver.errorDetails["limit_bytes"] as? Int == 262_144)
            #expect(try await server.get("/v1/data/notes?limit=501", bearer: session.accessToken).errorDetails["field"] as? String == "limit")
            #expect(try await server.get("/v1/data/notes?since=abc", bearer: session.accessToken).errorDetails["field"] as? String == "since")
            #expect(try await server.get("/v1/data/notes/n1").errorCode == "UNAUTHORIZED")
        }
    }

    /// Data nested `levels` deep: `{"a": {"a": … {}}}`, `data` itself being level 1.
    static func nested(_ levels: Int) -> String {
        String(repeating: #"{"a":"#, count: levels - 1) + "{}" + String(repeating: "}", count: levels - 1)
    }

    /// Nesting is limited (64 levels) and refused before anything is stored; what was stored is always answered,
    /// in whole collections too (the probe found 508–510 levels stored, then answered 500).
    @Test(arguments: TestDatabase.available)
    func deeplyNestedDataIsRefusedAndStoredDataIsAlwaysAnswered(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "nester")
            let deepest = try await server.request(.PUT, "/v1/data/trees/ok", rawBody: #"{"data":\#(Self.nested(64))}"#,
                                                   bearer: session.accessToken)
            #expect(deepest.status == 200)
            let read = try await server.get("/v1/data/trees/ok", bearer: session.accessToken)
            #expect(read.status == 200)
            var level = read.json["data"] as? [String: Any], depth = 1
            while let inner = level?["a"] as? [String: Any] { level = inner; depth += 1 }
            #expect(depth == 64)

            for levels in [65, 200, 509, 510] {
                let refused = try await server.request(.PUT, "/v1/data/trees/t\(levels)",
                                                       rawBody: #"{"data":\#(Self.nested(levels))}"#, bearer: session.accessToken)
                #expect(refused.status == 400, "\(levels)")
                #expect(refused.errorCode == "INVALID_REQUEST", "\(levels)")
                #expect(refused.errorDetails["field"] as? String == "data", "\(levels)")
                #expect(try await server.get("/v1/data/trees/t\(levels)", bearer: session.accessToken).status == 404)
            }
            // Arrays count as levels too.
            let arrays = String(repeating: #"{"a":["#, count: 40) + "1" + String(repeating: "]}", count: 40)
            let refusedArrays = try await server.request(.PUT, "/v1/data/trees/arrays", rawBody: #"{"data":\#(arrays)}"#,
                                                         bearer: session.accessToken)
            #expect(refusedArrays.errorDetails["field"] as? String == "data")
            let listed = try await server.get("/v1/data/trees?limit=500", bearer: session.accessToken)
            #expect(listed.status == 200)
            #expect((listed.json["records"] as? [[String: Any]])?.map { $0["id"] as? String } == ["ok"])
        }
    }

    /// The guest story with app data: the guest's records move into the account; on a clash the newer wins.
    @Test(arguments: TestDatabase.available)
    func aGuestsRecordsFollowThemIntoTheirAccount(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await server.signIn(.google, sub: "g-owner-data")
            _ = try await server.request(.PUT, "/v1/data/settings/theme", json: ["data": ["value": "dark"]], bearer: owner.accessToken)
            _ = try await server.request(.PUT, "/v1/data/scores/level1", json: ["data": ["best": 10]], bearer: owner.accessToken)
            server.clock.advance(by: 60)
            let guest = try await server.anonymous()
            _ = try await server.request(.PUT, "/v1/data/scores/level1", json: ["data": ["best": 42]], bearer: guest.accessToken)
            _ = try await server.request(.PUT, "/v1/data/scores/level2", json: ["data": ["best": 7]], bearer: guest.accessToken)

            let merged = try await server.signIn(.google, sub: "g-owner-data", bearer: guest.accessToken)
            #expect(merged.userID == owner.userID)
            func best(_ id: String) async throws -> Int? {
                ((try await server.get("/v1/data/scores/\(id)", bearer: merged.accessToken).json["data"]) as? [String: Any])?["best"] as? Int
            }
            #expect(try await best("level1") == 42)
            #expect(try await best("level2") == 7)
            let theme = try await server.get("/v1/data/settings/theme", bearer: merged.accessToken)
            #expect((theme.json["data"] as? [String: Any])?["value"] as? String == "dark")

            // The owner's older level1 is kept in the audit log, not silently lost.
            let replaced = try await server.runtime.database.read { try await AuditStore($0).entries(event: "merge.record_replaced") }
            #expect(replaced.count == 1)
            let details = try #require(replaced.first?.details.flatMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
            })
            #expect(details["kept"] == "from")
            #expect(details["from_account"] == owner.userID)
            let discarded = try JSONSerialization.jsonObject(with: Data(details["discarded_data"]!.utf8)) as? [String: Int]
            #expect(discarded == ["best": 10])

            // Devices of the owner learn of the moved records through their sync cursor.
            let changes = try await server.get("/v1/data/scores?since=0", bearer: owner.accessToken)
            #expect((changes.json["records"] as? [[String: Any]])?.count == 2)
            let guestRows = try await server.runtime.database.read { try await RecordStore($0).all(ownerID: guest.userID) }
            #expect(guestRows.isEmpty)
        }
    }

    @Test(arguments: TestDatabase.available)
    func deletingTheAccountDeletesItsRecords(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "leaving-with-data")
            _ = try await server.request(.PUT, "/v1/data/notes/n1", json: ["data": ["a": 1]], bearer: session.accessToken)
            #expect(try await server.delete("/v1/users/me", bearer: session.accessToken).status == 204)
            let rows = try await server.runtime.database.read { try await RecordStore($0).all(ownerID: session.userID) }
            #expect(rows.isEmpty)
        }
    }
}
