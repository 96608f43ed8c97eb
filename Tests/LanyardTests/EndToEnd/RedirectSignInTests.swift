import Foundation
import LanyardSupport
import Testing

/// Redirect sign-in (reference section 23) as a browser runs it: the app's navigation, the emulator's provider page,
/// the provider's way back (Apple's `form_post`), Lanyard's code at the app, its exchange; on both databases, each
/// refusal through HTTP with what the person or the app sees.
@Suite struct RedirectSignInTests {
    static let app = "https://app.example/auth/done"
    static let adminKey = "admin-key-for-redirect-tests"
    static let tenant = "9188040d-6c67-4c5b-b112-36a304b66dad"

    static func withServer(_ database: TestDatabase, _ body: (TestServer) async throws -> Void) async throws {
        let microsoft = try LanyardConfiguration.load(environment: [
            "LANYARD_OIDC_PROVIDERS": "microsoft",
            "LANYARD_OIDC_MICROSOFT_CLIENT_IDS": "11111111-2222-3333-4444-555555555555",
            "LANYARD_OIDC_MICROSOFT_TENANTS": tenant,
            "LANYARD_DEV": "1",
        ]).oidcProviders
        try await TestServer.with(database, configure: {
            $0.redirect.uris = [app, "com.example.app:/callback"]
            $0.oidcProviders = microsoft
            $0.adminKey = adminKey
        }, body)
    }

    static func url(_ text: String?) throws -> URLComponents {
        guard let text, let url = URLComponents(string: text) else { throw TestSetupError("no URL: \(text ?? "nil")") }
        return url
    }

