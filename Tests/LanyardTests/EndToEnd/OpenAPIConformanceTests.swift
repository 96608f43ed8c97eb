import Foundation
import LanyardEmulator
import LanyardSupport
import LanyardWire
import NIOHTTP1
import Synchronization
import Testing

/// The served OpenAPI document against the server's real answers: one story that reaches every documented
/// operation (the emulator's aside), its successes and the errors a client must handle, and every answer checked
/// against its operation's declared statuses and schemas (`OpenAPIConformance`).
@Suite struct OpenAPIConformanceTests {
    /// Every answer of the story, and what was wrong with each.
    final class AnswerLog: Sendable {
        let spec: OpenAPIConformance
        private let state = Mutex<(problems: [String], reached: Set<String>)>(([], []))

        init(_ spec: OpenAPIConformance) { self.spec = spec }

        func record(_ method: HTTPMethod, _ path: String, _ answer: TestResponse) {
            let problems = spec.problems(method: method.rawValue, path: path, status: answer.status, body: answer.body,
                                         contentType: answer.headers.first(name: "Content-Type"))
            let operation = spec.operation(method: method.rawValue, path: path)
            state.withLock { state in
                state.problems += problems
                if let operation { state.reached.insert(operation) }
            }
        }

        var problems: [String] { state.withLock { $0.problems } }
        var reached: Set<String> { state.withLock { $0.reached } }
    }

    /// A client that checks every answer it gets.
    struct CheckedClient: Sendable {
        let server: TestServer
        let log: AnswerLog

        @discardableResult
        func send(_ method: HTTPMethod, _ path: String, _ json: [String: Any]? = nil, bearer: String? = nil,
                  headers: [String: String] = [:]) async throws -> TestResponse {
            let answer = try await server.request(method, path, json: json, bearer: bearer, headers: headers)
            log.record(method, path, answer)
            return answer
        }

        /// A body that is not one JSON object (the admin API's import lines).
        @discardableResult
        func send(_ method: HTTPMethod, _ path: String, rawBody: String, bearer: String? = nil) async throws -> TestResponse {
            let answer = try await server.request(method, path, rawBody: rawBody, bearer: bearer)
            log.record(method, path, answer)
            return answer
        }

        func session(_ answer: TestResponse) throws -> Session { try Session(answer) }

        /// A browser's step: nothing followed, a form when given; `url` is a path or this server's full URL.
        @discardableResult
        func navigate(_ method: HTTPMethod, _ url: String, form: [(String, String)]? = nil) async throws -> TestResponse {
            let full = url.hasPrefix("http") ? url : server.baseURL + url
            let answer = try await TestHTTP.send(method, full, form: form, followingRedirects: false)
            log.record(method, String(full.dropFirst(server.baseURL.count)), answer)
            return answer
        }
    }

    /// The session an access token speaks for (its `sid` claim).
    static func sessionID(_ session: Session) throws -> String {
        let payload = session.accessToken.split(separator: ".").dropFirst().first.flatMap { Base64URL.decode($0) }
        guard let payload, case .object(let claims) = try JSONParser.parse(payload), let sid = claims["sid"]?.stringValue else {
            throw TestSetupError("no sid in the access token")
        }
        return sid
    }

