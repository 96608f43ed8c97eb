import Foundation
import Lanyard
import LanyardSupport
import Testing

/// Redirect sign-in through the SDK (reference section 23) against a real server on SQLite: the SDK's authorization
/// URL is followed as a browser would (the emulator's provider page, a test user picked, Lanyard's callback), and the
/// address the browser comes back to is handed to `completeSignIn(from:)`.
@Suite struct SDKRedirectSignInTests {
    static let callback = URL(string: "com.example.app:/callback")!

    static func withServer(_ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with(.sqlite, configure: { $0.redirect.uris = [callback.absoluteString] }, body)
    }

    @Test func signingInWithGoogleByRedirectLandsSignedInAndStored() async throws {
        try await Self.withServer { server in
            let store = MemorySessionStore()
            let client = server.client(storage: store)
            let events = await EventLog(client)
            let start = try await client.authorizationURL(for: .google, redirectURI: Self.callback)
            // The navigation to Lanyard, with the S256 challenge and a state; the verifier never leaves the device.
            let asked = try Self.query(start)
            #expect(start.absoluteString.hasPrefix(server.baseURL + "/v1/auth/authorize/google?"))
            #expect(asked["redirect_uri"] == "com.example.app:/callback" && asked["code_challenge_method"] == "S256")
            #expect(asked["code_challenge"]?.count == 43 && (asked["state"]?.count ?? 0) >= 16)
            #expect(try store.data(forKey: "redirect-flows") != nil)

            let back = try await Self.browse(server, from: start, sub: "grace-google", email: "grace@example.com")
            #expect(try Self.query(back)["state"] == asked["state"])
            let result = try await client.completeSignIn(from: back)
            #expect(result.isNewUser && result.mergedFrom == nil)
            #expect(result.user.identities.map(\.provider) == [.google] && !result.user.isAnonymous)
            #expect(client.user == result.user)
            #expect(await events.waitFor { $0 == .signedIn(result.user) })
            // The session is stored (a new client on the store is signed in without a request), the flow is gone.
            #expect(server.client(storage: store).user == result.user)
            #expect(try store.data(forKey: "redirect-flows") == nil)
            #expect(try await client.refreshUser().id == result.user.id)
        }
    }

    @Test func aGuestSigningInByRedirectIsUpgradedAndKeepsItsData() async throws {
        try await Self.withServer { server in
            let client = server.client()
            let guest = try await client.signInAnonymously()
            try await client.collection("habits", of: Habit.self).put(Habit(name: "Read", streak: 12), id: "h1")

            let back = try await Self.browse(server, from: try await client.authorizationURL(for: .google, redirectURI: Self.callback),
                                             sub: "upgraded-google")
            let result = try await client.completeSignIn(from: back)
            #expect(result.user.id == guest.user.id && !result.user.isAnonymous && result.mergedFrom == nil)
            #expect(client.linkedProviders.map(\.provider) == [.google])
            #expect(try await client.collection("habits", of: Habit.self).get("h1")?.value == Habit(name: "Read", streak: 12))
            // Signing in with that Google account elsewhere reaches the same account.
            #expect(try await server.signIn(.google, sub: "upgraded-google").userID == guest.user.id.rawValue)
        }
    }

    @Test func aStateOfNoFlowStartedHereIsRefusedBeforeAnythingIsSent() async throws {
        try await Self.withServer { server in
            let client = server.client()
            let back = try await Self.browse(server, from: try await client.authorizationURL(for: .google, redirectURI: Self.callback),
                                             sub: "careful")
            var forged = try #require(URLComponents(url: back, resolvingAgainstBaseURL: false))
            forged.queryItems = forged.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged") : $0 }
            let forgedURL = try #require(forged.url)
            let before = try await server.requestsServed()
            #expect(before > 0)   // the count is read: the flow's start, callback and provider pages are in it
            await #expect(throws: LanyardError.invalidGrant(reason: "state")) {
                try await client.completeSignIn(from: forgedURL)
            }
            // Another device (another store) started no flow: the real answer is refused there too.
            await #expect(throws: LanyardError.invalidGrant(reason: "state")) {
                try await server.client().completeSignIn(from: back)
            }
            #expect(try await server.requestsServed() == before)
            #expect(try await server.requestsServed(route: "/v1/auth/token") == 0)
            #expect(client.user == nil)

