import Foundation
import Lanyard
import LanyardSupport
import Synchronization
import Testing

/// The SDK's live changes against a real server: catch-up then live, reconnects, token expiry, restarts.
@Suite struct SDKChangesTests {
    /// Reads a feed in a task of its own and keeps what it delivered.
    final class Reader<Sequence: AsyncSequence & Sendable>: Sendable where Sequence.Element: Sendable {
        private final class Inbox: Sendable {
            let received = Mutex<[Sequence.Element]>([])
            let outcome = Mutex<(error: (any Error)?, finished: Bool)>((nil, false))
        }

        private let inbox = Inbox()
        private let task: Task<Void, Never>

        init(_ sequence: Sequence) {
            let inbox = self.inbox
            task = Task {
                do {
                    for try await element in sequence { inbox.received.withLock { $0.append(element) } }
                    inbox.outcome.withLock { $0.finished = true }
                } catch {
                    inbox.outcome.withLock { $0 = (error, true) }
                }
            }
        }

        var elements: [Sequence.Element] { inbox.received.withLock { $0 } }
        var error: (any Error)? { inbox.outcome.withLock { $0.error } }
        var finished: Bool { inbox.outcome.withLock { $0.finished } }

        /// Waits up to `seconds` for `condition`.
        func wait(_ seconds: Double = 30, until condition: () -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
            while !condition() {
                guard ContinuousClock.now < deadline else { return false }
                try await Task.sleep(for: .milliseconds(20))
            }
            return true
        }

        func stop() { task.cancel() }
    }

    static func signIn(_ server: TestServer, _ client: LanyardClient, sub: String) async throws {
        try await client.signInWithApple(idToken: try server.idToken(.apple, sub: sub))
    }

    static func quick(_ configuration: inout LanyardConfiguration) {
        configuration.streamHeartbeat = 0.3
    }

    @Test func anotherDeviceSeesChangesLiveAfterCatchingUp() async throws {
        try await TestServer.with(.sqlite, configure: Self.quick) { server in
            let phone = server.client(), tablet = server.client()
            try await Self.signIn(server, phone, sub: "two-devices")
            try await Self.signIn(server, tablet, sub: "two-devices")
            let phoneList = phone.collection("shopping", of: Item.self)
            try await phoneList.put(Item(name: "milk"), id: "milk")

            let changes = tablet.changes()
            #expect(!changes.isLive)
            let reader = Reader(changes)
            defer { reader.stop() }
            #expect(try await reader.wait { reader.elements.count == 1 && changes.isLive })
            #expect(reader.elements.first?.id == "milk")
            #expect(try reader.elements.first?.value(as: Item.self) == Item(name: "milk"))

            try await phoneList.put(Item(name: "eggs"), id: "eggs")
            try await phoneList.delete("milk")
            #expect(try await reader.wait { reader.elements.count == 3 })
            #expect(reader.elements.map(\.id) == ["milk", "eggs", "milk"])
            #expect(reader.elements.last?.isDeleted == true)

            // Typed, for one collection: the other collection's change is not in it.
            let typed = Reader(tablet.collection("shopping", of: Item.self).changes())
            defer { typed.stop() }
            try await phone.collection("notes", of: Item.self).put(Item(name: "not shopping"), id: "n1")
            try await phoneList.put(Item(name: "bread"), id: "bread")
            #expect(try await typed.wait { typed.elements.map(\.id) == ["eggs", "milk", "bread"] })
            #expect(typed.elements.last?.value == Item(name: "bread"))
            #expect(typed.elements[1].isDeleted)
        }
    }

    @Test func aRestartedAppResumesAfterTheLastChangeItGotAndNeverRepeatsOne() async throws {
        try await TestServer.with(.sqlite, configure: Self.quick) { server in
            let store = MemorySessionStore()
            let phone = server.client()
            try await Self.signIn(server, phone, sub: "restarting-app")
            let tablet = server.client(storage: store)
            try await Self.signIn(server, tablet, sub: "restarting-app")
            let list = phone.collection("items", of: Item.self)
            for n in 0..<5 { try await list.put(Item(name: "n\(n)"), id: "i\(n)") }
            let first = Reader(tablet.changes())
            #expect(try await first.wait { first.elements.count == 5 })
            first.stop()
            try await Task.sleep(for: .milliseconds(200))

            for n in 5..<8 { try await list.put(Item(name: "n\(n)"), id: "i\(n)") }
            // The app starts again on the same storage.
            let relaunched = server.client(storage: store)
            let second = Reader(relaunched.changes())
            defer { second.stop() }
            #expect(try await second.wait { second.elements.count == 3 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(second.elements.map(\.id) == ["i5", "i6", "i7"])
        }
    }

