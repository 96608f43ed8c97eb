import Foundation
import Lanyard
import LanyardEmulator
import LanyardSupport
import Testing

/// The SDK against a real server: clients on the server's URL, reading expiry against a clock the test moves.
extension TestServer {
    var url: URL { URL(string: baseURL)! }

    /// A client on `storage` whose clock is `clock` (the server's unless given): moving the server's clock
    /// expires the client's access token as well.
    func client(storage: any SessionStore = MemorySessionStore(), clock: ManualClock? = nil) -> LanyardClient {
        var options = LanyardClient.Options()
        let clock = clock ?? self.clock
        options.now = { clock.now() }
        options.timeout = 5
        return LanyardClient(url: url, storage: storage, options: options)
    }

    /// How many `POST /v1/auth/refresh` requests this server has answered, from its `/metrics`.
    func refreshRequests() async throws -> Int {
        try await get("/metrics").text.split(separator: "\n")
            .filter { $0.hasPrefix(#"lanyard_http_requests_total{method="POST",route="/v1/auth/refresh","#) }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            .reduce(0, +)
    }
}

/// The events a client sends from now on, collected for assertions.
actor EventLog {
    private(set) var events: [AuthEvent] = []
    private var task: Task<Void, Never>?

    init(_ client: LanyardClient) async {
        let stream = client.authEvents
        task = Task { for await event in stream { self.append(event) } }
        // The first event is the state at subscription: recorded before the test acts.
        while events.isEmpty { await Task.yield() }
    }

    private func append(_ event: AuthEvent) { events.append(event) }

    /// Waits until an event matching `predicate` arrived (a bound only a hang reaches).
    func waitFor(_ predicate: @Sendable (AuthEvent) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if events.contains(where: predicate) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return events.contains(where: predicate)
    }

    deinit { task?.cancel() }
}

/// A stored session's refresh token, read from the client's storage as an app's attacker would.
func storedRefreshToken(_ store: any SessionStore) throws -> String {
    let data = try #require(try store.data(forKey: "session"))
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    return try #require(object["refresh_token"] as? String)
}
