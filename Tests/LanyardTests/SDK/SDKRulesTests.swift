import Foundation
@testable import Lanyard
import Testing

/// The SDK's pure rules: how each code of the server's catalogue maps to a typed error, the nonce helper.
@Suite struct SDKRulesTests {
    static func envelope(_ code: String, details: String = "{}") -> Data {
        Data(#"{"error": {"code": "\#(code)", "message": "server says", "details": \#(details), "request_id": "r"}}"#.utf8)
    }

    /// Every code of reference section 3's catalogue, with the case it must become.
    static let catalogue: [(String, Int, String, LanyardError)] = [
        ("INVALID_REQUEST", 400, #"{"field": "id_token"}"#, .invalidRequest(field: "id_token", message: "server says")),
        ("PAYLOAD_TOO_LARGE", 413, "{}", .payloadTooLarge),
        ("UNSUPPORTED_PROVIDER", 400, #"{"provider": "github"}"#, .unsupportedProvider(Provider(rawValue: "github"))),
        ("INVALID_PROVIDER_TOKEN", 401, #"{"reason": "audience"}"#, .invalidProviderToken(reason: "audience")),
        ("PROVIDER_UNAVAILABLE", 503, "{}", .providerUnavailable),
        ("UNAUTHORIZED", 401, "{}", .unauthorized),
        ("INVALID_REFRESH_TOKEN", 401, "{}", .invalidRefreshToken),
        ("REFRESH_TOKEN_REUSED", 401, "{}", .refreshTokenReused),
        ("PROVIDER_CONFLICT", 409, #"{"reason": "identity_in_use", "merge_available": true}"#,
         .providerConflict(reason: .identityInUse, mergeAvailable: true)),
        ("CANNOT_UNLINK_ONLY_PROVIDER", 400, "{}", .cannotUnlinkOnlyProvider),
        ("PROVIDER_NOT_LINKED", 404, #"{"provider": "google"}"#, .providerNotLinked(.google)),
        ("REAUTHENTICATION_REQUIRED", 401, "{}", .reauthenticationRequired),
        ("RATE_LIMITED", 429, #"{"retry_after": 42}"#, .rateLimited(retryAfter: 42)),
        ("NOT_FOUND", 404, "{}", .notFound),
        ("FORBIDDEN", 403, "{}", .forbidden),
        ("FORBIDDEN", 403, #"{"reason": "identity_not_on_account"}"#, .identityNotOnAccount),
        ("VERSION_CONFLICT", 412, #"{"current_version": 3}"#, .versionConflict(currentVersion: 3)),
        ("ACCOUNT_DISABLED", 403, "{}", .accountDisabled),
        ("ACCOUNT_DISABLED", 403, #"{"reason": "other_account"}"#, .otherAccountDisabled),
        ("MERGE_CONFLICT", 409, #"{"reason": "reverted"}"#, .mergeConflict(reason: "reverted", mergedInto: nil, providers: [])),
        ("INVALID_REDIRECT_URI", 400, "{}", .invalidRedirectURI),
        ("INVALID_GRANT", 400, #"{"reason": "verifier"}"#, .invalidGrant(reason: "verifier")),
        ("SERVICE_UNAVAILABLE", 503, "{}", .serviceUnavailable(retryAfter: nil)),
        ("INTERNAL_ERROR", 500, "{}", .server(status: 500, code: "INTERNAL_ERROR", message: "server says")),
    ]

    @Test(arguments: catalogue.indices)
    func everyCatalogueCodeMapsToItsCase(index: Int) {
        let (code, status, details, expected) = Self.catalogue[index]
        let error = LanyardError.decode(status: status, body: Self.envelope(code, details: details), headers: [:])
        #expect(error == expected)
        #expect(error?.errorDescription?.isEmpty == false)
    }

    @Test func theCatalogueTableCoversEveryCodeOfTheServer() {
        // The server's catalogue (LanyardCore) must not grow a code the SDK does not map to its own case.
        let mapped = Set(Self.catalogue.map(\.0))
        for code in Self.serverCodes { #expect(mapped.contains(code), "\(code) has no case in the SDK") }
    }

    static let serverCodes = ["INVALID_REQUEST", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_PROVIDER", "INVALID_PROVIDER_TOKEN",
                              "PROVIDER_UNAVAILABLE", "UNAUTHORIZED", "INVALID_REFRESH_TOKEN", "REFRESH_TOKEN_REUSED",
                              "PROVIDER_CONFLICT", "CANNOT_UNLINK_ONLY_PROVIDER", "PROVIDER_NOT_LINKED",
                              "REAUTHENTICATION_REQUIRED", "RATE_LIMITED", "NOT_FOUND", "FORBIDDEN", "VERSION_CONFLICT",
                              "ACCOUNT_DISABLED", "SERVICE_UNAVAILABLE", "INTERNAL_ERROR"]

    @Test func retryAfterHeaderWinsAndUnknownAnswersAreNamed() {
        let limited = LanyardError.decode(status: 503, body: Self.envelope("SERVICE_UNAVAILABLE"), headers: ["Retry-After": "2"])
        #expect(limited == .serviceUnavailable(retryAfter: 2))
        #expect(LanyardError.decode(status: 502, body: Data("<html>bad gateway</html>".utf8), headers: [:])
            == .invalidResponse(status: 502))
        #expect(LanyardError.decode(status: 418, body: Self.envelope("TEAPOT"), headers: [:])
            == .server(status: 418, code: "TEAPOT", message: "server says"))
        #expect(LanyardError.decode(status: 204, body: Data(), headers: [:]) == nil)
    }

    /// The OAuth `error` a redirect brings back to the app, as the web and Kotlin SDKs read it.
    @Test func aRedirectsErrorMapsToTheCaseTheOtherSDKsThrow() throws {
        func refusal(_ query: String) throws -> LanyardError? {
            let url = try #require(URL(string: "com.example.app:/callback?state=s&" + query))
            return try #require(RedirectAnswer(url)).refusal
        }
        #expect(try refusal("error=access_denied") == .signInCancelled)
        #expect(try refusal("error=user_cancelled_authorize") == .signInCancelled)
        #expect(try refusal("error=access_denied&error_description=audience") == .invalidProviderToken(reason: "audience"))
        #expect(try refusal("error=temporarily_unavailable&error_description=token%20endpoint%20down") == .providerUnavailable)
        #expect(try refusal("error=server_error") == .providerUnavailable)
        #expect(try refusal("error=invalid_scope&error_description=no%20such%20scope")
            == .invalidRequest(field: nil, message: "no such scope"))
        #expect(try refusal("error=unauthorized_client") == .invalidRequest(field: nil, message: "The provider refused the sign-in (unauthorized_client)."))
        #expect(try refusal("code=c0de") == nil)
        // An address with neither a code nor an error carries no answer.
        #expect(RedirectAnswer(URL(string: "com.example.app:/callback?state=s")!) == nil)
        #expect(LanyardError.signInCancelled.errorDescription == "The sign-in was cancelled.")
    }

    @Test func pkcesChallengeIsTheBase64URLSHA256OfTheVerifier() {
        // RFC 7636, appendix B.
        #expect(PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let verifiers = (0..<100).map { _ in PKCE.randomToken(bytes: 32) }
        #expect(Set(verifiers).count == 100 && verifiers.allSatisfy { $0.count == 43 && !$0.contains("=") })
    }

    @Test func appleNonceHashIsTheSHA256HexOfTheRawValue() {
        // FIPS 180-4 examples.
        #expect(AppleNonce(raw: "abc").hashed == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(AppleNonce(raw: "").hashed == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(AppleNonce(raw: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").hashed
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(AppleNonce(raw: String(repeating: "a", count: 1000)).hashed
            == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
        let nonces = (0..<100).map { _ in AppleNonce() }
        #expect(Set(nonces.map(\.raw)).count == 100)
        #expect(nonces.allSatisfy { $0.raw.count == 32 })
    }

    @Test func theSessionIDIsReadFromTheAccessToken() {
        let claims = Data(#"{"sid":"0192-abc","sub":"u"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let session = StoredSession(accessToken: "e30.\(claims).sig", refreshToken: "r", expiresAt: Date(),
                                    user: User(id: "u", createdAt: Date(), isAnonymous: true))
        #expect(session.sessionID == "0192-abc")
    }
}

/// The SDK's reading of Server-Sent Events, fed as the network delivers them.
@Suite struct ServerSentEventParserTests {
    @Test func eventsAreSplitOnBlankLinesWhateverTheChunksAndLineEnds() {
        var parser = ServerSentEventParser()
        let stream = "retry: 2000\r\n: a comment\r\n\r\nevent: change\nid: 7\ndata: {\"a\":\ndata: 1}\n\nevent: ready\ndata: {}\n\n"
        var events: [ServerSentEvent] = []
        for byte in Array(stream.utf8) { events += parser.feed([byte]) }
        #expect(events == [ServerSentEvent(name: "change", id: "7", data: "{\"a\":\n1}"),
                           ServerSentEvent(name: "ready", id: nil, data: "{}")])
        #expect(parser.feed(Array("event: end\ndata: {\"reason\":\"shutdown\"}".utf8)).isEmpty)
        #expect(parser.feed(Array("\n\n".utf8)).map(\.name) == ["end"])
    }

    /// A line that never ends is not a stream this parser reads: the connection says so rather than keep growing.
    @Test func aLineWithoutEndIsBoundedNotBuffered() {
        var parser = ServerSentEventParser()
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<4 { #expect(parser.feed(chunk).isEmpty) }
        #expect(!parser.isOverlong)
        _ = parser.feed(chunk)
        #expect(parser.isOverlong)
    }

    @Test func readAccessTakenAwayBecomesARemoval() throws {
        let event = ServerSentEvent(name: "access_removed", id: "3~g.g1.7", data: #"{"group_id":"g1","collection":"secrets"}"#)
        let removal = try #require(LiveChange(removal: event))
        #expect(removal.kind == .accessRemoved && removal.groupID == "g1" && removal.collection == "secrets")
    }

    @Test func aChangeEventBecomesALiveChange() throws {
        let event = ServerSentEvent(name: "change", id: "12", data: """
            {"collection":"notes","id":"n1","version":3,"updated_at":"2026-11-26T08:00:00.123Z","deleted":false,\
            "data":{"text":"hi"},"group_id":null,"shared_by":null}
            """)
        let change = try #require(LiveChange(event: event))
        #expect(change.cursor == "12" && change.collection == "notes" && change.version == 3 && !change.isDeleted)
        #expect(try change.value(as: [String: String].self) == ["text": "hi"])
        #expect(LiveChange(event: ServerSentEvent(name: "ready", id: nil, data: "{}")) == nil)
    }
}
