import Foundation
import Testing

/// Every error, whatever produced it, arrives in the reference's one envelope with a request id.
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

    /// Request bodies are read strictly, and a wrong member is named in `details.field`.
    @Test(arguments: TestDatabase.available)
    func requestBodiesNameTheFieldThatIsWrong(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            func expectField(_ path: String, _ body: String, field: String, message: String,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws {
                let response = try await server.request(.POST, path, rawBody: body)
                expectEnvelope(response, status: 400, code: "INVALID_REQUEST", sourceLocation: sourceLocation)
                #expect(response.errorDetails["field"] as? String == field, sourceLocation: sourceLocation)
                #expect(response.error["message"] as? String == message, sourceLocation: sourceLocation)
            }
            try await expectField("/v1/auth/signin/apple", #"{"id_token": 5}"#, field: "id_token", message: "id_token must be a string")
            try await expectField("/v1/auth/signin/apple", #"{"id_token": null}"#, field: "id_token", message: "id_token is required")
            try await expectField("/v1/auth/signin/apple", #"{"id_token": "x", "nonce": ["n"]}"#, field: "nonce",
                                  message: "nonce must be a string")
            try await expectField("/v1/auth/refresh", #"{"refresh_token": true}"#, field: "refresh_token",
                                  message: "refresh_token must be a string")
            try await expectField("/v1/auth/refresh", "{}", field: "refresh_token", message: "refresh_token is required")
            // Two values for one member could be read differently by two parsers: refused, never guessed.
            try await expectField("/v1/auth/refresh", #"{"refresh_token": "a", "refresh_token": "b"}"#, field: "body",
                                  message: #"The request body is not valid JSON: the name "refresh_token" appears twice at byte 23"#)
            try await expectField("/v1/auth/signin/google", #"{"id_token": "x",}"#, field: "body",
                                  message: "The request body is not valid JSON: expected a name in quotes at byte 17")
            try await expectField("/v1/auth/signin/google", String(repeating: "[", count: 20_000), field: "body",
                                  message: "The request body is not valid JSON: nested too deeply at byte 512")
            try await expectField("/v1/auth/signin/google", #""just a string""#, field: "body",
                                  message: "The request body must be a JSON object")
            // Members a request does not know are ignored, as before.
            let unknown = try await server.request(.POST, "/v1/auth/refresh", rawBody: #"{"refresh_token": "x", "extra": {}}"#)
            #expect(unknown.errorCode == "INVALID_REFRESH_TOKEN")
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
