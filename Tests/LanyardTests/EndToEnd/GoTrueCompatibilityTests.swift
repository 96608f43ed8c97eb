import Foundation
import Testing

/// `/auth/v1` through HTTP on both databases; Supabase's own client drives it in `Tests/GoTrue`.
@Suite struct GoTrueCompatibilityTests {
    static let apiVersion = ["X-Supabase-Api-Version": "2024-01-01"]

    func idTokenGrant(_ server: TestServer, _ provider: String, sub: String, email: String? = nil, bearer: String? = nil,
                      extra: [String: Any] = [:]) async throws -> TestResponse {
        var body: [String: Any] = ["provider": provider,
                                   "id_token": try server.idToken(provider == "apple" ? .apple : .google, sub: sub, email: email),
                                   "gotrue_meta_security": ["captcha_token": NSNull()], "nonce": NSNull()]
        body.merge(extra) { $1 }
        return try await server.request(.POST, "/auth/v1/token?grant_type=id_token", json: body, bearer: bearer,
                                        headers: Self.apiVersion)
    }

    @Test(arguments: TestDatabase.available)
    func anIDTokenGrantAnswersAGoTrueSessionWithSupabaseClaims(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let answer = try await idTokenGrant(server, "google", sub: "g-1", email: "g1@example.com")
            #expect(answer.status == 200)
            let json = answer.json
            let user = try #require(json["user"] as? [String: Any])
            #expect(json["token_type"] as? String == "bearer")
            #expect((json["expires_at"] as? Int ?? 0) == Int(server.clock.now().timeIntervalSince1970) + 900)
            #expect(user["aud"] as? String == "authenticated")
            #expect((user["app_metadata"] as? [String: Any])?["providers"] as? [String] == ["google"])
            let identity = try #require((user["identities"] as? [[String: Any]])?.first)
            #expect(identity["id"] as? String == "g-1")
            #expect(identity["user_id"] as? String == user["id"] as? String)
            #expect(UUID(uuidString: identity["identity_id"] as? String ?? "") != nil)

            let claims = try #require(Self.claims(json["access_token"] as? String))
            #expect(claims["session_id"] as? String == claims["sid"] as? String)
            #expect((claims["amr"] as? [[String: Any]])?.first?["method"] as? String == "google")
            #expect(claims["aal"] as? String == "aal1")
            // What Row Level Security policies read of the user (`auth.jwt()`), as GoTrue's tokens carry it.
            func expectProfileClaims(_ claims: [String: Any]) {
                #expect(claims["email"] as? String == "g1@example.com")
                #expect(claims["phone"] as? String == "")
                let appMetadata = claims["app_metadata"] as? [String: Any]
                #expect(appMetadata?["provider"] as? String == "google")
                #expect(appMetadata?["providers"] as? [String] == ["google"])
                #expect(claims["user_metadata"] is [String: Any])
            }
            expectProfileClaims(claims)
            // The same token works on Lanyard's own API.
            #expect(try await server.get("/v1/users/me", bearer: json["access_token"] as? String).status == 200)
            let refreshed = try await server.post("/auth/v1/token?grant_type=refresh_token",
                                                  ["refresh_token": json["refresh_token"] as? String ?? ""])
            #expect(refreshed.status == 200)
            #expect((refreshed.json["user"] as? [String: Any])?["id"] as? String == user["id"] as? String)
            expectProfileClaims(try #require(Self.claims(refreshed.json["access_token"] as? String)))
            // Lanyard's own tokens stay as they were: no profile in them.
            let own = try await server.signIn(.google, sub: "g-1")
            #expect(try #require(Self.claims(own.accessToken))["app_metadata"] == nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aGuestBearerMergesAndAnyOtherAuthorizationIsIgnored(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let owner = try await idTokenGrant(server, "apple", sub: "ada")
            let ownerID = (owner.json["user"] as? [String: Any])?["id"] as? String

            let guest = try await server.request(.POST, "/auth/v1/signup", json: ["data": ["plan": "free"]])
            let guestToken = try #require(guest.json["access_token"] as? String)
            #expect(try await server.request(.PUT, "/v1/data/habits/h1", json: ["data": ["streak": 12]],
                                             bearer: guestToken).status == 200)
            let merged = try await idTokenGrant(server, "apple", sub: "ada", bearer: guestToken)
            let mergedUser = try #require(merged.json["user"] as? [String: Any])
            #expect(mergedUser["id"] as? String == ownerID)
            // The guest's metadata came along (the account had none), and its records.
            #expect((mergedUser["user_metadata"] as? [String: Any])?["plan"] as? String == "free")
            let token = merged.json["access_token"] as? String
            #expect(try await server.get("/v1/data/habits/h1", bearer: token).json["data"] as? [String: Int] == ["streak": 12])

