import Foundation
import Lanyard
import LanyardSupport
import Testing

/// The client's one live connection (reference section 13, the SDK): twenty collections watched on one account hold
/// one stream on the server; each catches up on its own collection only, then gets its own changes live, none twice,
/// also after the app starts again.
@Suite struct SDKSharedStreamTests {
    typealias Reader = SDKChangesTests.Reader

    static func openStreams(_ server: TestServer) async throws -> Int? {
        let line = try await server.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix("lanyard_streams_open ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }
    }

    static func changeEvents(_ server: TestServer) async throws -> Int {
        MetricsText.value(in: try await server.get("/metrics").text, #"lanyard_stream_events_total{event="change"}"#) ?? 0
    }

    @Test func twentyCollectionsWatchedOnOneAccountShareOneStream() async throws {
        try await TestServer.with(.sqlite, configure: SDKChangesTests.quick) { server in
            let phone = server.client(), storage = MemorySessionStore()
            try await SDKChangesTests.signIn(server, phone, sub: "twenty")
            let names = (0..<20).map { "list\($0)" }
            for name in names { try await phone.collection(name, of: Item.self).put(Item(name: "old \(name)"), id: "old") }
            // History of another collection nobody watches: a first watch reads only its own collection.
            for n in 0..<60 { try await phone.collection("noise", of: Item.self).put(Item(name: "n\(n)"), id: "n\(n)") }

            let tablet = server.client(storage: storage)
            try await SDKChangesTests.signIn(server, tablet, sub: "twenty")
            let feeds = names.map { tablet.collection($0, of: Item.self).changes() }
            let readers = feeds.map { Reader($0) }
            for (name, reader) in zip(names, readers) {
                #expect(try await reader.wait { reader.elements.count == 1 }, "\(name) caught up")
                #expect(reader.elements.map(\.value?.name) == ["old \(name)"])
            }
            #expect(try await eventually { feeds.allSatisfy(\.isLive) }, "every collection is live")
            #expect(try await Self.openStreams(server) == 1, "twenty watchers, one stream")
            #expect(try await Self.changeEvents(server) == 0, "the shared stream started at the feed's end, replaying nothing")

            for name in names { try await phone.collection(name, of: Item.self).put(Item(name: "new \(name)"), id: "new") }
            for (name, reader) in zip(names, readers) {
                #expect(try await reader.wait { reader.elements.count == 2 }, "\(name) got its change live")
            }
            try await Task.sleep(for: .milliseconds(300))
            for (name, reader) in zip(names, readers) {
                #expect(reader.elements.map(\.id) == ["old", "new"], "\(name): \(reader.elements.map(\.id))")
            }
            #expect(try await Self.openStreams(server) == 1)
            for reader in readers { reader.stop() }
            #expect(try await eventually { try await Self.openStreams(server) == 0 }, "the last watcher gone, the stream closes")

            // The app starts again on the same storage: each collection resumes from its place, nothing twice.
            let relaunched = server.client(storage: storage)
            let again = names.prefix(3).map { Reader(relaunched.collection($0, of: Item.self).changes()) }
            defer { again.forEach { $0.stop() } }
            try await phone.collection("list0", of: Item.self).put(Item(name: "later"), id: "later")
            #expect(try await again[0].wait { again[0].elements.count == 1 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(again[0].elements.map(\.id) == ["later"])
            #expect(again[1].elements.isEmpty && again[2].elements.isEmpty)
        }
    }

    /// A collection's watcher and the whole feed's, on one client: one stream, each its own changes.
    @Test func theWholeFeedAndACollectionShareTheConnection() async throws {
        try await TestServer.with(.sqlite, configure: SDKChangesTests.quick) { server in
            let phone = server.client(), tablet = server.client()
            try await SDKChangesTests.signIn(server, phone, sub: "both-kinds")
            try await SDKChangesTests.signIn(server, tablet, sub: "both-kinds")
            try await phone.collection("notes", of: Item.self).put(Item(name: "first"), id: "n1")
            let everything = Reader(tablet.changes())
            let notes = Reader(tablet.collection("notes", of: Item.self).changes())
            defer { everything.stop(); notes.stop() }
            #expect(try await everything.wait { everything.elements.count == 1 })
            #expect(try await notes.wait { notes.elements.count == 1 })
            try await phone.collection("todos", of: Item.self).put(Item(name: "t"), id: "t1")
            try await phone.collection("notes", of: Item.self).put(Item(name: "second"), id: "n2")
            #expect(try await everything.wait { everything.elements.count == 3 })
            #expect(try await notes.wait { notes.elements.count == 2 })
            #expect(everything.elements.map(\.id) == ["n1", "t1", "n2"])
            #expect(notes.elements.map(\.id) == ["n1", "n2"])
            #expect(try await Self.openStreams(server) == 1)
        }
    }
}