            // The forgery did not cost this device its own flow.
            #expect(try await client.completeSignIn(from: back).user.identities.map(\.provider) == [.google])
        }
    }

    @Test func cancellingAtTheProviderThrowsSignInCancelledAndSendsNothing() async throws {
        try await Self.withServer { server in
            let store = MemorySessionStore()
            let client = server.client(storage: store)
            let back = try await Self.browse(server, from: try await client.authorizationURL(for: .google, redirectURI: Self.callback),
                                             sub: "shy", extra: [("cancel", "1")])
            #expect(try Self.query(back)["error"] == "access_denied")
            await #expect(throws: LanyardError.signInCancelled) { try await client.completeSignIn(from: back) }
            #expect(client.user == nil)
            #expect(try store.data(forKey: "redirect-flows") == nil)
            #expect(try await server.requestsServed(route: "/v1/auth/token") == 0)
        }
    }

    @Test func theSameAnswerHandedOverTwiceIsExchangedOnce() async throws {
        try await Self.withServer { server in
            let client = server.client()
            let events = await EventLog(client)
            let back = try await Self.browse(server, from: try await client.authorizationURL(for: .google, redirectURI: Self.callback),
                                             sub: "twice")
            // A scene that opens the URL and a restored state that does too, at once; then once more, late.
            async let first = client.completeSignIn(from: back)
            async let second = client.completeSignIn(from: back)
            let (one, other) = try await (first, second)
            let late = try await client.completeSignIn(from: back)
            #expect(one == other && one == late && one.isNewUser)
            #expect(try await server.requestsServed(route: "/v1/auth/token") == 1)
            let isSignIn: @Sendable (AuthEvent) -> Bool = { if case .signedIn = $0 { true } else { false } }
            #expect(await events.waitFor(isSignIn))
            #expect(await events.events.filter(isSignIn).count == 1)
        }
    }

    @Test func aLinkFlowAddsTheProviderToTheSignedInAccount() async throws {
        try await Self.withServer { server in
            // Linking needs a session: the flow is started with its bearer.
            await #expect(throws: LanyardError.notSignedIn) {
                try await server.client().authorizationURL(for: .google, redirectURI: Self.callback, intent: .link)
            }
            let client = server.client()
            let signedIn = try await client.signInWithApple(idToken: try server.idToken(.apple, sub: "linker"))
            let events = await EventLog(client)
            await #expect(throws: LanyardError.invalidRedirectURI) {
                try await client.authorizationURL(for: .google, redirectURI: URL(string: "com.evil.app:/callback")!,
                                                  intent: .link)
            }
            let start = try await client.authorizationURL(for: .google, redirectURI: Self.callback, intent: .link)
            // The server's POST answered the provider's own page.
            #expect(!start.absoluteString.hasPrefix(server.baseURL + "/v1/auth/authorize"))

            let back = try await Self.browse(server, from: start, sub: "linker-google")
            let result = try await client.completeSignIn(from: back)
            #expect(result.user.id == signedIn.user.id && !result.isNewUser && result.mergedFrom == nil)
            #expect(client.linkedProviders.map(\.provider) == [.apple, .google])
            #expect(await events.waitFor { $0 == .linked(.google) })
            #expect(try await server.signIn(.google, sub: "linker-google").userID == signedIn.user.id.rawValue)
        }
    }

    @Test func aRelaunchBetweenLeavingAndComingBackStillCompletes() async throws {
        try await Self.withServer { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-sdk-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("session.json")
            let start = try await server.client(storage: FileSessionStore(fileURL: file))
                .authorizationURL(for: .google, redirectURI: Self.callback)

            // The system ended the app while the browser was in front; a new process comes back with the answer.
            let back = try await Self.browse(server, from: start, sub: "relaunched")
            let relaunched = server.client(storage: FileSessionStore(fileURL: file))
            let result = try await relaunched.completeSignIn(from: back)
            #expect(result.isNewUser && result.user.identities.map(\.provider) == [.google])
            #expect(server.client(storage: FileSessionStore(fileURL: file)).user == result.user)
        }
    }

    // MARK: Playing the browser

    /// Follows `start` as the browser would (to the emulator's page, unless it is already the provider's), picks
    /// `sub`, returns through Lanyard's callback: the address the browser comes back to at the app.
    static func browse(_ server: TestServer, from start: URL, sub: String, email: String? = nil,
                       extra: [(String, String)] = []) async throws -> URL {
        let browser = RedirectBrowser(server)
        var page = try #require(URLComponents(url: start, resolvingAgainstBaseURL: false))
        if start.absoluteString.hasPrefix(server.baseURL + "/v1/auth/authorize/") {
            let navigation = try await browser.get(start.absoluteString)
            page = try #require(navigation.location.flatMap(URLComponents.init(string:)),
                                "authorize did not send the browser on: \(navigation.status) \(navigation.text)")
        }
        let back = try await browser.returnToLanyard(try await browser.pick(on: page, sub: sub, email: email, extra: extra))
        _ = try RedirectBrowser.arrival(back, at: callback.absoluteString)
        return try #require(back.location.flatMap(URL.init(string:)))
    }

    static func query(_ url: URL) throws -> [String: String] {
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }
}

extension TestServer {
    /// How many requests this server has answered (`route`'s only, when given), `/metrics` itself aside.
    func requestsServed(route: String? = nil) async throws -> Int {
        try await get("/metrics").text.split(separator: "\n")
            .filter { $0.hasPrefix("lanyard_http_requests_total{") && !$0.contains(#"route="/metrics""#) }
            .filter { line in route.map { line.contains(#"route="\#($0)""#) } ?? true }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            .reduce(0, +)
    }
}