            for ignored in ["the-project-anon-key", "eyJhbGciOiJIUzI1NiJ9.e30.c2ln"] {
                let answer = try await idTokenGrant(server, "google", sub: "g-\(ignored.count)", bearer: ignored)
                #expect(answer.status == 200)
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func linkIdentityLinksAndAnswersANewSessionAndUnlinkGoesByIdentityID(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let signedIn = try await idTokenGrant(server, "google", sub: "g-1")
            let token = try #require(signedIn.json["access_token"] as? String)
            let linked = try await idTokenGrant(server, "apple", sub: "a-1", bearer: token, extra: ["link_identity": true])
            #expect(linked.status == 200)
            let identities = (linked.json["user"] as? [String: Any])?["identities"] as? [[String: Any]] ?? []
            #expect(identities.compactMap { $0["provider"] as? String } == ["google", "apple"])

            let newToken = linked.json["access_token"] as? String
            let listed = try await server.get("/auth/v1/user/identities", bearer: newToken)
            #expect((listed.json["identities"] as? [[String: Any]])?.count == 2)
            let appleID = try #require(identities.last?["identity_id"] as? String)
            // Supabase's Swift client sends the id as a Swift `UUID` prints it: upper case.
            #expect(try await server.delete("/auth/v1/user/identities/\(appleID.uppercased())", bearer: newToken).status == 200)
            let googleID = try #require(identities.first?["identity_id"] as? String)
            let last = try await server.delete("/auth/v1/user/identities/\(googleID)", bearer: newToken)
            #expect(last.status == 422)
            #expect(last.json["code"] as? String == "single_identity_not_deletable")
            #expect(try await server.delete("/auth/v1/user/identities/\(UUID())", bearer: newToken).json["code"] as? String
                == "identity_not_found")

            let unauthenticated = try await idTokenGrant(server, "apple", sub: "a-2", extra: ["link_identity": true])
            #expect(unauthenticated.status == 401)
            #expect(unauthenticated.json["code"] as? String == "no_authorization")
        }
    }

    @Test(arguments: TestDatabase.available)
    func userMetadataMergesKeyByKeyAndLogoutEndsTheSession(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let signedUp = try await server.post("/auth/v1/signup", ["data": ["a": 1, "b": 2]])
            let token = signedUp.json["access_token"] as? String
            let updated = try await server.request(.PUT, "/auth/v1/user", json: ["data": ["b": NSNull(), "c": 3]], bearer: token)
            #expect(updated.json["user_metadata"] as? [String: Int] == ["a": 1, "c": 3])
            let tooLarge = try await server.request(.PUT, "/auth/v1/user",
                                                    json: ["data": ["x": String(repeating: "y", count: 17_000)]], bearer: token)
            #expect(tooLarge.json["code"] as? String == "validation_failed")
            #expect(try await server.get("/auth/v1/user", bearer: token).json["user_metadata"] as? [String: Int] == ["a": 1, "c": 3])
            #expect(try await server.post("/auth/v1/logout?scope=local", bearer: token).status == 204)
            // GoTrue's answer for a session that ended, the one code on which Supabase's clients sign out.
            let after = try await server.get("/auth/v1/user", bearer: token)
            #expect(after.status == 403)
            #expect(after.json["code"] as? String == "session_not_found")
            // A token that is not one stays bad_jwt.
            #expect(try await server.get("/auth/v1/user", bearer: "not.a.jwt").json["code"] as? String == "bad_jwt")
        }
    }

    @Test func errorsHaveGoTruesShapeAndUnsupportedFeaturesAreNamed() async throws {
        try await TestServer.with(.sqlite) { server in
            let reused = try await server.request(.POST, "/auth/v1/token?grant_type=refresh_token",
                                                  json: ["refresh_token": "nope"], headers: ["X-Supabase-Api-Version": "2024-01-01"])
            #expect(reused.status == 400)
            #expect(reused.headers.first(name: "X-Supabase-Api-Version") == "2024-01-01")
            #expect(Set(reused.json.keys) == ["code", "error_code", "msg", "message"])
            #expect(reused.json["code"] as? String == "refresh_token_not_found")

            for (path, code, status) in [("/auth/v1/magiclink", "feature_not_supported", 501),
                                         ("/auth/v1/factors", "feature_not_supported", 501),
                                         ("/auth/v1/token?grant_type=password", "unsupported_grant_type", 400)] {
                let answer = try await server.post(path, ["email": "a@example.com"])
                #expect(answer.status == status, "\(path)")
                #expect(answer.json["code"] as? String == code, "\(path)")
            }
            let email = try await server.post("/auth/v1/signup", ["email": "a@example.com", "password": "x"])
            #expect(email.json["code"] as? String == "email_provider_disabled")
            let settings = try await server.get("/auth/v1/settings").json["external"] as? [String: Bool]
            // Email codes are offered (`lanyard dev` keeps the mail in its mailbox); phone sign-in is not.
            #expect(settings?["apple"] == true && settings?["email"] == true && settings?["phone"] == false)
            #expect(try await server.get("/auth/v1/.well-known/jwks.json").json["keys"] != nil)
        }
    }

    @Test func theSurfaceIsOffWhenNotEnabledAndTheAPIKeyIsCheckedWhenSet() async throws {
        try await TestServer.with(.sqlite, configure: { $0.gotrueCompat = false }) { server async throws in
            #expect(try await server.post("/auth/v1/signup").errorCode == "NOT_FOUND")
        }
        try await TestServer.with(.sqlite, configure: { $0.gotrueAnonKey = "anon-key" }) { server in
            let keyless = try await server.post("/auth/v1/signup")
            #expect(keyless.status == 401)
            #expect(keyless.json["code"] as? String == "invalid_api_key")
            #expect(try await server.post("/auth/v1/signup", headers: ["apikey": "anon-key"]).status == 200)
            #expect(try await server.get("/auth/v1/.well-known/jwks.json").status == 200)
        }
    }

    static func claims(_ token: String?) -> [String: Any]? {
        guard let parts = token?.split(separator: "."), parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    /// supabase-swift does not resolve as a package here: these are the exact requests its `signInWithOTP(email:)`
    /// and `verifyOTP(email:token:type:)` send (read from supabase/supabase-swift's `AuthClient.swift` and
    /// `Types.swift`): snake_case bodies without nil members, a PKCE challenge on `otp`, `redirect_to` in the query.
    @Test(arguments: TestDatabase.available)
    func supabaseSwiftsOTPRequestsSignUpAndIn(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let headers = Self.apiVersion.merging(["X-Client-Info": "supabase-swift/2.0.0"]) { $1 }
            let sent = try await server.request(.POST, "/auth/v1/otp?redirect_to=myapp://callback", json: [
                "email": "swift@example.com", "create_user": true,
                "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "s256",
            ], headers: headers)
            #expect(sent.status == 200 && sent.text == "{}", "\(sent.text)")
            let mail = try await EmailFlowTests.mail(server, to: "swift@example.com")
            let code = try #require(mail["code"] as? String)
            let wrong = try await server.request(.POST, "/auth/v1/verify?redirect_to=myapp://callback", json: [
                "email": "swift@example.com", "token": code == "000000" ? "111111" : "000000", "type": "email",
            ], headers: headers)
            #expect(wrong.status == 403 && wrong.json["error_code"] as? String == "otp_expired")
            let verified = try await server.request(.POST, "/auth/v1/verify?redirect_to=myapp://callback", json: [
                "email": "swift@example.com", "token": code, "type": "email",
            ], headers: headers)
            #expect(verified.status == 200, "\(verified.text)")
            let user = try #require(verified.json["user"] as? [String: Any])
            #expect(user["email"] as? String == "swift@example.com")
            #expect((user["app_metadata"] as? [String: Any])?["provider"] as? String == "email")
            #expect(verified.json["refresh_token"] as? String != nil)
            let phone = try await server.request(.POST, "/auth/v1/verify", json: ["phone": "+15555550100", "token": code, "type": "sms"],
                                                 headers: headers)
            #expect(phone.status == 400)
        }
    }

    /// GoTrue's OTP edges (reference section 25): `create_user: false` for an unknown address sends nothing and
    /// answers `422 otp_disabled`, as GoTrue does; a mail limit is `over_email_send_rate_limit`.
    @Test(arguments: TestDatabase.available)
    func otpWithoutSignUpSendsNothingToAnUnknownAddressAndMailLimitsAreNamed(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let unknown = try await server.request(.POST, "/auth/v1/otp", json: ["email": "nobody@example.com", "create_user": false],
                                                   headers: Self.apiVersion)
            #expect(unknown.status == 422 && unknown.json["error_code"] as? String == "otp_disabled", "\(unknown.text)")
            #expect(try await EmailFlowTests.mailCount(server) == 0)

            let first = try await server.post("/auth/v1/otp", ["email": "known@example.com"])
            #expect(first.status == 200)
            let code = try #require(try await EmailFlowTests.mail(server, to: "known@example.com")["code"] as? String)
            #expect(try await server.post("/auth/v1/verify", ["type": "email", "email": "known@example.com", "token": code]).status == 200)
            let soon = try await server.request(.POST, "/auth/v1/otp", json: ["email": "known@example.com", "create_user": false],
                                                headers: Self.apiVersion)
            #expect(soon.status == 429 && soon.json["error_code"] as? String == "over_email_send_rate_limit", "\(soon.text)")
            #expect(soon.headers.first(name: "Retry-After") != nil)
            server.clock.advance(by: 61)
            // An address with an account gets its code without signing anyone up.
            #expect(try await server.post("/auth/v1/otp", ["email": "known@example.com", "create_user": false]).status == 200)
            #expect(try await EmailFlowTests.mailCount(server) == 2)
        }
    }

    /// `create_user: false` answers whether an address has an account (as GoTrue does): it counts against the
    /// client IP's sign-in limit, so addresses cannot be tried without end.
    @Test func otpWithoutSignUpIsLimitedPerClientIP() async throws {
        try await TestServer.with(.sqlite, configure: {
            $0.rateLimits.enabled = true
            $0.rateLimits.signIn = .init(limit: 3, window: 300)
        }) { server in
            for index in 0..<3 {
                let probe = try await server.post("/auth/v1/otp", ["email": "probe\(index)@example.com", "create_user": false])
                #expect(probe.status == 422)
            }
            let limited = try await server.post("/auth/v1/otp", ["email": "probe9@example.com", "create_user": false])
            #expect(limited.status == 429, "\(limited.text)")
        }
    }

    /// Every kind of identity unlinks by its id, as in GoTrue: an email address and each passkey too, never the last.
    @Test(arguments: TestDatabase.available)
    func emailAndPasskeyIdentitiesUnlinkByTheirID(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: PasskeyTests.configure) { server in
            let signedIn = try await idTokenGrant(server, "google", sub: "g-unlink")
            let bearer = try #require(signedIn.json["access_token"] as? String)
            let flow = try EmailFlowTests.Flow(try await EmailFlowTests.start(server, "unlink@example.com", intent: "link", bearer: bearer))
            let code = try #require(try await EmailFlowTests.mail(server, to: "unlink@example.com")["code"] as? String)
            #expect(try await EmailFlowTests.verify(server, flow, code: code, bearer: bearer).status == 200)
            #expect(try await PasskeyTests.addPasskey(server, PasskeyTests.authenticator(server), bearer: bearer).status == 201)

            func identities() async throws -> [[String: Any]] {
                try await server.get("/auth/v1/user/identities", bearer: bearer).json["identities"] as? [[String: Any]] ?? []
            }
            let listed = try await identities()
            #expect(listed.compactMap { $0["provider"] as? String } == ["google", "email", "passkey"])
            for provider in ["email", "passkey"] {
                let id = try #require(listed.first { $0["provider"] as? String == provider }?["identity_id"] as? String)
                let removed = try await server.delete("/auth/v1/user/identities/\(id)", bearer: bearer)
                #expect(removed.status == 200, "\(provider): \(removed.text)")
            }
            #expect(try await identities().compactMap { $0["provider"] as? String } == ["google"])
            let audit = try await server.request(.GET, "/v1/admin/audit?type=identity.unlinked", bearer: PasskeyTests.key)
            #expect((audit.json["events"] as? [[String: Any]])?.count == 2)
        }
    }
}
