import Foundation
import Testing

/// Every error, whatever produced it, arrives in DESIGN's one envelope with a request id.
@Suite struct ErrorShapeTests {
    func expectEnvelope(_ response: TestResponse, status: Int, code: String,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.errorCode == code, sourceLocation: sourceLocation)
        #expect((response.error["message"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect((response.error["request_id"] as? String)?.count == 24, sourceLocation: sourceLocation)
        #expect(response.error["details"] is [String: Any], sourceLocation: sourceLocation)
    }

    @Test(arguments: TestDatabase.available)
    func badRequestsGetTheEnvelopeNeverA500(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            expectEnvelope(try await server.get("/v1/nothing-here"), status: 404, code: "NOT_FOUND")
            expectEnvelope(try await server.request(.PUT, "/v1/auth/refresh"), status: 404, code: "NOT_FOUND")
            expectEnvelope(try await server.request(.POST, "/v1/auth/signin/apple", rawBody: "{\"id_token\": "),
                           status: 400, code: "INVALID_REQUEST")
            expectEnvelope(try await server.request(.POST, "/v1/auth/signin/apple", rawBody: "[1, 2]"),
                           status: 400, code: "INVALID_REQUEST")
            let missing = try await server.post("/v1/auth/signin/apple", ["nonce": "x"])
            expectEnvelope(missing, status: 400, code: "INVALID_REQUEST")
            #expect(missing.errorDetails["field"] as? String == "id_token")
            let empty = try await server.post("/v1/auth/signin/apple", ["id_token": ""])
            #expect(empty.errorDetails["field"] as? String == "id_token")
            expectEnvelope(try await server.request(.POST, "/v1/auth/signin/apple",
                                                    rawBody: "{\"id_token\": \"" + String(repeating: "a", count: 70_000) + "\"}"),
                           status: 413, code: "PAYLOAD_TOO_LARGE")
            expectEnvelope(try await server.post("/v1/auth/signin/facebook", ["id_token": "x"]),
                           status: 400, code: "UNSUPPORTED_PROVIDER")
            expectEnvelope(try await server.get("/v1/users/me"), status: 401, code: "UNAUTHORIZED")
            expectEnvelope(try await server.request(.GET, "/v1/users/me", headers: ["Authorization": "Basic abc"]),
                           status: 401, code: "UNAUTHORIZED")
            expectEnvelope(try await server.get("/v1/users/me", bearer: "garbage"), status: 401, code: "UNAUTHORIZED")
            expectEnvelope(try await server.request(.POST, "/v1/auth/refresh", rawBody: "\u{00}\u{01}binary"),
                           status: 400, code: "INVALID_REQUEST")
            expectEnvelope(try await server.post("/v1/auth/signin/apple", ["id_token": String(repeating: "x.", count: 8000)]),
                           status: 401, code: "INVALID_PROVIDER_TOKEN")
        }
    }

    @Test(arguments: TestDatabase.available)
    func expiredAndForeignAccessTokensAreUnauthorized(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.apple, sub: "expiring")
            server.clock.advance(by: 901)
            let expired = try await server.get("/v1/users/me", bearer: session.accessToken)
            #expect(expired.errorCode == "UNAUTHORIZED")
            #expect(expired.headers.first(name: "WWW-Authenticate") == "Bearer")
            // A token signed by another Lanyard (another key) is refused.
            try await TestServer.with(database) { other in
                let foreign = try await other.signIn(.apple, sub: "expiring")
                #expect(try await server.get("/v1/users/me", bearer: foreign.accessToken).errorCode == "UNAUTHORIZED")
            }
        }
    }
}
