import Foundation
import Lanyard
import Testing

/// The data store through typed collections.
@Suite struct SDKDataTests {
    @Test func recordsArePutReadVersionedAndDeleted() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            try await client.signInAnonymously()
            let reminders = client.collection("reminders", of: Reminder.self)
            let first = try await reminders.put(Reminder(title: "Buy milk"), id: "r1")
            #expect(first.version == 1)
            let second = try await reminders.put(Reminder(title: "Buy milk", done: true), id: "r1", ifVersion: first.version)
            #expect(second.version == 2)
            await #expect(throws: LanyardError.versionConflict(currentVersion: 2)) {
                try await reminders.put(Reminder(title: "stale"), id: "r1", ifVersion: 1)
            }
            #expect(try await reminders.get("r1")?.value == Reminder(title: "Buy milk", done: true))
            #expect(try await reminders.get("missing") == nil)

            try await reminders.delete("r1")
            #expect(try await reminders.get("r1") == nil)
            await #expect(throws: LanyardError.notFound) { try await reminders.delete("r1") }
        }
    }

    @Test func changesArePagedToTheEndAndPullChangesKeepsTheCursor() async throws {
        try await TestServer.with(.sqlite) { server in
            let store = MemorySessionStore()
            let client = server.client(storage: store)
            try await client.signInAnonymously()
            let tags = client.collection("tags", of: Tag.self)
            for index in 1...5 { try await tags.put(Tag(name: "t\(index)"), id: "t\(index)") }

            let all = try await tags.changes(since: nil, pageSize: 2)
            #expect(all.changes.map(\.id) == ["t1", "t2", "t3", "t4", "t5"])
            #expect(all.cursor != nil)

            #expect(try await tags.pullChanges(pageSize: 2).count == 5)
            #expect(try await tags.pullChanges().isEmpty)
            try await tags.delete("t2")
            try await tags.put(Tag(name: "six"), id: "t6")
            // A client restarted on the same storage continues from the kept cursor.
            let restarted = server.client(storage: store).collection("tags", of: Tag.self)
            let newer = try await restarted.pullChanges()
            #expect(newer.map(\.id) == ["t2", "t6"])
            #expect(newer.map(\.isDeleted) == [true, false])
            #expect(newer.last?.value == Tag(name: "six"))
        }
    }

    @Test func refusedRecordsArriveAsTypedErrors() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = server.client()
            await #expect(throws: LanyardError.notSignedIn) {
                try await client.collection("tags", of: Tag.self).put(Tag(name: "x"), id: "t")
            }
            try await client.signInAnonymously()
            do {
                try await client.collection("Bad Name", of: Tag.self).put(Tag(name: "x"), id: "t")
                Issue.record("an invalid collection name was accepted")
            } catch LanyardError.invalidRequest(let field, _) {
                #expect(field == "collection")
            }
            await #expect(throws: LanyardError.payloadTooLarge) {
                try await client.collection("tags", of: Tag.self).put(Tag(name: String(repeating: "x", count: 300_000)), id: "t")
            }
        }
    }
}

struct Tag: Codable, Sendable, Equatable {
    var name: String
}
