import Foundation
@testable import LanyardCore
@testable import LanyardServer
import LanyardSupport
import Testing

/// The GoTrue surface's pure rules: error names, metadata merging, Supabase-style claims.
@Suite struct GoTrueRulesTests {
    @Test func everyCatalogueCodeHasAGoTrueName() {
        let expected: [(LanyardError.Code, String, Int)] = [
            (.invalidRequest, "validation_failed", 400), (.payloadTooLarge, "request_too_large", 413),
            (.unsupportedProvider, "provider_disabled", 400), (.invalidProviderToken, "bad_id_token", 400),
            (.providerUnavailable, "provider_unavailable", 503), (.unauthorized, "bad_jwt", 403),
            (.invalidRefreshToken, "refresh_token_not_found", 400),
            (.refreshTokenReused, "refresh_token_already_used", 400),
            (.providerConflict, "identity_already_exists", 422),
            (.cannotUnlinkOnlyProvider, "single_identity_not_deletable", 422),
            (.providerNotLinked, "identity_not_found", 404), (.reauthenticationRequired, "reauthentication_needed", 401),
            (.rateLimited, "over_request_rate_limit", 429), (.notFound, "not_found", 404), (.forbidden, "forbidden", 403),
            (.versionConflict, "version_conflict", 412), (.accountDisabled, "user_banned", 403),
            (.internalError, "unexpected_failure", 500), (.serviceUnavailable, "service_unavailable", 503),
        ]
        for (code, name, status) in expected {
            let goTrue = GoTrueError.from(LanyardError(code, "m"), hadAuthorization: true)
            #expect(goTrue.code == name, "\(code)")
            #expect(goTrue.status == status, "\(code)")
        }
        #expect(GoTrueError.from(.unauthorized, hadAuthorization: false).code == "no_authorization")
        #expect(GoTrueError.from(.sessionEnded, hadAuthorization: true).code == "session_not_found")
        #expect(GoTrueError.from(.sessionEnded, hadAuthorization: true).status == 403)
        #expect(GoTrueError.from(.providerAlreadyLinked("Apple"), hadAuthorization: true).code == "provider_already_linked")
        #expect(GoTrueError.from(.rateLimited(retryAfter: 7), hadAuthorization: true).retryAfter == 7)
        #expect(GoTrueError.from(.serviceUnavailable, hadAuthorization: true).retryAfter == 2)
    }

    @Test func metadataMergesKeyByKeyAndNullRemoves() throws {
        let merged = UserMetadata.merged(["a": 1, "b": "x"], with: ["b": .null, "c": true])
        #expect(merged == ["a": 1, "c": true])
        #expect(try UserMetadata.encoded(["b": 2, "a": 1]) == #"{"a":1,"b":2}"#)
        #expect(throws: LanyardError.self) { try UserMetadata.encoded(["x": .string(String(repeating: "y", count: 16_400))]) }
    }

    @Test func supabaseStyleClaimsReadBackAsTheSameClaims() throws {
        let claims = AccessTokenClaims(iss: "i", sub: "s", aud: "authenticated", exp: 2, iat: 1, jti: "j", sid: "sid",
                                       auth_time: 1, amr: ["apple"], is_anonymous: false, role: "authenticated",
                                       style: .supabase)
        let text = String(decoding: JSONWriter.write(claims), as: UTF8.self)
        #expect(text.contains(#""session_id":"sid""#))
        #expect(text.contains(#""amr":[{"method":"apple","timestamp":1}]"#))
        #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: Data(text.utf8)) == claims)
        var lanyard = claims
        lanyard.style = .lanyard
        let plain = String(decoding: JSONWriter.write(lanyard), as: UTF8.self)
        #expect(plain.contains(#""amr":["apple"]"#) && !plain.contains("session_id"))
        #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: Data(plain.utf8)) == lanyard)
    }

    @Test func unsupportedPathsNameTheirFeature() {
        #expect(GoTrueError.unsupported(method: "POST", path: "/auth/v1/magiclink").message.hasPrefix("Passwords, magic links and phone sign-in"))
        #expect(GoTrueError.unsupported(method: "POST", path: "/auth/v1/factors").message.hasPrefix("Multi-factor authentication"))
        #expect(GoTrueError.unsupported(method: "GET", path: "/auth/v1/admin/users").message.hasPrefix("GoTrue's admin API"))
        #expect(GoTrueError.unsupported(method: "GET", path: "/auth/v1/odd").message.hasPrefix("GET /auth/v1/odd"))
    }
}
