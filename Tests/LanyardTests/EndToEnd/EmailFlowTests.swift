import Foundation
import LanyardCore
import LanyardSupport
import NIOHTTP1
import Testing

/// The email identity (reference section 18) through HTTP on both databases, with mail kept in the emulator's
/// mailbox (`lanyard dev` without an SMTP server): codes, links, limits, linking, guests, recovery.
@Suite struct EmailFlowTests {
    static let adminKey = "admin-key-for-email-tests"

    static func configure(_ configuration: inout LanyardConfiguration) {
        configuration.adminKey = adminKey
        configuration.email.redirectURLs = ["myapp://signed-in", "https://app.example.com/done"]
    }

    /// A started flow, as the device keeps it.
    struct Flow {
        let id: String
        let secret: String
        let match: Int

        init(_ response: TestResponse) throws {
            guard response.status == 202 else { throw TestSetupError("start answered \(response.status): \(response.text)") }
            id = try #require(response.json["flow_id"] as? String)
            secret = try #require(response.json["flow_secret"] as? String)
            match = try #require(response.json["match"] as? Int)
        }
    }

    static func start(_ server: TestServer, _ email: String, intent: String? = nil, bearer: String? = nil,
                      redirectTo: String? = nil) async throws -> TestResponse {
        var body: [String: Any] = ["email": email]
        if let intent { body["intent"] = intent }
        if let redirectTo { body["redirect_to"] = redirectTo }
        return try await server.post("/v1/auth/email/start", body, bearer: bearer)
    }

    /// The newest mail to `address` once the mailer has kept it.
    static func mail(_ server: TestServer, to address: String, count: Int = 1) async throws -> [String: Any] {
        var mails: [[String: Any]] = []
        _ = try await eventually {
            let answer = try await server.get("/_emulator/mail?to=\(address.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? address)")
            mails = (try? JSONSerialization.jsonObject(with: answer.body)) as? [[String: Any]] ?? []
            return mails.count >= count
        }
        return try #require(mails.first, "no mail to \(address)")
    }

    /// Mails queued in the outbox, whatever their state: the mailbox shows only those already handed over, and
    /// "nothing was queued" must also count a mail the mailer has not reached yet.
    static func mailCount(_ server: TestServer) async throws -> Int {
        try await server.runtime.database.read { try await $0.query("SELECT count(*) AS n FROM email_deliveries", []) }
            .first.map { Int(try $0.integer("n")) } ?? -1
    }

    static func verify(_ server: TestServer, _ flow: Flow, code: String, bearer: String? = nil) async throws -> TestResponse {
        try await server.post("/v1/auth/email/verify", ["flow_id": flow.id, "flow_secret": flow.secret, "code": code],
                              bearer: bearer)
    }

    /// The link token out of a mail's link.
    static func token(_ mail: [String: Any]) throws -> String {
        let link = try #require(mail["link"] as? String)
        return String(try #require(link.split(separator: "/").last))
    }

    @Test(arguments: TestDatabase.available)
    func aCodeSignsUpThenSignsInTheSameAccount(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let started = try await Self.start(server, "Ada@Example.COM")
            let flow = try Flow(started)
            #expect((10...99).contains(flow.match))
            #expect(started.json["expires_in"] as? Int == 900 && started.json["resend_after"] as? Int == 60)
            let mail = try await Self.mail(server, to: "ada@example.com")
            let code = try #require(mail["code"] as? String)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            #expect((mail["text"] as? String)?.contains(code) == true && (mail["html"] as? String)?.contains(code) == true)
            #expect((mail["text"] as? String)?.contains(try #require(mail["link"] as? String)) == true)

            let first = try Session(try await Self.verify(server, flow, code: code))
            #expect(first.isNewUser && first.linkedProviders == ["email"])
            let me = try await server.get("/v1/users/me", bearer: first.accessToken)
            #expect(me.json["email"] as? String == "ada@example.com")
            #expect((me.json["recovery"] as? [String: Any])?["methods"] as? Int == 1)
            // A code works once.
            let again = try await Self.verify(server, flow, code: code)
            #expect(again.status == 401 && again.errorCode == "INVALID_CODE" && again.errorReason == "used")

            server.clock.advance(by: 61)
            let second = try Flow(try await Self.start(server, "ada@example.com"))
            let secondCode = try #require(try await Self.mail(server, to: "ada@example.com", count: 2)["code"] as? String)
            let signedIn = try Session(try await Self.verify(server, second, code: secondCode))
            #expect(signedIn.userID == first.userID && !signedIn.isNewUser)
        }
    }