    @Test func anExpiredTokenIsRefreshedAndTheFeedGoesOn() async throws {
        try await TestServer.with(.sqlite, configure: Self.quick) { server in
            let phone = server.client(), tablet = server.client()
            try await Self.signIn(server, phone, sub: "expiring")
            try await Self.signIn(server, tablet, sub: "expiring")
            let changes = tablet.changes()
            let reader = Reader(changes)
            defer { reader.stop() }
            #expect(try await reader.wait { changes.isLive })
            let refreshesBefore = try await server.refreshRequests()
            server.clock.advance(by: 901)
            // The stream ends with token_expired at its next look; the SDK refreshes and reconnects.
            try await phone.collection("items", of: Item.self).put(Item(name: "after expiry"), id: "late")
            #expect(try await reader.wait(15) { reader.elements.map(\.id) == ["late"] })
            // Both devices refreshed: the phone for its write, the tablet because its stream said token_expired.
            #expect(try await server.refreshRequests() == refreshesBefore + 2)
            let metrics = try await server.get("/metrics").text
            #expect(MetricsText.value(in: metrics, #"lanyard_stream_closes_total{reason="token_expired"}"#) == 1)
            #expect(reader.error == nil)
        }
    }

    @Test func aServerRestartInTheMiddleLosesAndRepeatsNothing() async throws {
        let (databaseURL, cleanup) = try await TestDatabase.sqlite.makeFresh()
        defer { Task { await cleanup() } }
        let clock = ManualClock(Date())
        var running = try await RunningServer.startOnFreePort(databaseURL: databaseURL, clock: clock, configure: Self.quick)
        let port = try #require(URLComponents(string: running.baseURL)?.port)
        let server = TestServer(running, clock: clock)
        let phone = server.client(), tablet = server.client()
        try await Self.signIn(server, phone, sub: "restart")
        try await Self.signIn(server, tablet, sub: "restart")
        let list = phone.collection("items", of: Item.self)
        let changes = tablet.changes()
        let reader = Reader(changes)
        defer { reader.stop() }
        for n in 0..<20 { try await list.put(Item(name: "n\(n)"), id: "i\(n)") }
        #expect(try await reader.wait { reader.elements.count == 20 })

        await running.stop()
        var restarted: RunningServer?
        for _ in 0..<20 where restarted == nil {
            restarted = try await RunningServer.start(databaseURL: databaseURL, port: port, clock: clock, configure: Self.quick)
            if restarted == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        running = try #require(restarted)
        for n in 20..<40 { try await list.put(Item(name: "n\(n)"), id: "i\(n)") }
        #expect(try await reader.wait(30) { reader.elements.count >= 40 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(reader.elements.map(\.id) == (0..<40).map { "i\($0)" })
        #expect(reader.error == nil)
        reader.stop()
        await running.stop()
    }

    @Test func aSessionSignedOutElsewhereEndsTheFeedAndSignsTheClientOut() async throws {
        try await TestServer.with(.sqlite, configure: Self.quick) { server in
            let phone = server.client(), tablet = server.client()
            try await Self.signIn(server, phone, sub: "signed-out-elsewhere")
            try await Self.signIn(server, tablet, sub: "signed-out-elsewhere")
            let changes = tablet.changes()
            let reader = Reader(changes)
            defer { reader.stop() }
            #expect(try await reader.wait { changes.isLive })
            try await phone.signOut(scope: .others)
            #expect(try await reader.wait { reader.finished })
            #expect(reader.error as? LanyardError == .invalidRefreshToken)
            #expect(tablet.user == nil)
        }
    }
}

struct Item: Codable, Sendable, Equatable {
    var name: String
}
