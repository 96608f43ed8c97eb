import Foundation
import Testing

/// The request log a server writes at the default level (`info`): one line per request with its id, and never a
/// token (reference: secrets never reach a log).
@Suite struct RequestLogTests {
    @Test(arguments: TestDatabase.available)
    func eachRequestIsOneLineWithItsIdAndNoToken(database: TestDatabase) async throws {
        let log = CapturedLog()
        try await TestServer.with(database, logger: log.logger()) { server in
            let idToken = try server.idToken(.apple, sub: "logged", email: "logged@example.com")
            let signIn = try await server.post("/v1/auth/signin/apple", ["id_token": idToken])
            let session = try Session(signIn)
            let refreshed = try await server.refresh(session.refreshToken)
            let successor = try Session(refreshed)
            let me = try await server.get("/v1/users/me", bearer: successor.accessToken)
            let refused = try await server.refresh(session.refreshToken + "x")
            let statuses: [Int] = [signIn.status, refreshed.status, me.status, refused.status]
            #expect(statuses == [200, 200, 200, 401])

            let lines = log.lines.filter { $0.contains(" request_id=") }
            for (answer, route, status) in [(signIn, "/v1/auth/signin/{provider}", 200), (refreshed, "/v1/auth/refresh", 200),
                                            (me, "/v1/users/me", 200), (refused, "/v1/auth/refresh", 401)] {
                let id = try #require(answer.headers.first(name: "X-Request-Id"))
                let mine = lines.filter { $0.contains("request_id=\(id) ") }
                #expect(mine.count == 1, "one line for request \(id)")
                #expect(mine.first?.contains(" route=\(route) ") == true)
                #expect(mine.first?.contains(" status=\(status) ") == true)
            }
            let secrets = [idToken, session.accessToken, session.refreshToken, successor.accessToken, successor.refreshToken]
                + idToken.split(separator: ".").map(String.init)
            for line in log.lines {
                for secret in secrets { #expect(!line.contains(secret), "a token in the log: \(line)") }
            }
        }
    }

    /// The admin key, right or wrong, and the GoTrue `apikey` never reach the log, whatever the answer.
    @Test func adminAndAPIKeysNeverReachTheLog() async throws {
        let log = CapturedLog()
        let adminKey = "admin-key-\(UUID().uuidString)", anonKey = "anon-key-\(UUID().uuidString)"
        try await TestServer.with(.sqlite, configure: {
            $0.adminKey = adminKey
            $0.gotrueAnonKey = anonKey
        }, logger: log.logger()) { server async throws in
            #expect(try await server.get("/v1/admin/users", bearer: adminKey).status == 200)
            #expect(try await server.get("/v1/admin/stats", bearer: adminKey + "-wrong").status == 403)
            #expect(try await server.post("/auth/v1/signup", headers: ["apikey": anonKey]).status == 200)
            #expect(try await server.post("/auth/v1/signup", headers: ["apikey": anonKey + "-wrong"]).status == 401)
            #expect(log.lines.contains { $0.contains("/v1/admin/") })
            for line in log.lines {
                #expect(!line.contains(adminKey) && !line.contains(anonKey), "a key in the log: \(line)")
            }
        }
    }
}