    @Test(arguments: TestDatabase.available)
    func appleAnswersByFormPostAndItsOneTimeNameIsKept(database: TestDatabase) async throws {
        try await Self.withServer(database) { server in
            let browser = RedirectBrowser(server)
            let page = try await browser.providerPage("apple", redirectURI: Self.app)
            // Apple's page is asked for a form_post with the name and email scopes, back to Lanyard's callback.
            let asked = Dictionary(page.queryItems!.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
            #expect(page.path == "/_emulator/apple/auth/authorize")
            #expect(asked["response_mode"] == "form_post" && asked["scope"] == "name email")
            #expect(asked["redirect_uri"] == server.baseURL + "/v1/auth/callback/apple")
            #expect(asked["state"]?.isEmpty == false && asked["state"] != "app-state" && asked["nonce"]?.isEmpty == false)

            let answer = try await browser.pick(on: page, sub: "ada-apple", email: "ada@privaterelay.appleid.com",
                                                extra: [("given_name", "Ada"), ("family_name", "Lovelace")])
            #expect(answer.status == 200 && answer.text.contains("form_post"))
            let arrived = try RedirectBrowser.arrival(try await browser.returnToLanyard(answer), at: Self.app)
            #expect(arrived["state"] == "app-state" && arrived["error"] == nil)
            let session = try Session(try await browser.exchange(try #require(arrived["code"]), redirectURI: Self.app))
            #expect(session.isNewUser && session.linkedProviders == ["apple"])
            let me = try await server.get("/v1/users/me", bearer: session.accessToken)
            #expect(me.json["display_name"] as? String == "Ada Lovelace")

            // Apple sends the name only the first time: the next sign-in keeps it.
            let again = RedirectBrowser(server)
            let second = try await again.signIn("apple", redirectURI: Self.app, sub: "ada-apple")
            let returning = try Session(try await again.exchange(try #require(second["code"]), redirectURI: Self.app))
            #expect(returning.userID == session.userID && !returning.isNewUser)
            let still = try await server.get("/v1/users/me", bearer: returning.accessToken)
            #expect(still.json["display_name"] as? String == "Ada Lovelace")

            // Native sign-in with the app's own client id finds the same person.
            let native = try await server.signIn(.apple, sub: "ada-apple")
            #expect(native.userID == session.userID)
        }
    }

    @Test(arguments: TestDatabase.available)
    func googleUpgradesAGuestAndMergesAnotherIntoTheAccountItFinds(database: TestDatabase) async throws {
        try await Self.withServer(database) { server in
            let guest = try await server.anonymous()
            let put = try await server.request(.PUT, "/v1/data/notes/first", json: ["data": ["text": "kept"]],
                                               bearer: guest.accessToken)
            #expect(put.status == 200, "\(put.text)")
            let browser = RedirectBrowser(server)
            let arrived = try await browser.signIn("google", redirectURI: "com.example.app:/callback", sub: "grace-google",
                                                   email: "grace@example.com", extra: [("name", "Grace Hopper")])
            let upgraded = try Session(try await browser.exchange(try #require(arrived["code"]),
                                                                  redirectURI: "com.example.app:/callback",
                                                                  bearer: guest.accessToken))
            #expect(upgraded.userID == guest.userID && !upgraded.isAnonymous && upgraded.linkedProviders == ["google"])

            // Another guest on another device signs in to that account: its data comes along.
            let other = try await server.anonymous()
            _ = try await server.request(.PUT, "/v1/data/notes/second", json: ["data": ["text": "also kept"]],
                                         bearer: other.accessToken)
            let next = RedirectBrowser(server)
            let back = try await next.signIn("google", redirectURI: Self.app, sub: "grace-google")
            let merged = try Session(try await next.exchange(try #require(back["code"]), redirectURI: Self.app,
                                                             bearer: other.accessToken))
            #expect(merged.userID == guest.userID && merged.mergedFrom == other.userID)
            let notes = try await server.get("/v1/data/notes", bearer: merged.accessToken)
            #expect(notes.text.contains("also kept") && notes.text.contains("\"kept\""), "\(notes.text)")

            // The account's audit (the console's account page) says how each came: by redirect, through Google.
            let audit = try await server.request(.GET, "/v1/admin/audit?user_id=\(guest.userID)", bearer: Self.adminKey)
            let events = audit.json["events"] as? [[String: Any]] ?? []
            let byRedirect = events.filter { ($0["details"] as? [String: Any])?["via"] as? String == "redirect" }
            #expect(Set(byRedirect.compactMap { $0["type"] as? String }) == ["sign_in", "identity.linked"], "\(audit.text)")
            #expect(byRedirect.allSatisfy { ($0["details"] as? [String: Any])?["provider"] as? String == "google" })
        }
    }

    @Test(arguments: TestDatabase.available)
    func aSessionLinksByRedirectAndOnlyThatSessionFinishesTheLink(database: TestDatabase) async throws {
        try await Self.withServer(database) { server in
            let apple = try await server.signIn(.apple, sub: "linker")
            let browser = RedirectBrowser(server)
            func start(bearer: String?) async throws -> TestResponse {
                try await server.post("/v1/auth/authorize/google", [
                    "redirect_uri": Self.app, "code_challenge": browser.challenge, "code_challenge_method": "S256",
                    "intent": "link"], bearer: bearer)
            }
            // No session, no link.
            #expect(try await start(bearer: nil).errorCode == "UNAUTHORIZED")
            let started = try await start(bearer: apple.accessToken)
            #expect(started.status == 200, "\(started.text)")
            let page = try Self.url(started.json["url"] as? String)
            let arrived = try RedirectBrowser.arrival(
                try await browser.returnToLanyard(try await browser.pick(on: page, sub: "linker-google")), at: Self.app)
            let code = try #require(arrived["code"])

            // Another session of the same account cannot finish it; the code is spent by the attempt.
            let otherDevice = try await server.signIn(.apple, sub: "linker")
            let stolen = try await browser.exchange(code, redirectURI: Self.app, bearer: otherDevice.accessToken)
            #expect(stolen.status == 400 && stolen.errorReason == "session", "\(stolen.text)")
            #expect(try await browser.exchange(code, redirectURI: Self.app, bearer: apple.accessToken).errorReason == "used")

            // Started again and finished by the session that started it: linked.
            let again = RedirectBrowser(server)
            let restarted = try await server.post("/v1/auth/authorize/google", [
                "redirect_uri": Self.app, "code_challenge": again.challenge, "intent": "link"], bearer: apple.accessToken)
            let secondPage = try Self.url(restarted.json["url"] as? String)
            let back = try RedirectBrowser.arrival(
                try await again.returnToLanyard(try await again.pick(on: secondPage, sub: "linker-google")), at: Self.app)
            let linked = try await again.exchange(try #require(back["code"]), redirectURI: Self.app, bearer: apple.accessToken)
            #expect(linked.status == 200, "\(linked.text)")
            #expect(linked.json["linked_providers"] as? [String] == ["apple", "google"])
            #expect(try await server.signIn(.google, sub: "linker-google").userID == apple.userID)
        }
    }

    /// What the browser sees when the flow cannot go on: a page, never a redirect to somewhere else.
    @Test(arguments: TestDatabase.available)
    func refusedStartsShowAPageAndSendTheBrowserNowhere(database: TestDatabase) async throws {
        try await Self.withServer(database) { server in
            let browser = RedirectBrowser(server)
            let unlisted = try await browser.authorize("google", redirectURI: "https://evil.example/steal")
            #expect(unlisted.status == 400 && unlisted.location == nil)
            #expect(unlisted.headers.first(name: "content-type")?.hasPrefix("text/html") == true)
            #expect(unlisted.text.contains("https://evil.example/steal") && unlisted.text.contains("INVALID_REDIRECT_URI"))
            // Listed exactly: another path on the same host is another URI.
            #expect(try await browser.authorize("google", redirectURI: Self.app + "/other").status == 400)
            let plain = try await browser.authorize("google", redirectURI: Self.app, method: "plain",
                                                    challenge: browser.verifier)
            #expect(plain.status == 400 && plain.text.contains("S256"))
            #expect(try await browser.authorize("okta", redirectURI: Self.app).text.contains("UNSUPPORTED_PROVIDER"))
            // The app's own API answers in the one error shape.
            let api = try await server.post("/v1/auth/authorize/google", [
                "redirect_uri": "https://evil.example/steal", "code_challenge": browser.challenge])
            #expect(api.status == 400 && api.errorCode == "INVALID_REDIRECT_URI")
            // A callback for no flow, or one past its ten minutes: a page, nothing signs in.
            #expect(try await browser.get(server.baseURL + "/v1/auth/callback/google?state=forged&code=x").status == 404)
            let page = try await browser.providerPage("google", redirectURI: Self.app)
            let answer = try await browser.pick(on: page, sub: "late")
            server.clock.advance(by: 601)
            let late = try await browser.returnToLanyard(answer)
            #expect(late.status == 404 && late.location == nil && late.text.contains("start it again"))
        }
    }

    /// Every way a code must not work: `INVALID_GRANT` with the reason, the code spent by any presentation.
    @Test(arguments: TestDatabase.available)
    func codesAreSingleUseShortLivedAndBoundToTheVerifierAndTheRedirectURI(database: TestDatabase) async throws {
        try await Self.withServer(database) { server in
            func code(_ browser: RedirectBrowser, sub: String) async throws -> String {
                try #require(try await browser.signIn("google", redirectURI: Self.app, sub: sub)["code"])
            }
            let browser = RedirectBrowser(server)
            let first = try await code(browser, sub: "codes")
            #expect(try await browser.exchange(first, redirectURI: Self.app).status == 200)
            let replayed = try await browser.exchange(first, redirectURI: Self.app)
            #expect(replayed.status == 400 && replayed.errorCode == "INVALID_GRANT" && replayed.errorReason == "used")

            let wrongVerifier = RedirectBrowser(server)
            let second = try await code(wrongVerifier, sub: "codes")
            #expect(try await wrongVerifier.exchange(second, redirectURI: Self.app, verifier: RedirectBrowser(server).verifier)
                .errorReason == "verifier")
            #expect(try await wrongVerifier.exchange(second, redirectURI: Self.app).errorReason == "used")

            let otherURI = RedirectBrowser(server)
            let third = try await code(otherURI, sub: "codes")
            #expect(try await otherURI.exchange(third, redirectURI: nil).errorCode == "INVALID_REQUEST")
            #expect(try await otherURI.exchange(third, redirectURI: "com.example.app:/callback").errorReason == "redirect_uri")

            let slow = RedirectBrowser(server)
            let fourth = try await code(slow, sub: "codes")
            server.clock.advance(by: 61)
            #expect(try await slow.exchange(fourth, redirectURI: Self.app).errorReason == "expired")
            #expect(try await slow.exchange("never-issued", redirectURI: Self.app).errorReason == "expired")

            // Two exchanges of one code at once: one session, whoever wins.
            let raced = RedirectBrowser(server)
            let fifth = try await code(raced, sub: "codes")
            let answers = try await server.concurrently(6) { try await raced.exchange(fifth, redirectURI: Self.app) }
            #expect(answers.filter { $0.status == 200 }.count == 1)
            #expect(answers.filter { $0.errorReason == "used" }.count == 5)
        }
    }

    /// A token that is not the flow's, a tenant not allowed, a person who cancels, a token endpoint that is down:
    /// back to the app with an OAuth error and its state (a description but for a cancel), nothing signed in.
    @Test(arguments: TestDatabase.available)
    func whatTheProviderSendsBackMustBeThisFlowsOwn(database: TestDatabase) async throws {
        try await Self.withServer(database) { server in
            let refusals: [(String, [(String, String)])] = [
                ("google", [("aud", "someone-elses-client")]),
                ("google", [("nonce_override", "another-flows-nonce")]),
                ("microsoft", [("tid", "00000000-0000-0000-0000-00000000dead")]),
            ]
            for (provider, extra) in refusals {
                let arrived = try await RedirectBrowser(server).signIn(provider, redirectURI: Self.app, sub: "eve", extra: extra)
                #expect(arrived["error"] == "access_denied" && arrived["code"] == nil, "\(extra)")
                #expect(arrived["error_description"]?.isEmpty == false && arrived["state"] == "app-state")
            }
            // Microsoft in the allowed tenant signs in.
            let allowed = RedirectBrowser(server)
            let back = try await allowed.signIn("microsoft", redirectURI: Self.app, sub: "kim", extra: [("tid", Self.tenant)])
            #expect(try await allowed.exchange(try #require(back["code"]), redirectURI: Self.app).status == 200)

            // The person cancels at the provider (Apple says so in its own words): no description, the cancel's mark.
            for provider in ["google", "apple"] {
                let arrived = try await RedirectBrowser(server).signIn(provider, redirectURI: Self.app, sub: "",
                                                                       extra: [("cancel", "1")], state: nil)
                let expected = provider == "apple" ? "user_cancelled_authorize" : "access_denied"
                #expect(arrived["error"] == expected && arrived["error_description"] == nil && arrived["state"] == nil)
            }

            // Google's token endpoint is down: the app hears it and names it; a new flow works once it is back.
            server.runtime.authorizationEmulator?.failNextRedemptions(1)
            let down = try await RedirectBrowser(server).signIn("google", redirectURI: Self.app, sub: "eve")
            #expect(down["error"] == "temporarily_unavailable" && down["code"] == nil)
            #expect(down["error_description"]?.contains("Google") == true && down["state"] == "app-state")
            let recovered = RedirectBrowser(server)
            let code = try #require(try await recovered.signIn("google", redirectURI: Self.app, sub: "eve")["code"])
            #expect(try await recovered.exchange(code, redirectURI: Self.app).status == 200)

            // Only the two sign-ins that succeeded made accounts.
            let users = try await server.request(.GET, "/v1/admin/users", bearer: Self.adminKey)
            #expect((users.json["users"] as? [[String: Any]])?.count == 2)
        }
    }

    /// GoTrue's shapes of the same flow (Supabase's own client drives it in Tests/GoTrue): a flow comes back only to
    /// the callback it named, and the implicit flow is refused on a page.
    @Test func goTruesAuthorizeAndCallbackKeepToTheirOwnFlows() async throws {
        try await Self.withServer(.sqlite) { server in
            let browser = RedirectBrowser(server)
            let implicit = try await browser.get(server.baseURL + "/auth/v1/authorize?provider=google&redirect_to=\(Self.app)")
            #expect(implicit.status == 400 && implicit.text.contains("flowType"))
            let started = try await browser.get(server.baseURL + "/auth/v1/authorize?" + TestHTTP.formEncoded([
                ("provider", "google"), ("redirect_to", Self.app), ("code_challenge", browser.challenge),
                ("code_challenge_method", "s256")]))
            let page = try Self.url(started.location)
            #expect(page.queryItems?.first { $0.name == "redirect_uri" }?.value == server.baseURL + "/auth/v1/callback")
            // A GoTrue flow's state at Lanyard's callback (and the reverse) finds no flow.
            let state = try #require(page.queryItems?.first { $0.name == "state" }?.value)
            #expect(try await browser.get(server.baseURL + "/v1/auth/callback/google?code=x&state=\(state)").status == 404)
            let lanyardPage = try await RedirectBrowser(server).providerPage("google", redirectURI: Self.app)
            let lanyardState = try #require(lanyardPage.queryItems?.first { $0.name == "state" }?.value)
            #expect(try await browser.get(server.baseURL + "/auth/v1/callback?code=x&state=\(lanyardState)").status == 404)

            // A GoTrue code is exchanged only at GoTrue's token endpoint, and the reverse.
            let arrived = try RedirectBrowser.arrival(
                try await browser.returnToLanyard(try await browser.pick(on: page, sub: "supa")), at: Self.app)
            let code = try #require(arrived["code"])
            #expect(try await browser.exchange(code, redirectURI: Self.app).errorCode == "INVALID_GRANT")
        }
    }
}