    @Test(arguments: TestDatabase.available)
    func startAnswersAlikeWhetherOrNotTheAddressHasAnAccount(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let known = try Flow(try await Self.start(server, "known@example.com"))
            _ = try await Self.verify(server, known, code: try #require(try await Self.mail(server, to: "known@example.com")["code"] as? String))
            server.clock.advance(by: 61)
            let forKnown = try await Self.start(server, "known@example.com")
            let forUnknown = try await Self.start(server, "unknown@example.com")
            #expect(forKnown.status == forUnknown.status)
            #expect(Set(forKnown.json.keys) == Set(forUnknown.json.keys))
            #expect(forKnown.json["expires_in"] as? Int == forUnknown.json["expires_in"] as? Int)
        }
    }

    @Test(arguments: TestDatabase.available)
    func fiveWrongCodesKillTheFlow(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "guess@example.com"))
            let code = try #require(try await Self.mail(server, to: "guess@example.com")["code"] as? String)
            let wrong = code == "000000" ? "111111" : "000000"
            for left in [4, 3, 2, 1] {
                let answer = try await Self.verify(server, flow, code: wrong)
                #expect(answer.status == 401 && answer.errorReason == "wrong_code")
                #expect(answer.errorDetails["attempts_left"] as? Int == left)
            }
            let fifth = try await Self.verify(server, flow, code: wrong)
            #expect(fifth.errorReason == "flow_dead" && fifth.errorDetails["attempts_left"] as? Int == 0)
            // The right code is no use now.
            let right = try await Self.verify(server, flow, code: code)
            #expect(right.status == 401 && right.errorReason == "flow_dead")
            // Nor is a malformed one counted as anything but wrong.
            let typed = try await Self.verify(server, flow, code: "12 34")
            #expect(typed.errorCode == "INVALID_CODE")
        }
    }

    @Test(arguments: TestDatabase.available)
    func anExpiredFlowAndAnotherFlowsSecretAreRefused(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "late@example.com"))
            let other = try Flow(try await Self.start(server, "other@example.com"))
            let code = try #require(try await Self.mail(server, to: "late@example.com")["code"] as? String)
            // Another flow's secret, or an id that is no flow: the same 404, nothing learned.
            let crossed = try await server.post("/v1/auth/email/verify", ["flow_id": flow.id, "flow_secret": other.secret, "code": code])
            #expect(crossed.status == 404 && crossed.errorCode == "NOT_FOUND")
            let unknown = try await server.post("/v1/auth/email/verify", ["flow_id": "ef_nope", "flow_secret": other.secret, "code": code])
            #expect(unknown.status == 404 && unknown.errorMessage == crossed.errorMessage)
            server.clock.advance(by: 901)
            let expired = try await Self.verify(server, flow, code: code)
            #expect(expired.status == 401 && expired.errorReason == "expired")
        }
    }

    @Test(arguments: TestDatabase.available)
    func badAddressesAreRefusedAndNothingIsStored(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            for bad in ["ada@example.com\r\nBcc: all@example.com", "ada@example.com\nX: y", "no-at-sign",
                        "a@b", ".ada@example.com", "ada..l@example.com", String(repeating: "a", count: 65) + "@example.com",
                        "ada@" + String(repeating: "a", count: 250) + ".com", "ada@exa_mple.com", "ädä@example.com"] {
                let answer = try await Self.start(server, bad)
                #expect(answer.status == 400 && answer.errorCode == "INVALID_REQUEST", "\(bad.debugDescription): \(answer.text)")
                #expect(answer.errorDetails["field"] as? String == "email")
            }
            let notString = try await server.post("/v1/auth/email/start", ["email": 42])
            #expect(notString.status == 400)
            let badIntent = try await server.post("/v1/auth/email/start", ["email": "a@example.com", "intent": "steal"])
            #expect(badIntent.status == 400 && badIntent.errorDetails["field"] as? String == "intent")
            let notListed = try await Self.start(server, "a@example.com", redirectTo: "https://evil.example/")
            #expect(notListed.status == 400 && notListed.errorDetails["field"] as? String == "redirect_to")
            #expect(try await Self.mailCount(server) == 0)

            // A Unicode domain is kept as its ASCII form.
            _ = try Flow(try await Self.start(server, "Joerg@Bücher.Example"))
            let mail = try await Self.mail(server, to: "joerg@xn--bcher-kva.example")
            #expect(mail["to"] as? String == "joerg@xn--bcher-kva.example")
        }
    }

    static func type(_ server: TestServer, _ number: String, on token: String) async throws -> TestResponse {
        try await server.request(.POST, "/e/\(token)", rawBody: number.isEmpty ? "" : "match=\(number)",
                                 headers: ["Content-Type": "application/x-www-form-urlencoded"])
    }

    @Test(arguments: TestDatabase.available)
    func theLinkShowsAPageThatChangesNothingAndOnlyTheDeviceGetsTheSession(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
            let flow = try Flow(try await server.post("/v1/auth/email/start", ["email": "link@example.com"],
                                                      headers: ["User-Agent": iPhone]))
            let mail = try await Self.mail(server, to: "link@example.com")
            let token = try Self.token(mail)
            // A mail scanner opens the link: the page asks for the number, shows none, names the device as a
            // person would, and nothing changes.
            let page = try await server.get("/e/\(token)")
            #expect(page.status == 200 && page.text.contains("name=\"match\"") && !page.text.contains("value=\"\(flow.match)\""))
            #expect(page.text.contains("(Safari on iPhone)") && page.text.contains("just now") && !page.text.contains("Mozilla"))
            #expect(page.headers.first(name: "Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
            #expect(page.headers.first(name: "Content-Security-Policy")?.contains("form-action 'self';") == true)
            let pending = try await server.post("/v1/auth/email/complete", ["flow_id": flow.id, "flow_secret": flow.secret])
            #expect(pending.status == 409 && pending.errorCode == "EMAIL_NOT_CONFIRMED")

            // An empty or unreadable form changes nothing: the page asks again.
            for unreadable in ["", "abc", "4", "\(flow.match)0"] {
                let answer = try await Self.type(server, unreadable, on: token)
                #expect(answer.status == 422 && answer.text.contains("Type the two-digit number"), "\(unreadable)")
            }
            // The right number confirms, and the browser gets no session.
            let confirmed = try await Self.type(server, "\(flow.match)", on: token)
            #expect(confirmed.status == 200 && confirmed.text.contains("Return to your other device"))
            #expect(!confirmed.text.contains("access_token") && confirmed.headers.first(name: "Set-Cookie") == nil)

            // The device finishes, once.
            let session = try Session(try await server.post("/v1/auth/email/complete",
                                                            ["flow_id": flow.id, "flow_secret": flow.secret, "wait": 5]))
            #expect(session.linkedProviders == ["email"])
            let twice = try await server.post("/v1/auth/email/complete", ["flow_id": flow.id, "flow_secret": flow.secret])
            #expect(twice.status == 401 && twice.errorReason == "used")
            let reopened = try await server.get("/e/\(token)")
            #expect(reopened.status == 410)
            #expect(try await server.get("/e/" + String(repeating: "A", count: 43)).status == 404)
        }
    }

    /// The attack 0.7.0 allowed: a stranger starts a flow for someone's address (or a scanner presses every button);
    /// three clicks always found the number. Now each link takes one number: every other guess finds it ended, for
    /// every intent, and the stranger's device never finishes; the person's own code still works.
    @Test(arguments: TestDatabase.available)
    func aLinkTakesOneNumberSoNoGuessingOrScannerConfirmsAStrangersFlow(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let owner = try await server.signIn(.apple, sub: "owner-apple")
            let linkFlow = try Flow(try await Self.start(server, "victim@example.com", intent: "link", bearer: owner.accessToken))
            let linkToken = try Self.token(try await Self.mail(server, to: "victim@example.com"))
            server.clock.advance(by: 61)
            let stranger = try Flow(try await Self.start(server, "victim@example.com"))
            let mail = try await Self.mail(server, to: "victim@example.com", count: 2)
            let token = try Self.token(mail)
            // Every number for the stranger's flow (the right one last); three clicks for the link's, as 0.7.0's page
            // allowed (the sign-in rate limit of the page's POST stays out of the way: 93 requests).
            for (flow, token, tries) in [(stranger, token, 89), (linkFlow, linkToken, 2)] {
                var answers: [Int] = []
                for guess in (10...99).filter({ $0 != flow.match }).prefix(tries) + [flow.match] {
                    answers.append(try await Self.type(server, "\(guess)", on: token).status)
                }
                #expect(answers.first == 410 && answers.allSatisfy { $0 == 410 }, "\(answers)")
                let page = try await server.get("/e/\(token)")
                #expect(page.status == 410 && page.text.contains("wrong number"))
            }
            let ended = try await server.post("/v1/auth/email/complete", ["flow_id": stranger.id, "flow_secret": stranger.secret])
            #expect(ended.status == 401 && ended.errorReason == "link_ended" && ended.errorDetails["attempts_left"] as? Int == 5)
            let linkEnded = try await server.post("/v1/auth/email/complete", ["flow_id": linkFlow.id, "flow_secret": linkFlow.secret],
                                                  bearer: owner.accessToken)
            #expect(linkEnded.status == 401 && linkEnded.errorReason == "link_ended")
            // The code in the mail keeps its own tries: the person who asked can still finish with it.
            let code = try #require(mail["code"] as? String)
            #expect(try await Self.verify(server, stranger, code: code).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aWaitingDeviceFinishesWhenTheLinkIsConfirmedAndRedirectsGoWhereAllowed(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "wait@example.com", redirectTo: "myapp://signed-in"))
            let token = try Self.token(try await Self.mail(server, to: "wait@example.com"))
            async let waiting = server.post("/v1/auth/email/complete", ["flow_id": flow.id, "flow_secret": flow.secret, "wait": 30])
            try await Task.sleep(for: .milliseconds(300))
            let page = try await server.get("/e/\(token)")
            #expect(page.headers.first(name: "Content-Security-Policy")?.contains("form-action 'self' myapp:;") == true)
            let confirmed = try await Self.type(server, "\(flow.match)", on: token)
            #expect(confirmed.status == 303)
            #expect(confirmed.headers.first(name: "Location") == "myapp://signed-in?flow_id=\(flow.id)")
            let session = try Session(try await waiting)
            #expect(session.isNewUser)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aGuestUpgradesInPlaceAndLinkingAddsAVerifiedAddress(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let guest = try await server.anonymous()
            let flow = try Flow(try await Self.start(server, "guest@example.com"))
            let code = try #require(try await Self.mail(server, to: "guest@example.com")["code"] as? String)
            let upgraded = try Session(try await Self.verify(server, flow, code: code, bearer: guest.accessToken))
            #expect(upgraded.userID == guest.userID && !upgraded.isAnonymous && upgraded.linkedProviders == ["email"])

            // An Apple account adds an address; a second account cannot take it, and learns so only after the code.
            let apple = try await server.signIn(.apple, sub: "apple-ada")
            let linkFlow = try Flow(try await Self.start(server, "ada@example.com", intent: "link", bearer: apple.accessToken))
            let linkCode = try #require(try await Self.mail(server, to: "ada@example.com")["code"] as? String)
            // Only the session that started it finishes it.
            let stranger = try await server.signIn(.google, sub: "google-eve")
            let stolen = try await Self.verify(server, linkFlow, code: linkCode, bearer: stranger.accessToken)
            #expect(stolen.status == 401)
            let linked = try await Self.verify(server, linkFlow, code: linkCode, bearer: apple.accessToken)
            #expect(linked.status == 200, "\(linked.text)")
            #expect(linked.json["linked_providers"] as? [String] == ["apple", "email"])
            let me = try await server.get("/v1/users/me", bearer: apple.accessToken)
            #expect((me.json["recovery"] as? [String: Any])?["methods"] as? Int == 2)

            server.clock.advance(by: 61)
            let taken = try Flow(try await Self.start(server, "ada@example.com", intent: "link", bearer: stranger.accessToken))
            let takenCode = try #require(try await Self.mail(server, to: "ada@example.com", count: 2)["code"] as? String)
            let conflict = try await Self.verify(server, taken, code: takenCode, bearer: stranger.accessToken)
            #expect(conflict.status == 409 && conflict.errorCode == "PROVIDER_CONFLICT")

            // The address now signs in to the Apple account: a way back in without Apple. A guest who signs in with
            // it is merged into that account, as with any provider.
            server.clock.advance(by: 61)
            let otherGuest = try await server.anonymous()
            let back = try Flow(try await Self.start(server, "ada@example.com"))
            let backCode = try #require(try await Self.mail(server, to: "ada@example.com", count: 3)["code"] as? String)
            let merged = try Session(try await Self.verify(server, back, code: backCode, bearer: otherGuest.accessToken))
            #expect(merged.userID == apple.userID && merged.mergedFrom == otherGuest.userID)

            // Unlinked like any method (the sign-in was just now).
            let unlinked = try await server.delete("/v1/auth/link/email", bearer: apple.accessToken)
            #expect(unlinked.status == 200 && unlinked.json["linked_providers"] as? [String] == ["apple"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func reauthenticationTakesOnlyTheAccountsOwnAddress(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "own@example.com"))
            let session = try Session(try await Self.verify(server, flow, code: try #require(
                try await Self.mail(server, to: "own@example.com")["code"] as? String)))
            let foreign = try await Self.start(server, "someone@example.com", intent: "reauthenticate", bearer: session.accessToken)
            #expect(foreign.status == 403 && foreign.errorReason == "identity_not_on_account")
            let noBearer = try await Self.start(server, "own@example.com", intent: "link")
            #expect(noBearer.status == 401)
            server.clock.advance(by: 61)
            let again = try Flow(try await Self.start(server, "own@example.com", intent: "reauthenticate", bearer: session.accessToken))
            let code = try #require(try await Self.mail(server, to: "own@example.com", count: 2)["code"] as? String)
            let renewed = try Session(try await Self.verify(server, again, code: code, bearer: session.accessToken))
            #expect(renewed.userID == session.userID && renewed.accessToken != session.accessToken)
            // The old session ended with it.
            #expect(try await server.get("/v1/users/me", bearer: session.accessToken).status == 401)
        }
    }

    @Test(arguments: TestDatabase.available)
    func limitsSayWhenToRetryAndAFloodQueuesNothing(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            Self.configure(&$0)
            $0.email.ipPerHour = 3
        }) { server in
            _ = try Flow(try await Self.start(server, "limit@example.com"))
            let soon = try await Self.start(server, "limit@example.com")
            #expect(soon.status == 429 && soon.errorCode == "RATE_LIMITED")
            #expect(soon.headers.first(name: "Retry-After") == "60")
            _ = try Flow(try await Self.start(server, "second@example.com"))
            _ = try Flow(try await Self.start(server, "third@example.com"))
            _ = try await Self.mail(server, to: "third@example.com")
            let queued = try await Self.mailCount(server)
            for index in 0..<10 {
                let flood = try await Self.start(server, "flood\(index)@example.com")
                #expect(flood.status == 429)
            }
            #expect(try await Self.mailCount(server) == queued)
        }
    }

    @Test(arguments: TestDatabase.available)
    func racingCopiesOfTheRightCodeFinishOnce(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "race@example.com"))
            let code = try #require(try await Self.mail(server, to: "race@example.com")["code"] as? String)
            let answers = try await server.concurrently(8) { try await Self.verify(server, flow, code: code) }
            #expect(answers.filter { $0.status == 200 }.count == 1)
            #expect(answers.filter { $0.status == 401 && $0.errorReason == "used" }.count == 7)
        }
    }

    @Test(arguments: TestDatabase.available)
    func anOperatorSendsARecoveryCodeThatSignsInThroughGoTrue(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "lost@example.com"))
            let account = try Session(try await Self.verify(server, flow, code: try #require(
                try await Self.mail(server, to: "lost@example.com")["code"] as? String)))
            let apple = try await server.signIn(.apple, sub: "no-email")
            let refused = try await server.request(.POST, "/v1/admin/users/\(apple.userID)/recovery", bearer: Self.adminKey)
            #expect(refused.status == 400)
            server.clock.advance(by: 61)
            let sent = try await server.request(.POST, "/v1/admin/users/\(account.userID)/recovery", bearer: Self.adminKey)
            #expect(sent.status == 202, "\(sent.text)")
            let mail = try await Self.mail(server, to: "lost@example.com", count: 2)
            #expect(mail["intent"] as? String == "recovery" && mail["link"] == nil)
            let code = try #require(mail["code"] as? String)
            let audit = try await server.request(.GET, "/v1/admin/audit?user_id=\(account.userID)&type=user.recovery_sent",
                                                 bearer: Self.adminKey)
            #expect((audit.json["events"] as? [[String: Any]])?.count == 1)
            let signedIn = try await server.post("/auth/v1/verify", ["type": "recovery", "email": "lost@example.com", "token": code])
            #expect(signedIn.status == 200, "\(signedIn.text)")
            #expect((signedIn.json["user"] as? [String: Any])?["id"] as? String == account.userID)
            // The console's deliveries: both mails kept (dev mode's mailbox counts as sent), newest first.
            let deliveries = try await server.request(.GET, "/v1/admin/email/deliveries?status=sent", bearer: Self.adminKey)
            let rows = try #require(try JSONSerialization.jsonObject(with: deliveries.body) as? [[String: Any]])
            #expect(rows.map { $0["intent"] as? String } == ["recovery", "signin"])
            #expect(rows.allSatisfy { $0["recipient"] as? String == "lost@example.com" && $0["user_id"] != nil || $0["intent"] as? String == "signin" })
            let badStatus = try await server.request(.GET, "/v1/admin/email/deliveries?status=lost", bearer: Self.adminKey)
            #expect(badStatus.status == 400)
        }
    }

    /// Five flows an hour with five tries each made 25 guesses at one address in 0.7.0. Wrong codes now count per
    /// address across its flows: past `LANYARD_EMAIL_WRONG_CODES_PER_HOUR`, no code of the address is checked (not
    /// even the right one) and its starts answer 429 until the hour is over; other addresses are not affected.
    @Test(arguments: TestDatabase.available)
    func wrongCodesAreCappedPerAddressAcrossItsFlows(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            Self.configure(&$0)
            $0.email.wrongCodesPerHour = 6
        }) { server in
            var flows: [(Flow, String)] = []
            for index in 0..<3 {
                if index > 0 { server.clock.advance(by: 61) }
                let flow = try Flow(try await Self.start(server, "target@example.com"))
                let code = try #require(try await Self.mail(server, to: "target@example.com", count: index + 1)["code"] as? String)
                flows.append((flow, code))
            }
            func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }
            // Three wrong codes on each of the first two flows: six in all, each flow still alive (two tries left).
            for (flow, code) in flows.prefix(2) {
                for _ in 0..<3 {
                    let answer = try await Self.verify(server, flow, code: wrong(code))
                    #expect(answer.status == 401 && answer.errorReason == "wrong_code")
                }
            }
            // The address is out of wrong codes: the third flow's right code is not even checked, nor a new start.
            let capped = try await Self.verify(server, flows[2].0, code: flows[2].1)
            #expect(capped.status == 429 && capped.errorCode == "RATE_LIMITED", "\(capped.text)")
            #expect(Int(capped.headers.first(name: "Retry-After") ?? "") ?? 0 > 3000)
            server.clock.advance(by: 61)
            let start = try await Self.start(server, "target@example.com")
            #expect(start.status == 429 && start.errorCode == "RATE_LIMITED")
            // Another address starts and signs in as usual.
            let other = try Flow(try await Self.start(server, "bystander@example.com"))
            let otherCode = try #require(try await Self.mail(server, to: "bystander@example.com")["code"] as? String)
            #expect(try await Self.verify(server, other, code: otherCode).status == 200)
            // The hour over, the address is itself again.
            server.clock.advance(by: 3600)
            #expect(try await Self.start(server, "target@example.com").status == 202)
        }
    }

    /// An operator's recovery code signs in on `/v1` (a default `serve` has no GoTrue), and codes asked for the
    /// address afterwards, by the person or by GoTrue's `otp`, do not supersede it.
    @Test(arguments: TestDatabase.available)
    func anOperatorsRecoveryCodeSignsInOnV1WhateverCodesWereAskedForSince(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "lost@example.com"))
            let account = try Session(try await Self.verify(server, flow, code: try #require(
                try await Self.mail(server, to: "lost@example.com")["code"] as? String)))
            server.clock.advance(by: 61)
            #expect(try await server.request(.POST, "/v1/admin/users/\(account.userID)/recovery", bearer: Self.adminKey).status == 202)
            let recovery = try #require(try await Self.mail(server, to: "lost@example.com", count: 2)["code"] as? String)
            server.clock.advance(by: 61)
            #expect(try await server.post("/auth/v1/otp", ["email": "lost@example.com"]).status == 200)
            server.clock.advance(by: 61)
            _ = try Flow(try await Self.start(server, "lost@example.com"))
            _ = try await Self.mail(server, to: "lost@example.com", count: 4)

            let wrong = try await server.post("/v1/auth/email/recover", ["email": "lost@example.com",
                                                                       "code": recovery == "000000" ? "111111" : "000000"])
            #expect(wrong.status == 401 && wrong.errorCode == "INVALID_CODE" && wrong.errorReason == "wrong_code")
            let recovered = try await server.post("/v1/auth/email/recover", ["email": "LOST@example.com", "code": recovery])
            #expect(recovered.status == 200, "\(recovered.text)")
            #expect(try Session(recovered).userID == account.userID)
            let again = try await server.post("/v1/auth/email/recover", ["email": "lost@example.com", "code": recovery])
            #expect(again.status == 401 && again.errorCode == "INVALID_CODE")
            let missing = try await server.post("/v1/auth/email/recover", ["email": "lost@example.com"])
            #expect(missing.status == 400 && missing.errorDetails["field"] as? String == "code")
        }
    }

    /// A token of an account absorbed by a full merge is `ACCOUNT_MERGED` on the email routes too, where a bearer
    /// is optional: it starts no flow, for any intent.
    @Test(arguments: TestDatabase.available)
    func anAbsorbedAccountsTokenStartsNoEmailFlow(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let survivor = try await server.signIn(.apple, sub: "survivor")
            let absorbed = try await server.signIn(.google, sub: "absorbed")
            let merged = try await MergeTests.merge(server, survivor, ["proof": try await MergeTests.proof(server, for: survivor, sub: "absorbed")])
            #expect(merged.status == 200, "\(merged.text)")
            for intent in ["signin", "link", "reauthenticate"] {
                let started = try await Self.start(server, "absorbed@example.com", intent: intent, bearer: absorbed.accessToken)
                #expect(started.status == 401 && started.errorCode == "ACCOUNT_MERGED", "\(intent): \(started.text)")
                #expect(started.errorDetails["merged_into"] as? String == survivor.userID)
            }
            let signIn = try await server.post("/v1/auth/signin/google", ["id_token": try server.idToken(.google, sub: "someone")],
                                               bearer: absorbed.accessToken)
            #expect(signIn.status == 401 && signIn.errorCode == "ACCOUNT_MERGED")
            #expect(try await Self.mailCount(server) == 0)
        }
    }

    /// Racing guesses at one address's codes (the review's burst: twenty wrong codes and the right one at once)
    /// get no more checks than the hour allows: each is counted before it is compared.
    @Test(arguments: TestDatabase.available)
    func racingGuessesGetNoMoreChecksThanTheAddressesHour(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            var flows: [(Flow, String)] = []
            for index in 0..<5 {
                if index > 0 { server.clock.advance(by: 61) }
                let flow = try Flow(try await Self.start(server, "burst@example.com"))
                let code = try #require(try await Self.mail(server, to: "burst@example.com", count: index + 1)["code"] as? String)
                flows.append((flow, code))
            }
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for (flow, code) in flows {
                    for _ in 0..<4 {
                        group.addTask {
                            let answer = try await Self.verify(server, flow, code: code == "000000" ? "111111" : "000000")
                            return (answer.status, answer.errorCode)
                        }
                    }
                }
                let (last, code) = flows[4]
                group.addTask {
                    let answer = try await Self.verify(server, last, code: code)
                    return (answer.status, answer.errorCode)
                }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            let checked = statuses.filter { $0.0 != 429 }
            #expect(checked.count <= 10, "\(statuses)")
            #expect(statuses.filter { $0.0 == 429 }.count >= 11)
            #expect(statuses.allSatisfy { [200, 401, 429].contains($0.0) }, "\(statuses)")
        }
    }

    /// GoTrue's verify checks a guess against one code only: `type: "email"` GoTrue's newest open flow, `recovery`
    /// the operator's. 0.7's review found an endless oracle: with GoTrue's flow dead of wrong codes, guesses went on
    /// against the recovery code uncounted.
    @Test(arguments: TestDatabase.available)
    func goTruesVerifyGuessesOneOpenCodeAndCountsEveryGuess(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "victim@example.com"))
            let account = try Session(try await Self.verify(server, flow, code: try #require(
                try await Self.mail(server, to: "victim@example.com")["code"] as? String)))
            server.clock.advance(by: 61)
            #expect(try await server.request(.POST, "/v1/admin/users/\(account.userID)/recovery", bearer: Self.adminKey).status == 202)
            let recovery = try #require(try await Self.mail(server, to: "victim@example.com", count: 2)["code"] as? String)
            server.clock.advance(by: 61)
            #expect(try await server.post("/auth/v1/otp", ["email": "victim@example.com"]).status == 200)
            let wrong = recovery == "000000" ? "111111" : "000000"
            func verify(_ type: String, _ token: String) async throws -> TestResponse {
                try await server.post("/auth/v1/verify", ["type": type, "email": "victim@example.com", "token": token])
            }
            for _ in 0..<5 { #expect(try await verify("email", wrong).status == 403) }
            // GoTrue's flow is dead: `email` checks nothing more, not even against the recovery code.
            #expect(try await verify("email", recovery).status == 403)
            // The recovery flow was never guessed at: its own code works for `recovery`, once.
            let recovered = try await verify("recovery", recovery)
            #expect(recovered.status == 200, "\(recovered.text)")
            #expect((recovered.json["user"] as? [String: Any])?["id"] as? String == account.userID)
        }
    }

    /// A guest's session ended by its merge may retry a sign-in, but not start a flow that acts on an account.
    @Test(arguments: TestDatabase.available)
    func aMergedGuestsSessionStartsNoLinkFlow(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            _ = try await server.signIn(.apple, sub: "owner-of-apple")
            let guest = try await server.anonymous()
            let merged = try await server.post("/v1/auth/signin/apple", ["id_token": try server.idToken(.apple, sub: "owner-of-apple")],
                                               bearer: guest.accessToken)
            #expect(merged.status == 200 && merged.json["merged_from"] as? String == guest.userID)
            let link = try await Self.start(server, "guest-link@example.com", intent: "link", bearer: guest.accessToken)
            #expect(link.status == 401 && link.errorCode == "UNAUTHORIZED", "\(link.text)")
            #expect(try await Self.mailCount(server) == 0)
        }
    }

    /// A double click on the right number (or a reload of the answer) takes the browser where the first one went.
    @Test func theRightNumberAgainRedirectsAgain() async throws {
        try await TestServer.with(.sqlite, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "twice@example.com", redirectTo: "myapp://signed-in"))
            let token = try Self.token(try await Self.mail(server, to: "twice@example.com"))
            for _ in 0..<2 {
                let answer = try await Self.type(server, "\(flow.match)", on: token)
                #expect(answer.status == 303)
                #expect(answer.headers.first(name: "Location") == "myapp://signed-in?flow_id=\(flow.id)")
            }
            #expect(try await Self.type(server, flow.match == 10 ? "11" : "10", on: token).status == 410)
        }
    }

    @Test(arguments: TestDatabase.available)
    func endedFlowsIdleCountersAndOldMailRecordsAreForgotten(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            _ = try Flow(try await Self.start(server, "old@example.com"))
            _ = try await Self.mail(server, to: "old@example.com")
            func count(_ table: String) async throws -> Int64 {
                try await server.runtime.database.read { try await $0.query("SELECT count(*) AS n FROM \(table)", []) }
                    .first?.integer("n") ?? -1
            }
            try await EmailOutbox(server.runtime.dependencies).forgetEnded()
            #expect(try await count("email_flows") == 1)
            #expect(try await count("email_limits") == 3)
            #expect(try await count("email_deliveries") == 1, "a sent mail's record is kept for 30 days")
            server.clock.advance(by: 31 * 86_400)
            try await EmailOutbox(server.runtime.dependencies).forgetEnded()
            #expect(try await count("email_flows") == 0)
            #expect(try await count("email_limits") == 0)
            #expect(try await count("email_deliveries") == 0)
        }
    }

    @Test(arguments: TestDatabase.available)
    func anEmailCodeProvesTheOtherAccountOfAMerge(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let other = try Flow(try await Self.start(server, "work@example.com"))
            let absorbed = try Session(try await Self.verify(server, other, code: try #require(
                try await Self.mail(server, to: "work@example.com")["code"] as? String)))
            let survivor = try await server.signIn(.apple, sub: "apple-home")
            server.clock.advance(by: 61)
            let proofFlow = try Flow(try await Self.start(server, "work@example.com"))
            let code = try #require(try await Self.mail(server, to: "work@example.com", count: 2)["code"] as? String)
            func proof(_ code: String) -> [String: Any] {
                ["proof": ["provider": "email", "flow_id": proofFlow.id, "flow_secret": proofFlow.secret, "code": code]]
            }
            let wrong = try await server.post("/v1/users/me/merge", proof(code == "000000" ? "111111" : "000000"),
                                              bearer: survivor.accessToken)
            #expect(wrong.status == 401 && wrong.errorCode == "INVALID_CODE")
            let incomplete = try await server.post("/v1/users/me/merge", ["proof": ["provider": "email", "flow_id": proofFlow.id]],
                                                   bearer: survivor.accessToken)
            #expect(incomplete.status == 400 && incomplete.errorDetails["field"] as? String == "proof.flow_secret")
            let merged = try await server.post("/v1/users/me/merge", proof(code), bearer: survivor.accessToken,
                                               headers: ["Idempotency-Key": "merge-by-email"])
            #expect(merged.status == 200, "\(merged.text)")
            #expect(merged.json["identities_moved"] as? [String] == ["email"])
            // The same request again answers the same merge; the code itself is spent.
            let again = try await server.post("/v1/users/me/merge", proof(code), bearer: survivor.accessToken,
                                              headers: ["Idempotency-Key": "merge-by-email"])
            #expect(again.status == 200 && again.json["merge_id"] as? String == merged.json["merge_id"] as? String)
            #expect(try await server.get("/v1/users/me", bearer: absorbed.accessToken).status == 401)
            let me = try await server.get("/v1/users/me", bearer: survivor.accessToken)
            #expect(me.json["linked_providers"] as? [String] == ["apple", "email"])
        }
    }

    @Test func withoutAnSMTPServerOutsideDevModeEmailIsNotOffered() async throws {
        try await TestServer.with(.sqlite, configure: { $0.devMode = false }) { server in
            let refused = try await Self.start(server, "ada@example.com")
            #expect(refused.status == 400 && refused.errorCode == "UNSUPPORTED_PROVIDER")
            let offered = try JSONSerialization.jsonObject(with: try await server.get("/v1/providers").body) as? [[String: Any]]
            #expect(offered?.contains { $0["name"] as? String == "email" } == false)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aDisabledAccountCannotSignInByEmailNorBeRecovered(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.configure) { server in
            let flow = try Flow(try await Self.start(server, "banned@example.com"))
            let account = try Session(try await Self.verify(server, flow, code: try #require(
                try await Self.mail(server, to: "banned@example.com")["code"] as? String)))
            let disabled = try await server.request(.PATCH, "/v1/admin/users/\(account.userID)", json: ["disabled": true],
                                                    bearer: Self.adminKey)
            #expect(disabled.status == 200)
            server.clock.advance(by: 61)
            // The mail still goes (start never says whether an account exists); the code does not sign in.
            let again = try Flow(try await Self.start(server, "banned@example.com"))
            let code = try #require(try await Self.mail(server, to: "banned@example.com", count: 2)["code"] as? String)
            let refused = try await Self.verify(server, again, code: code)
            #expect(refused.status == 403 && refused.errorCode == "ACCOUNT_DISABLED")
        }
    }
}
