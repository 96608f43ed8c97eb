import Crypto
import Foundation
import Testing
import LanyardSupport

@Suite struct OperationsTests {
    @Test(arguments: TestDatabase.available)
    func healthReadinessAndMetricsAnswer(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            #expect(try await server.get("/healthz").json["status"] as? String == "ok")
            #expect(try await server.get("/readyz").json["database"] as? String == "ok")
            _ = try await server.signIn(.apple, sub: "metered")
            _ = try await server.post("/v1/auth/signin/apple", ["id_token": "bad"])
            let metrics = try await server.get("/metrics")
            #expect(metrics.headers.first(name: "Content-Type")?.hasPrefix("text/plain") == true)
            #expect(metrics.text.contains(#"lanyard_http_requests_total{method="POST",route="/v1/auth/signin/{provider}",status="200"} 1"#))
            #expect(metrics.text.contains(#"lanyard_signins_total{provider="apple",outcome="success"} 1"#))
            #expect(metrics.text.contains(#"lanyard_signins_total{provider="apple",outcome="INVALID_PROVIDER_TOKEN"} 1"#))
            #expect(metrics.text.contains("lanyard_http_request_duration_seconds_bucket"))
        }
    }

    /// What a JWT library does with nothing but the JWKS URL: fetch the keys, pick by `kid`, check ES256.
    @Test(arguments: TestDatabase.available)
    func accessTokensVerifyWithNothingButTheJWKS(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let session = try await server.signIn(.google, sub: "verifiable")
            let discovery = try await server.get("/.well-known/openid-configuration")
            #expect(discovery.json["issuer"] as? String == server.runtime.issuer)
            let jwksURL = try #require(discovery.json["jwks_uri"] as? String)
            #expect(discovery.json["id_token_signing_alg_values_supported"] as? [String] == ["ES256"])
            let jwks = try await server.get(String(jwksURL.dropFirst(server.baseURL.count)))
            let keys = try #require(jwks.json["keys"] as? [[String: Any]])

            let parts = session.accessToken.split(separator: ".").map(String.init)
            let header = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[0])!)) as! [String: Any]
            #expect(header["alg"] as? String == "ES256")
            let key = try #require(keys.first { $0["kid"] as? String == header["kid"] as? String })
            #expect(key["kty"] as? String == "EC")
            #expect(key["crv"] as? String == "P-256")
            let x = try #require(Base64URL.decode(key["x"] as! String))
            let y = try #require(Base64URL.decode(key["y"] as! String))
            let publicKey = try P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(parts[2])!)
            #expect(publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        }
    }

    @Test(arguments: TestDatabase.available)
    func keyRotationKeepsOldTokensValid(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let before = try await server.signIn(.apple, sub: "rotation")
            try await server.runtime.keyRing.rotate(publishDelay: 0)
            let after = try await server.signIn(.apple, sub: "rotation")
            let jwks = try await server.get("/.well-known/jwks.json")
            #expect((jwks.json["keys"] as? [[String: Any]])?.count == 2)
            #expect(try await server.get("/v1/users/me", bearer: before.accessToken).status == 200)
            #expect(try await server.get("/v1/users/me", bearer: after.accessToken).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func theOpenAPIDocumentDescribesEveryRoute(database: TestDatabase) async throws {
        try await TestServer.with(database) { server in
            let document = try await server.get("/openapi.json")
            #expect(document.json["openapi"] as? String == "3.1.0")
            let paths = try #require(document.json["paths"] as? [String: [String: Any]])
            let expected: [(String, String)] = [
                ("/v1/auth/signin/{provider}", "post"), ("/v1/auth/anonymous", "post"), ("/v1/auth/refresh", "post"),
                ("/v1/auth/signout", "post"), ("/v1/auth/link/{provider}", "post"), ("/v1/auth/link/{provider}", "delete"),
                ("/v1/auth/reauthenticate/{provider}", "post"), ("/v1/users/me", "get"), ("/v1/users/me", "patch"),
                ("/v1/users/me", "delete"), ("/v1/sessions", "get"), ("/v1/sessions/{id}", "delete"),
                ("/.well-known/jwks.json", "get"), ("/.well-known/openid-configuration", "get"), ("/healthz", "get"),
                ("/readyz", "get"), ("/metrics", "get"), ("/openapi.json", "get"),
                ("/_emulator/apple/keys", "get"), ("/_emulator/google/certs", "get"),
                ("/_emulator/{provider}/id-token", "post"), ("/_emulator", "get"),
                ("/v1/data/{collection}/{id}", "put"), ("/v1/data/{collection}/{id}", "get"),
                ("/v1/data/{collection}/{id}", "delete"), ("/v1/data/{collection}", "get"),
                ("/v1/changes", "get"), ("/v1/changes/stream", "get"),
                ("/auth/v1/token", "post"), ("/auth/v1/signup", "post"), ("/auth/v1/user", "get"), ("/auth/v1/user", "put"),
                ("/auth/v1/logout", "post"), ("/auth/v1/user/identities", "get"),
                ("/auth/v1/user/identities/{identity_id}", "delete"), ("/auth/v1/settings", "get"),
                ("/auth/v1/health", "get"), ("/auth/v1/.well-known/jwks.json", "get"),
                ("/v1/admin/users", "get"), ("/v1/admin/users/{id}", "get"), ("/v1/admin/users/{id}", "patch"),
                ("/v1/admin/users/{id}", "delete"), ("/v1/admin/users/{id}/signout", "post"),
                ("/v1/admin/users/{id}/sessions/{session_id}", "delete"), ("/v1/admin/audit", "get"),
                ("/v1/admin/stats", "get"), ("/admin", "get"),
                ("/v1/providers/apple/notifications", "post"), ("/_emulator/apple/authorization-code", "post"),
                ("/_emulator/apple/auth/token", "post"), ("/_emulator/apple/auth/revoke", "post"),
                ("/_emulator/apple/revocations", "get"), ("/_emulator/apple/notify", "post"),
                ("/v1/groups", "post"), ("/v1/groups", "get"), ("/v1/groups/{gid}", "get"), ("/v1/groups/{gid}", "patch"),
                ("/v1/groups/{gid}", "delete"), ("/v1/groups/{gid}/invites", "post"), ("/v1/groups/{gid}/invites", "get"),
                ("/v1/groups/{gid}/invites/{id}", "delete"), ("/v1/invites/{code}", "get"),
                ("/v1/invites/{code}/accept", "post"), ("/v1/groups/{gid}/members/{user_id}", "patch"),
                ("/v1/groups/{gid}/members/{user_id}", "delete"), ("/v1/groups/{gid}/leave", "post"),
                ("/v1/groups/{gid}/transfer", "post"), ("/v1/groups/{gid}/data/{collection}/{id}", "put"),
                ("/v1/groups/{gid}/data/{collection}/{id}", "get"), ("/v1/groups/{gid}/data/{collection}/{id}", "delete"),
                ("/v1/groups/{gid}/data/{collection}", "get"), ("/v1/groups/{gid}/policies/{collection}", "put"),
                ("/v1/groups/{gid}/policies/{collection}", "get"), ("/v1/groups/{gid}/shares", "get"),
                ("/v1/groups/{gid}/shares/{collection}", "put"), ("/v1/groups/{gid}/shares/{collection}", "delete"),
                ("/v1/groups/{gid}/members/{user_id}/data/{collection}/{id}", "get"),
                ("/v1/groups/{gid}/members/{user_id}/data/{collection}", "get"),
                ("/v1/users/me/merge/challenge", "post"), ("/v1/users/me/merge", "post"), ("/v1/users/me/merges/{id}", "get"),
                ("/join/{code}", "get"), ("/v1/admin/merges", "post"), ("/v1/admin/merges", "get"),
                ("/v1/admin/merges/{id}/revert", "post"), ("/v1/admin/groups", "get"), ("/v1/admin/groups/{gid}", "get"), ("/v1/admin/groups/{gid}", "delete"),
                ("/v1/providers", "get"), ("/v1/admin/providers", "get"), ("/_emulator/oidc/{name}/id-token", "post"),
                ("/_emulator/oidc/{name}/.well-known/openid-configuration", "get"), ("/_emulator/oidc/{name}/keys", "get"),
                ("/v1/auth/email/start", "post"), ("/v1/auth/email/verify", "post"), ("/v1/auth/email/complete", "post"),
                ("/v1/auth/email/recover", "post"), ("/sdk/lanyard.js", "get"),
                ("/e/{token}", "get"), ("/e/{token}", "post"), ("/_emulator/mail", "get"),
                ("/v1/admin/users/{id}/recovery", "post"), ("/v1/admin/email/deliveries", "get"),
                ("/auth/v1/otp", "post"), ("/auth/v1/verify", "post"),
                ("/v1/auth/passkeys/register/options", "post"), ("/v1/auth/passkeys/register", "post"),
                ("/v1/auth/passkeys/signin/options", "post"), ("/v1/auth/passkeys/signin", "post"),
                ("/v1/users/me/passkeys", "get"), ("/v1/users/me/passkeys/{id}", "patch"), ("/v1/users/me/passkeys/{id}", "delete"),
                ("/.well-known/apple-app-site-association", "get"), ("/.well-known/assetlinks.json", "get"),
                ("/v1/admin/users/{id}/passkeys", "get"), ("/v1/admin/users/{id}/passkeys/{passkey_id}", "delete"),
                ("/v1/auth/migrate/{source}", "post"), ("/v1/admin/imports", "post"), ("/v1/admin/imports", "get"),
                ("/v1/admin/imports/{id}", "get"), ("/v1/admin/imports/{id}/undo", "post"),
                ("/_emulator/firebase/id-token", "post"), ("/_emulator/firebase/keys", "get"),
                ("/_emulator/supabase/access-token", "post"), ("/_emulator/supabase/auth/v1/.well-known/jwks.json", "get"),
                ("/_emulator/clerk/session-token", "post"), ("/_emulator/clerk/.well-known/jwks.json", "get"),
                ("/v1/auth/authorize/{provider}", "get"), ("/v1/auth/authorize/{provider}", "post"),
                ("/v1/auth/callback/{provider}", "get"), ("/v1/auth/callback/{provider}", "post"), ("/v1/auth/token", "post"),
                ("/auth/v1/authorize", "get"), ("/auth/v1/callback", "get"), ("/auth/v1/callback", "post"),
                ("/_emulator/apple/auth/authorize", "get"), ("/_emulator/apple/auth/authorize", "post"),
                ("/_emulator/google/authorize", "get"), ("/_emulator/google/authorize", "post"), ("/_emulator/google/token", "post"),
                ("/_emulator/oidc/{name}/authorize", "get"), ("/_emulator/oidc/{name}/authorize", "post"),
                ("/_emulator/oidc/{name}/token", "post"),
            ]
            for (path, method) in expected {
                #expect(paths[path]?[method] != nil, "\(method.uppercased()) \(path) is missing from /openapi.json")
            }
            // And nothing the server does not serve.
            let documented = Set(paths.flatMap { path, methods in methods.keys.filter { $0 != "parameters" }.map { "\($0) \(path)" } })
            #expect(documented == Set(expected.map { "\($0.1) \($0.0)" }))
        }
    }
}