    @Test(arguments: TestDatabase.available)
    func everyAnswerMatchesTheDocument(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: {
            $0.adminKey = AdminTests.key
            $0.rateLimits.enabled = true
            $0.rateLimits.anonymous = .init(limit: 3, window: 3600)
        }) { server in
            let log = AnswerLog(try OpenAPIConformance(try await server.get("/openapi.json").body))
            let client = CheckedClient(server: server, log: log)
            try await Self.operations(client)
            try await Self.accounts(client)
            try await Self.data(client)
            try await Self.groups(client)
            try await Self.merges(client)
            try await Self.administration(client)
            try await Self.goTrue(client)
            try await Self.email(client)
            try await Self.passkeys(client)
            try await Self.redirects(client)
            try await Self.switchingDay(client)

            #expect(log.problems == [], "\(log.problems.joined(separator: "\n"))")
            let documented = log.spec.operations.filter { !$0.contains(" /_emulator") }
            let missed = documented.subtracting(log.reached)
            #expect(missed.isEmpty, "not reached by the story: \(missed.sorted())")
        }
    }

    /// What a server answers where a configuration leaves a part out (GoTrue's surface, the console) is in the
    /// document too: Lanyard's own 404, not GoTrue's shape nor an undocumented status.
    @Test func answersOfPartsAConfigurationLeavesOutMatchTheDocument() async throws {
        try await TestServer.with(.sqlite, configure: {
            $0.gotrueCompat = false
            $0.adminKey = nil
        }) { server in
            let log = AnswerLog(try OpenAPIConformance(try await server.get("/openapi.json").body))
            let client = CheckedClient(server: server, log: log)
            for (method, path) in [(HTTPMethod.POST, "/auth/v1/token?grant_type=id_token"), (.GET, "/auth/v1/user"),
                                   (.POST, "/auth/v1/otp"), (.GET, "/auth/v1/settings"), (.GET, "/admin")] {
                let answer = try await client.send(method, path, method == .POST ? [:] : nil)
                #expect(answer.status == 404 && answer.errorCode == "NOT_FOUND", "\(path): \(answer.text)")
            }
            #expect(log.problems == [], "\(log.problems.joined(separator: "\n"))")
        }
    }

    static func operations(_ client: CheckedClient) async throws {
        for path in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/.well-known/jwks.json",
                     "/.well-known/openid-configuration", "/admin"] {
            #expect(try await client.send(.GET, path).status == 200, "\(path)")
        }
        // The web SDK, and its revalidation by ETag.
        let sdk = try await client.send(.GET, "/sdk/lanyard.js")
        #expect(sdk.status == 200)
        let etag = sdk.headers.first(name: "ETag") ?? ""
        #expect(try await client.send(.GET, "/sdk/lanyard.js", headers: ["If-None-Match": etag]).status == 304)
    }

    static func accounts(_ client: CheckedClient) async throws {
        let server = client.server
        #expect(try await client.send(.GET, "/v1/providers").status == 200)
        let guest = try client.session(try await client.send(.POST, "/v1/auth/anonymous"))
        let ada = try client.session(try await client.send(.POST, "/v1/auth/signin/apple",
                                                           ["id_token": try server.idToken(.apple, sub: "ada", name: "Ada")],
                                                           bearer: guest.accessToken))
        try await client.send(.POST, "/v1/auth/signin/apple", ["idtoken": "typo"])
        try await client.send(.POST, "/v1/auth/signin/apple", ["id_token": "not.a.token"])
        try await client.send(.POST, "/v1/auth/signin/github", ["id_token": "x"])
        try await client.send(.POST, "/v1/auth/signin/apple", ["id_token": String(repeating: "a", count: 70_000)])
        try await client.send(.GET, "/v1/users/me", bearer: ada.accessToken)
        try await client.send(.GET, "/v1/users/me")
        try await client.send(.PATCH, "/v1/users/me", ["display_name": "Ada L."], bearer: ada.accessToken)
        try await client.send(.PATCH, "/v1/users/me", ["display_name": 7], bearer: ada.accessToken)

        let google = ["id_token": try server.idToken(.google, sub: "ada-g")]
        #expect(try await client.send(.POST, "/v1/auth/link/google", google, bearer: ada.accessToken).status == 200)
        try await client.send(.POST, "/v1/auth/link/google", google, bearer: ada.accessToken)  // already linked: 409
        try await client.send(.POST, "/v1/auth/link/google", ["id_token": "x"], bearer: ada.accessToken)
        #expect(try await client.send(.DELETE, "/v1/auth/link/google", bearer: ada.accessToken).status == 200)
        try await client.send(.DELETE, "/v1/auth/link/google", bearer: ada.accessToken)  // not linked: 404
        try await client.send(.DELETE, "/v1/auth/link/apple", bearer: ada.accessToken)  // the only one: 400
        let reauthenticated = try await client.send(.POST, "/v1/auth/reauthenticate/apple",
                                                    ["id_token": try server.idToken(.apple, sub: "ada")], bearer: ada.accessToken)
        let current = try client.session(reauthenticated)
        try await client.send(.POST, "/v1/auth/reauthenticate/apple", ["id_token": try server.idToken(.apple, sub: "eve")],
                              bearer: current.accessToken)  // not this account's identity: 403
        try await client.send(.POST, "/v1/auth/reauthenticate/google", ["id_token": try server.idToken(.google, sub: "ada-g")],
                              bearer: current.accessToken)  // not linked: 404

        let refreshed = try client.session(try await client.send(.POST, "/v1/auth/refresh", ["refresh_token": current.refreshToken]))
        try await client.send(.POST, "/v1/auth/refresh", ["refresh_token": String(repeating: "A", count: 43)])
        try await client.send(.POST, "/v1/auth/refresh", [:])
        let other = try await server.signIn(.apple, sub: "ada")
        #expect(try await client.send(.GET, "/v1/sessions", bearer: refreshed.accessToken).status == 200)
        #expect(try await client.send(.DELETE, "/v1/sessions/\(try Self.sessionID(other))", bearer: refreshed.accessToken).status == 204)
        try await client.send(.DELETE, "/v1/sessions/\(try Self.sessionID(other))", bearer: refreshed.accessToken)
        try await client.send(.POST, "/v1/auth/signout", ["scope": "nowhere"], bearer: refreshed.accessToken)

        // Apple's notification, signed by the emulator as Apple signs it, sent twice.
        let sent = try await server.post("/_emulator/apple/notify", ["type": "email-disabled", "sub": "ada"])
        let payload = try #require(sent.json["payload"] as? String)
        #expect(try await client.send(.POST, "/v1/providers/apple/notifications", ["payload": payload]).status == 200)
        try await client.send(.POST, "/v1/providers/apple/notifications", ["payload": "not.a.jws"])
        try await client.send(.POST, "/v1/providers/apple/notifications", [:])

        // The guests' limit (three an hour here): the story made one.
        for _ in 0..<3 { try await client.send(.POST, "/v1/auth/anonymous") }
        #expect(try await client.send(.POST, "/v1/auth/signout", ["scope": "local"], bearer: refreshed.accessToken).status == 204)
        let last = try await server.signIn(.apple, sub: "ada")
        #expect(try await client.send(.DELETE, "/v1/users/me", bearer: last.accessToken).status == 204)
    }

    static func data(_ client: CheckedClient) async throws {
        let grace = try await client.server.signIn(.google, sub: "grace")
        let bearer = grace.accessToken
        #expect(try await client.send(.PUT, "/v1/data/notes/n1", ["data": ["text": "hi", "tags": ["a"]]], bearer: bearer).status == 200)
        try await client.send(.PUT, "/v1/data/notes/n1", ["data": ["text": "again"]], bearer: bearer, headers: ["If-Match": "\"9\""])
        try await client.send(.PUT, "/v1/data/Not A Collection/n1", ["data": [:]], bearer: bearer)
        try await client.send(.PUT, "/v1/data/notes/n2", ["data": ["text": String(repeating: "x", count: 300_000)]], bearer: bearer)
        #expect(try await client.send(.GET, "/v1/data/notes/n1", bearer: bearer).status == 200)
        try await client.send(.GET, "/v1/data/notes/missing", bearer: bearer)
        #expect(try await client.send(.GET, "/v1/data/notes?limit=10", bearer: bearer).status == 200)
        try await client.send(.GET, "/v1/data/notes?limit=ten", bearer: bearer)
        try await client.send(.GET, "/v1/data/notes", bearer: nil)
        try await client.send(.DELETE, "/v1/data/notes/n1", bearer: bearer, headers: ["If-Match": "\"7\""])
        #expect(try await client.send(.DELETE, "/v1/data/notes/n1", bearer: bearer).status == 200)
        try await client.send(.DELETE, "/v1/data/notes/never", bearer: bearer)

        // The change feed: a page (with a tombstone), a long-poll that ends empty, refusals.
        let feed = try await client.send(.GET, "/v1/changes?limit=10", bearer: bearer)
        #expect((feed.json["changes"] as? [[String: Any]])?.isEmpty == false)
        let end = feed.json["next_cursor"] as? String ?? ""
        #expect(try await client.send(.GET, "/v1/changes?since=\(end)&wait=1", bearer: bearer).status == 200)
        try await client.send(.GET, "/v1/changes?since=never-issued", bearer: bearer)
        try await client.send(.GET, "/v1/changes", bearer: nil)
        // The stream, for a cursor it never issued: it says so and ends, so the whole answer can be read.
        let stream = try await client.send(.GET, "/v1/changes/stream?since=never-issued", bearer: bearer)
        #expect(stream.status == 200)
        #expect(stream.text.contains("event: end\ndata: {\"reason\":\"resync_required\"}"))
        try await client.send(.GET, "/v1/changes/stream", bearer: "not-a-token")
    }

    static func groups(_ client: CheckedClient) async throws {
        let server = client.server
        let owner = try await server.signIn(.apple, sub: "group-owner")
        let child = try await server.signIn(.google, sub: "group-child")
        let created = try await client.send(.POST, "/v1/groups", ["name": "Family"], bearer: owner.accessToken)
        let groupID = try #require(created.json["id"] as? String)
        try await client.send(.POST, "/v1/groups", ["name": ""], bearer: owner.accessToken)
        let base = "/v1/groups/\(groupID)"
        let invite = try await client.send(.POST, "\(base)/invites", ["max_uses": 2], bearer: owner.accessToken)
        let code = try #require(invite.json["code"] as? String)
        try await client.send(.POST, "\(base)/invites", ["role": "owner"], bearer: owner.accessToken)
        #expect(try await client.send(.GET, "\(base)/invites", bearer: owner.accessToken).status == 200)
        #expect(try await client.send(.GET, "/v1/invites/\(code)", bearer: child.accessToken).status == 200)
        try await client.send(.GET, "/v1/invites/AAAAA-AAAAA", bearer: child.accessToken)
        #expect(try await client.send(.POST, "/v1/invites/\(code)/accept", bearer: child.accessToken).status == 200)
        let revoked = try await client.send(.POST, "\(base)/invites", bearer: owner.accessToken)
        let revokedID = try #require(revoked.json["id"] as? String)
        #expect(try await client.send(.DELETE, "\(base)/invites/\(revokedID)", bearer: owner.accessToken).status == 204)
        try await client.send(.POST, "/v1/invites/\(try #require(revoked.json["code"] as? String))/accept",
                              bearer: owner.accessToken)  // a member already: 200
        #expect(try await client.send(.GET, "/join/\(code)").status == 200)
        try await client.send(.GET, "/join/%3Cscript%3E")
        let outsider = try await server.signIn(.google, sub: "group-outsider")
        try await client.send(.POST, "/v1/invites/\(try #require(revoked.json["code"] as? String))/accept",
                              bearer: outsider.accessToken)  // revoked: 410
        #expect(try await client.send(.GET, "/v1/groups", bearer: child.accessToken).status == 200)
        #expect(try await client.send(.GET, base, bearer: child.accessToken).status == 200)
        try await client.send(.GET, base, bearer: outsider.accessToken)
        #expect(try await client.send(.PATCH, base, ["members_can_invite": true], bearer: owner.accessToken).status == 200)
        try await client.send(.PATCH, base, ["name": "Renamed"], bearer: child.accessToken)  // a member: 403
        #expect(try await client.send(.PATCH, "\(base)/members/me", ["share_email": true], bearer: child.accessToken).status == 200)
        #expect(try await client.send(.PATCH, "\(base)/members/\(child.userID)", ["role": "viewer"],
                                      bearer: owner.accessToken).status == 200)
        try await client.send(.PATCH, "\(base)/members/\(child.userID)", ["role": "owner"], bearer: owner.accessToken)

        #expect(try await client.send(.PUT, "\(base)/data/list/milk", ["data": ["qty": 1]], bearer: owner.accessToken).status == 200)
        try await client.send(.PUT, "\(base)/data/list/milk", ["data": ["qty": 2]], bearer: owner.accessToken,
                              headers: ["If-Match": "\"9\""])
        try await client.send(.PUT, "\(base)/data/list/eggs", ["data": [:]], bearer: child.accessToken)  // a viewer: 403
        #expect(try await client.send(.GET, "\(base)/data/list/milk", bearer: child.accessToken).status == 200)
        #expect(try await client.send(.GET, "\(base)/data/list?limit=5", bearer: child.accessToken).status == 200)
        let malformed = try await client.send(.DELETE, "\(base)/data/list/milk", bearer: owner.accessToken,
                                              headers: ["If-Match": "not-a-version"])
        #expect(malformed.status == 400)
        #expect(try await client.send(.DELETE, "\(base)/data/list/milk", bearer: owner.accessToken).status == 200)
        try await client.send(.DELETE, "\(base)/data/list/milk", bearer: owner.accessToken)
        #expect(try await client.send(.PUT, "\(base)/policies/list", ["write": "author"], bearer: owner.accessToken).status == 200)
        try await client.send(.PUT, "\(base)/policies/list", ["write": "everyone"], bearer: owner.accessToken)
        #expect(try await client.send(.GET, "\(base)/policies/list", bearer: child.accessToken).status == 200)

        _ = try await server.request(.PUT, "/v1/data/places/home", json: ["data": ["city": "Oslo"]], bearer: child.accessToken)
        #expect(try await client.send(.PUT, "\(base)/shares/places", bearer: child.accessToken).status == 200)
        #expect(try await client.send(.GET, "\(base)/shares", bearer: owner.accessToken).status == 200)
        let shared = "\(base)/members/\(child.userID)/data/places"
        #expect(try await client.send(.GET, "\(shared)/home", bearer: owner.accessToken).status == 200)
        #expect(try await client.send(.GET, shared, bearer: owner.accessToken).status == 200)
        #expect(try await client.send(.DELETE, "\(base)/shares/places", bearer: child.accessToken).status == 204)
        try await client.send(.GET, "\(shared)/home", bearer: owner.accessToken)

        try await client.send(.POST, "\(base)/leave", bearer: owner.accessToken)  // the owner: 409
        #expect(try await client.send(.POST, "\(base)/transfer", ["user_id": child.userID], bearer: owner.accessToken).status == 200)
        try await client.send(.POST, "\(base)/transfer", ["user_id": owner.userID], bearer: owner.accessToken)  // now an admin: 403
        #expect(try await client.send(.POST, "\(base)/leave", bearer: owner.accessToken).status == 204)
        let second = try await client.send(.POST, "/v1/groups", ["name": "Second"], bearer: owner.accessToken)
        let secondID = try #require(second.json["id"] as? String)
        let secondCode = try #require(try await client.send(.POST, "/v1/groups/\(secondID)/invites", bearer: owner.accessToken)
            .json["code"] as? String)
        #expect(try await client.send(.POST, "/v1/invites/\(secondCode)/accept", bearer: child.accessToken).status == 200)
        #expect(try await client.send(.DELETE, "/v1/groups/\(secondID)/members/\(child.userID)",
                                      bearer: owner.accessToken).status == 204)
        try await client.send(.DELETE, "/v1/groups/\(secondID)/members/\(owner.userID)", bearer: owner.accessToken)
        #expect(try await client.send(.DELETE, "/v1/groups/\(secondID)", bearer: owner.accessToken).status == 204)
    }

    static func merges(_ client: CheckedClient) async throws {
        let server = client.server
        let kept = try await server.signIn(.apple, sub: "merge-kept")
        _ = try await server.request(.PUT, "/v1/data/notes/a", json: ["data": ["t": 1]], bearer: kept.accessToken)
        let absorbed = try await server.signIn(.google, sub: "merge-absorbed")
        _ = try await server.request(.PUT, "/v1/data/notes/a", json: ["data": ["t": 2]], bearer: absorbed.accessToken)
        let challenge = try await client.send(.POST, "/v1/users/me/merge/challenge", bearer: kept.accessToken)
        let nonce = try #require(challenge.json["nonce"] as? String)
        let proof = ["provider": "google", "id_token": try server.idToken(.google, sub: "merge-absorbed", nonce: nonce)]
        #expect(try await client.send(.POST, "/v1/users/me/merge", ["proof": proof, "dry_run": true],
                                      bearer: kept.accessToken).status == 200)
        try await client.send(.POST, "/v1/users/me/merge", ["proof": ["provider": "google"]], bearer: kept.accessToken)
        let merged = try await client.send(.POST, "/v1/users/me/merge", ["proof": proof, "keep": "other"],
                                           bearer: kept.accessToken, headers: ["Idempotency-Key": "k1"])
        #expect(merged.status == 200)
        let mergeID = try #require(merged.json["merge_id"] as? String)
        try await client.send(.GET, "/v1/users/me", bearer: kept.accessToken)  // 401 ACCOUNT_MERGED
        let adopted = try #require((merged.json["session"] as? [String: Any])?["access_token"] as? String)
        #expect(try await client.send(.GET, "/v1/users/me/merges/\(mergeID)", bearer: adopted).status == 200)
        try await client.send(.GET, "/v1/users/me/merges/none", bearer: adopted)
        try await client.send(.POST, "/v1/users/me/merge/challenge", bearer: adopted)
        let other = try await server.signIn(.apple, sub: "merge-other")
        try await client.send(.POST, "/v1/users/me/merge", ["proof": proof], bearer: other.accessToken)  // 401 nonce
    }

    /// Switching day (reference section 24): the admin API's import, the bridge's crossing and refusals, undo.
    static func switchingDay(_ client: CheckedClient) async throws {
        let key = AdminTests.key
        let lines = """
            {"legacy_id": "fb-ada", "legacy_source": "firebase", "display_name": "Ada", "identities": [{"provider": "apple", "subject": "001.switching.ada"}]}
            {"legacy_id": "fb-guest", "legacy_source": "firebase", "anonymous": true, "identities": []}
            {"legacy_id": "fb-bad", "legacy_source": "firebase", "identities": [{"provider": "github", "subject": "1"}], "colour": 1}
            """
        #expect(try await client.send(.POST, "/v1/admin/imports?dry_run=true", rawBody: lines, bearer: key).status == 200)
        let imported = try await client.send(.POST, "/v1/admin/imports", rawBody: lines, bearer: key)
        #expect(imported.status == 201)
        let batch = try #require(imported.json["batch_id"] as? String)
        #expect(try await client.send(.GET, "/v1/admin/imports", bearer: key).status == 200)
        #expect(try await client.send(.GET, "/v1/admin/imports/\(batch)", bearer: key).status == 200)
        #expect(try await client.send(.GET, "/v1/admin/users?legacy_id=fb-ada", bearer: key).status == 200)
        let server = client.server
        let ada = try server.legacyToken(.firebase, LegacyMintRequest(sub: "fb-ada", identities: ["apple.com": ["001.switching.ada"]]))
        let crossed = try await client.send(.POST, "/v1/auth/migrate/firebase", ["id_token": ada])
        #expect(crossed.status == 200)
        #expect(try await client.send(.GET, "/v1/users/me", bearer: try client.session(crossed).accessToken).json["legacy_id"] as? String == "fb-ada")
        let stranger = try server.legacyToken(.firebase, LegacyMintRequest(sub: "fb-other", identities: ["apple.com": ["001.switching.ada"]]))
        #expect(try await client.send(.POST, "/v1/auth/migrate/firebase", ["id_token": stranger]).status == 409)
        let unknown = try server.legacyToken(.supabase, LegacyMintRequest(sub: UUID().uuidString))
        #expect(try await client.send(.POST, "/v1/auth/migrate/supabase", ["access_token": unknown]).status == 404)
        #expect(try await client.send(.POST, "/v1/auth/migrate/clerk", ["session_token": "x.y.z"]).status == 401)
        #expect(try await client.send(.POST, "/v1/auth/migrate/auth0", ["id_token": "x"]).status == 400)
        #expect(try await client.send(.POST, "/v1/admin/imports/\(batch)/undo", bearer: key).status == 409)
        #expect(try await client.send(.POST, "/v1/admin/imports/\(batch)/undo?force=true", bearer: key).status == 200)
    }

    static func administration(_ client: CheckedClient) async throws {
        let linus = try await client.server.signIn(.google, sub: "linus")
        let second = try await client.server.signIn(.google, sub: "linus")
        let key = AdminTests.key
        #expect(try await client.send(.GET, "/v1/admin/users?limit=5", bearer: key).status == 200)
        try await client.send(.GET, "/v1/admin/users", bearer: "wrong")
        #expect(try await client.send(.GET, "/v1/admin/users/\(linus.userID)", bearer: key).status == 200)
        try await client.send(.GET, "/v1/admin/users/nobody", bearer: key)
        #expect(try await client.send(.PATCH, "/v1/admin/users/\(linus.userID)", ["display_name": "Linus"], bearer: key).status == 200)
        try await client.send(.PATCH, "/v1/admin/users/\(linus.userID)", ["disabled": "yes"], bearer: key)
        // A disabled account: its bearer, its sign-in and its refresh are refused with ACCOUNT_DISABLED.
        #expect(try await client.send(.PATCH, "/v1/admin/users/\(linus.userID)", ["disabled": true], bearer: key).status == 200)
        #expect(try await client.send(.GET, "/v1/users/me", bearer: second.accessToken).status == 403)
        try await client.send(.POST, "/v1/auth/signin/google", ["id_token": try client.server.idToken(.google, sub: "linus")])
        try await client.send(.POST, "/v1/auth/refresh", ["refresh_token": second.refreshToken])
        #expect(try await client.send(.PATCH, "/v1/admin/users/\(linus.userID)", ["disabled": false], bearer: key).status == 200)
        let third = try await client.server.signIn(.google, sub: "linus")
        #expect(try await client.send(.DELETE, "/v1/admin/users/\(linus.userID)/sessions/\(try Self.sessionID(third))", bearer: key).status == 204)
        #expect(try await client.send(.POST, "/v1/admin/users/\(linus.userID)/signout", bearer: key).status == 200)
        #expect(try await client.send(.GET, "/v1/admin/audit?limit=20", bearer: key).status == 200)
        #expect(try await client.send(.GET, "/v1/admin/stats", bearer: key).status == 200)
        #expect(try await client.send(.GET, "/v1/admin/providers", bearer: key).status == 200)
        let founder = try await client.server.signIn(.apple, sub: "founder")
        let family = try await client.server.post("/v1/groups", ["name": "Admin's view"], bearer: founder.accessToken)
        let familyID = try #require(family.json["id"] as? String)
        #expect(try await client.send(.GET, "/v1/admin/groups?query=view", bearer: key).status == 200)
        #expect(try await client.send(.GET, "/v1/admin/groups/\(familyID)", bearer: key).status == 200)
        try await client.send(.GET, "/v1/admin/groups/none", bearer: key)
        #expect(try await client.send(.DELETE, "/v1/admin/groups/\(familyID)", bearer: key).status == 204)
        let survivor = try await client.server.signIn(.apple, sub: "admin-merge-into")
        let absorbed = try await client.server.signIn(.google, sub: "admin-merge-from")
        let merged = try await client.send(.POST, "/v1/admin/merges", ["into": survivor.userID, "from": absorbed.userID], bearer: key)
        let adminMergeID = try #require(merged.json["merge_id"] as? String)
        try await client.send(.POST, "/v1/admin/merges", ["into": survivor.userID, "from": absorbed.userID], bearer: key)
        try await client.send(.POST, "/v1/admin/merges", ["into": survivor.userID], bearer: key)
        #expect(try await client.send(.GET, "/v1/admin/merges?user_id=\(survivor.userID)", bearer: key).status == 200)
        #expect(try await client.send(.POST, "/v1/admin/merges/\(adminMergeID)/revert", bearer: key).status == 200)
        try await client.send(.POST, "/v1/admin/merges/\(adminMergeID)/revert", bearer: key)
        #expect(try await client.send(.DELETE, "/v1/admin/users/\(linus.userID)", bearer: key).status == 204)
    }

    static func goTrue(_ client: CheckedClient) async throws {
        let server = client.server
        server.clock.advance(by: 3601)  // past the hour whose guests' limit the story reached
        for path in ["/auth/v1/settings", "/auth/v1/health", "/auth/v1/.well-known/jwks.json"] {
            #expect(try await client.send(.GET, path).status == 200, "\(path)")
        }
        let guest = try await client.send(.POST, "/auth/v1/signup", ["data": ["plan": "free"]])
        let guestToken = try #require(guest.json["access_token"] as? String)
        let signedIn = try await client.send(.POST, "/auth/v1/token?grant_type=id_token",
                                             ["provider": "google", "id_token": try server.idToken(.google, sub: "mia")],
                                             bearer: guestToken)
        let token = try #require(signedIn.json["access_token"] as? String)
        let refreshToken = try #require(signedIn.json["refresh_token"] as? String)
        try await client.send(.POST, "/auth/v1/token?grant_type=password", ["email": "a@example.com", "password": "x"])
        let linked = try await client.send(.POST, "/auth/v1/token?grant_type=id_token",
                                           ["provider": "apple", "id_token": try server.idToken(.apple, sub: "mia-a"),
                                            "link_identity": true], bearer: token)
        let linkedToken = try #require(linked.json["access_token"] as? String)
        #expect(try await client.send(.GET, "/auth/v1/user", bearer: linkedToken).status == 200)
        try await client.send(.GET, "/auth/v1/user")
        #expect(try await client.send(.PUT, "/auth/v1/user", ["data": ["plan": "pro"]], bearer: linkedToken).status == 200)
        let identities = try await client.send(.GET, "/auth/v1/user/identities", bearer: linkedToken)
        let apple = try #require((identities.json["identities"] as? [[String: Any]])?.first { $0["provider"] as? String == "apple" })
        let appleID = try #require(apple["identity_id"] as? String ?? apple["id"] as? String)
        #expect(try await client.send(.DELETE, "/auth/v1/user/identities/\(appleID)", bearer: linkedToken).status == 200)
        try await client.send(.DELETE, "/auth/v1/user/identities/nothing", bearer: linkedToken)
        try await client.send(.POST, "/auth/v1/token?grant_type=refresh_token", ["refresh_token": refreshToken])
        #expect(try await client.send(.POST, "/auth/v1/logout", bearer: linkedToken).status == 204)
    }

    /// Redirect sign-in (reference section 23): both starts, both callbacks (a query and Apple's form_post), the
    /// exchange for a session and for a link, GoTrue's PKCE flow, and the refusals a browser or an app sees.
    static func redirects(_ client: CheckedClient) async throws {
        let server = client.server
        let app = "http://127.0.0.1:9/app"  // dev mode lets a loopback page be the target
        let browser = RedirectBrowser(server)
        func field(_ url: String?, _ name: String) -> String? {
            url.flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == name }?.value }
        }
        /// The provider's page answered and its way back taken: where the browser lands.
        func pickAndReturn(_ page: String, sub: String) async throws -> TestResponse {
            let components = try #require(URLComponents(string: page))
            let kept = ["client_id", "redirect_uri", "state", "nonce", "response_mode", "scope"].map { ($0, field(page, $0) ?? "") }
            let answer = try await client.navigate(.POST, page, form: kept + [("sub", sub), ("email", "\(sub)@example.com")])
            if answer.status == 302 { return try await client.navigate(.GET, try #require(answer.location)) }
            #expect(components.path.contains("apple"))
            let form = try RedirectBrowser.autoSubmittedForm(answer.text)
            return try await client.navigate(.POST, form.action, form: form.fields)
        }
        let query = TestHTTP.formEncoded([("redirect_uri", app), ("code_challenge", browser.challenge),
                                          ("code_challenge_method", "S256"), ("state", "s")])
        #expect(try await client.navigate(.GET, "/v1/auth/authorize/google?redirect_uri=https://evil.example&code_challenge=x").status == 400)
        let started = try await client.navigate(.GET, "/v1/auth/authorize/google?" + query)
        #expect(started.status == 302)
        try await client.navigate(.GET, try #require(started.location))
        let back = try await pickAndReturn(try #require(started.location), sub: "redirected")
        let code = try #require(field(back.location, "code"))
        let signedIn = try await client.send(.POST, "/v1/auth/token", ["grant_type": "authorization_code", "code": code,
                                                                     "code_verifier": browser.verifier, "redirect_uri": app])
        let session = try client.session(signedIn)
        #expect(try await client.send(.POST, "/v1/auth/token", ["grant_type": "authorization_code", "code": code,
                                                              "code_verifier": browser.verifier, "redirect_uri": app])
            .errorReason == "used")
        try await client.send(.POST, "/v1/auth/token", ["grant_type": "password"])
        try await client.navigate(.GET, "/v1/auth/callback/google?state=forged&code=x")
        try await client.navigate(.POST, "/v1/auth/callback/apple", form: [("state", "forged"), ("code", "x")])
        try await client.navigate(.POST, "/v1/auth/callback/apple", form: [("code", "x")])

        // An app opens the page itself: Apple, by form_post; then a link by a session.
        let apple = RedirectBrowser(server)
        let asked = try await client.send(.POST, "/v1/auth/authorize/apple", ["redirect_uri": app, "code_challenge": apple.challenge])
        let appleBack = try await pickAndReturn(try #require(asked.json["url"] as? String), sub: "redirected-apple")
        #expect(try await client.send(.POST, "/v1/auth/token", ["grant_type": "authorization_code",
                                                              "code": try #require(field(appleBack.location, "code")),
                                                              "code_verifier": apple.verifier, "redirect_uri": app]).status == 200)
        try await client.send(.POST, "/v1/auth/authorize/apple", ["redirect_uri": app, "code_challenge": apple.challenge,
                                                                  "intent": "link"])
        let linker = RedirectBrowser(server)
        let linkAsked = try await client.send(.POST, "/v1/auth/authorize/apple", [
            "redirect_uri": app, "code_challenge": linker.challenge, "intent": "link"], bearer: session.accessToken)
        let linkBack = try await pickAndReturn(try #require(linkAsked.json["url"] as? String), sub: "redirected-link")
        let linked = try await client.send(.POST, "/v1/auth/token", ["grant_type": "authorization_code",
                                                                    "code": try #require(field(linkBack.location, "code")),
                                                                    "code_verifier": linker.verifier, "redirect_uri": app],
                                                        bearer: session.accessToken)
        #expect(linked.json["linked_providers"] as? [String] == ["google", "apple"], "\(linked.text)")

        // GoTrue's PKCE flow.
        let supabase = RedirectBrowser(server)
        #expect(try await client.navigate(.GET, "/auth/v1/authorize?provider=google&redirect_to=\(app)").status == 400)
        let goTrue = try await client.navigate(.GET, "/auth/v1/authorize?" + TestHTTP.formEncoded([
            ("provider", "google"), ("redirect_to", app), ("code_challenge", supabase.challenge), ("code_challenge_method", "s256")]))
        let goTrueBack = try await pickAndReturn(try #require(goTrue.location), sub: "redirected-supabase")
        let exchanged = try await client.send(.POST, "/auth/v1/token?grant_type=pkce", [
            "auth_code": try #require(field(goTrueBack.location, "code")), "code_verifier": supabase.verifier])
        #expect(exchanged.status == 200, "\(exchanged.text)")
        try await client.navigate(.POST, "/auth/v1/callback", form: [("state", "forged"), ("code", "x")])
        try await client.navigate(.GET, "/auth/v1/callback?state=forged")
    }

    /// Passkeys (reference section 19): both ceremonies, refusals, the account's list, an operator's view.
    static func passkeys(_ client: CheckedClient) async throws {
        let server = client.server
        let key = AdminTests.key
        let authenticator = PasskeyTests.authenticator(server)
        let ada = try await server.signIn(.google, sub: "passkey-story")
        let options = try await client.send(.POST, "/v1/auth/passkeys/register/options", bearer: ada.accessToken)
        let creation = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: options.body)
        try await client.send(.POST, "/v1/auth/passkeys/register/options")
        let registered = try await client.send(.POST, "/v1/auth/passkeys/register",
                                               ["credential": try PasskeyTests.json(try authenticator.create(creation)), "name": "Phone"],
                                               bearer: ada.accessToken)
        #expect(registered.status == 201)
        try await client.send(.POST, "/v1/auth/passkeys/register", ["credential": "x"], bearer: ada.accessToken)
        let request = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self,
                                               from: try await client.send(.POST, "/v1/auth/passkeys/signin/options").body)
        let signedIn = try await client.send(.POST, "/v1/auth/passkeys/signin", ["credential": try PasskeyTests.json(try authenticator.get(request))])
        #expect(signedIn.status == 200)
        let refused = try await client.send(.POST, "/v1/auth/passkeys/signin", ["credential": try PasskeyTests.json(try authenticator.get(request))])
        #expect(refused.errorReason == "challenge")
        let listed = try await client.send(.GET, "/v1/users/me/passkeys", bearer: ada.accessToken)
        let id = try #require((listed.json["passkeys"] as? [[String: Any]])?.first?["id"] as? String)
        #expect(try await client.send(.PATCH, "/v1/users/me/passkeys/\(id)", ["name": "Work"], bearer: ada.accessToken).status == 200)
        #expect(try await client.send(.GET, "/v1/admin/users/\(ada.userID)/passkeys", bearer: key).status == 200)
        #expect(try await client.send(.DELETE, "/v1/admin/users/\(ada.userID)/passkeys/unknown", bearer: key).status == 404)
        #expect(try await client.send(.DELETE, "/v1/users/me/passkeys/\(id)", bearer: ada.accessToken).status == 200)
        #expect(try await client.send(.DELETE, "/v1/users/me/passkeys/\(id)", bearer: ada.accessToken).status == 404)
        #expect(try await client.send(.GET, "/.well-known/apple-app-site-association").status == 404)
        #expect(try await client.send(.GET, "/.well-known/assetlinks.json").status == 404)
    }

    /// The email identity (reference section 18): its flow, the link's page, recovery, the deliveries, GoTrue's codes.
    static func email(_ client: CheckedClient) async throws {
        let server = client.server
        let key = AdminTests.key
        let started = try await client.send(.POST, "/v1/auth/email/start", ["email": "story@example.com"])
        #expect(started.status == 202)
        try await client.send(.POST, "/v1/auth/email/start", ["email": "story@example.com\r\nBcc: x@example.com"])
        try await client.send(.POST, "/v1/auth/email/start", ["email": "story@example.com"])  // 429: within the minute
        let flow = try EmailFlowTests.Flow(started)
        let code = try #require(try await EmailFlowTests.mail(server, to: "story@example.com")["code"] as? String)
        try await client.send(.POST, "/v1/auth/email/verify", ["flow_id": flow.id, "flow_secret": flow.secret,
                                                               "code": code == "000000" ? "111111" : "000000"])
        try await client.send(.POST, "/v1/auth/email/verify", ["flow_id": "ef_none", "flow_secret": flow.secret, "code": code])
        let session = try Session(try await client.send(.POST, "/v1/auth/email/verify",
                                                        ["flow_id": flow.id, "flow_secret": flow.secret, "code": code]))

        // The link: looked at, an unreadable form, the right number, then the device finishes; another link ended
        // by a wrong number, whose device then hears so.
        let other = try EmailFlowTests.Flow(try await client.send(.POST, "/v1/auth/email/start", ["email": "link@example.com"]))
        try await client.send(.POST, "/v1/auth/email/complete", ["flow_id": other.id, "flow_secret": other.secret])
        let token = try EmailFlowTests.token(try await EmailFlowTests.mail(server, to: "link@example.com"))
        #expect(try await client.send(.GET, "/e/\(token)").status == 200)
        try await client.send(.GET, "/e/" + String(repeating: "x", count: 43))
        let form = ["Content-Type": "application/x-www-form-urlencoded"]
        client.log.record(.POST, "/e/\(token)", try await server.request(.POST, "/e/\(token)", rawBody: "match=", headers: form))
        let confirmed = try await server.request(.POST, "/e/\(token)", rawBody: "match=\(other.match)", headers: form)
        client.log.record(.POST, "/e/\(token)", confirmed)
        #expect(confirmed.status == 200)
        #expect(try await client.send(.POST, "/v1/auth/email/complete", ["flow_id": other.id, "flow_secret": other.secret,
                                                                        "wait": 1]).status == 200)
        let ended = try EmailFlowTests.Flow(try await client.send(.POST, "/v1/auth/email/start", ["email": "ended@example.com"]))
        let endedToken = try EmailFlowTests.token(try await EmailFlowTests.mail(server, to: "ended@example.com"))
        let wrong = (ended.match == 10 ? 11 : 10)
        let refused = try await server.request(.POST, "/e/\(endedToken)", rawBody: "match=\(wrong)", headers: form)
        client.log.record(.POST, "/e/\(endedToken)", refused)
        #expect(refused.status == 410)
        #expect(try await client.send(.POST, "/v1/auth/email/complete", ["flow_id": ended.id, "flow_secret": ended.secret])
            .errorReason == "link_ended")
        // A link with the account's bearer answers the account's methods.
        let apple = try await server.signIn(.apple, sub: "email-story")
        let linking = try EmailFlowTests.Flow(try await client.send(.POST, "/v1/auth/email/start",
                                                                    ["email": "apple-story@example.com", "intent": "link"],
                                                                    bearer: apple.accessToken))
        let linkCode = try #require(try await EmailFlowTests.mail(server, to: "apple-story@example.com")["code"] as? String)
        #expect(try await client.send(.POST, "/v1/auth/email/verify", ["flow_id": linking.id, "flow_secret": linking.secret,
                                                                      "code": linkCode], bearer: apple.accessToken).status == 200)

        // An operator's recovery code, and the outbox.
        server.clock.advance(by: 61)
        #expect(try await client.send(.POST, "/v1/admin/users/\(session.userID)/recovery", bearer: key).status == 202)
        try await client.send(.POST, "/v1/admin/users/\(try await server.signIn(.google, sub: "no-address").userID)/recovery",
                              bearer: key)
        let recoveryCode = try #require(try await EmailFlowTests.mail(server, to: "story@example.com", count: 2)["code"] as? String)
        try await client.send(.POST, "/v1/auth/email/recover", ["email": "story@example.com",
                                                                "code": recoveryCode == "000000" ? "111111" : "000000"])
        #expect(try await client.send(.POST, "/v1/auth/email/recover", ["email": "story@example.com", "code": recoveryCode])
            .status == 200)
        #expect(try await client.send(.GET, "/v1/admin/email/deliveries?limit=10", bearer: key).status == 200)
        try await client.send(.GET, "/v1/admin/email/deliveries?status=lost", bearer: key)

        // GoTrue's codes.
        #expect(try await client.send(.POST, "/auth/v1/otp", ["email": "gotrue-story@example.com"]).status == 200)
        let gotrueCode = try #require(try await EmailFlowTests.mail(server, to: "gotrue-story@example.com")["code"] as? String)
        try await client.send(.POST, "/auth/v1/verify", ["type": "email", "email": "gotrue-story@example.com",
                                                         "token": gotrueCode == "000000" ? "111111" : "000000"])
        #expect(try await client.send(.POST, "/auth/v1/verify", ["type": "email", "email": "gotrue-story@example.com",
                                                                 "token": gotrueCode]).status == 200)
    }
}
