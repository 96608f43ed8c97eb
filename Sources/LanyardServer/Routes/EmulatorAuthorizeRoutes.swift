import Foundation
import Hummingbird
import LanyardCore
import LanyardEmulator
import LanyardSupport

/// The providers' sign-in pages and token endpoints in dev mode (reference section 23), so redirect sign-in runs its
/// production path without Apple or Google accounts: `GET …/authorize` shows a page to pick a test user, its form
/// answers as the provider would (Apple by `form_post`, the others with a 302), and the token endpoint redeems the
/// code for an ID token signed like the provider's. A form may also name another `aud` or `nonce` for the token,
/// which is how tests bring back a token that is not the flow's.
struct EmulatorAuthorizeRoutes {
    let minter: TokenMinter
    let authorizations: AuthorizationEmulator
    let oidcProviders: [EmulatedOIDCProvider]

    func register(on router: Router<LanyardRequestContext>) {
        let oidc = Dictionary(uniqueKeysWithValues: oidcProviders.map { ($0.name, $0) })
        router.get("_emulator/apple/auth/authorize") { request, _ in Self.page(request, provider: "apple", title: "Apple") }
        router.post("_emulator/apple/auth/authorize") { request, _ in try await pick(request, provider: "apple") }
        router.get("_emulator/google/authorize") { request, _ in Self.page(request, provider: "google", title: "Google") }
        router.post("_emulator/google/authorize") { request, _ in try await pick(request, provider: "google") }
        router.post("_emulator/google/token") { request, _ in
            try await token(request, provider: "google") { try minter.mint(.google, $0) }
        }
        router.get("_emulator/oidc/:name/authorize") { request, context in
            let name = try context.parameters.require("name")
            guard oidc[name] != nil else { throw LanyardError.unsupportedProvider(name) }
            return Self.page(request, provider: "oidc:" + name, title: name)
        }
        router.post("_emulator/oidc/:name/authorize") { request, context in
            let name = try context.parameters.require("name")
            guard oidc[name] != nil else { throw LanyardError.unsupportedProvider(name) }
            return try await pick(request, provider: "oidc:" + name)
        }
        router.post("_emulator/oidc/:name/token") { request, context in
            let name = try context.parameters.require("name")
            guard let provider = oidc[name] else { throw LanyardError.unsupportedProvider(name) }
            return try await token(request, provider: "oidc:" + name) { try minter.mint(provider, $0) }
        }
    }

    /// The provider's page: the flow's parameters kept in the form, a test user to pick.
    static func page(_ request: Request, provider: String, title: String) -> Response {
        let query = request.uri.queryParameters
        let kept = ["client_id", "redirect_uri", "state", "nonce", "response_mode", "scope"].map { name in
            "<input type=\"hidden\" name=\"\(name)\" value=\"\(HTML.escape(query[name[...]].map(String.init) ?? ""))\">"
        }.joined()
        let apple = provider == "apple"
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(HTML.escape(title)) (emulator)</title>\
            <style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto}label{display:block;margin:.5rem 0}\
            input{font-size:1rem;width:100%}</style></head><body>\
            <h1>Sign in with \(HTML.escape(title))</h1><p>Lanyard's emulator: pick a test user.</p>\
            <form method="post">\(kept)\
            <label>User id (sub) <input id="sub" name="sub" value="emulated-user" required></label>\
            <label>Email <input id="email" name="email" value="user@example.com"></label>\
            \(apple ? "<label>First name (sent once) <input id=\"given_name\" name=\"given_name\"></label><label>Last name <input id=\"family_name\" name=\"family_name\"></label>" : "<label>Name <input id=\"name\" name=\"name\"></label>")\
            <button id="continue" type="submit">Continue</button> \
            <button id="cancel" name="cancel" value="1" type="submit" formnovalidate>Cancel</button></form></body></html>
            """
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// The person picked: a code back to the client's redirect URI, by `form_post` (Apple) or a 302. Cancel answers
    /// as the provider does when the person declines: `access_denied` (Apple's `user_cancelled_authorize`).
    func pick(_ request: Request, provider: String) async throws -> Response {
        let form = try await FormBody.read(request)
        let cancelled = form["cancel"] == "1"
        guard let redirectURI = form["redirect_uri"], !redirectURI.isEmpty, let clientID = form["client_id"],
              let sub = form["sub"], !sub.isEmpty || cancelled else {
            throw LanyardError.invalidRequest(field: "sub", "the emulator's form needs sub, client_id and redirect_uri")
        }
        var answer: [(String, String)]
        if cancelled {
            answer = [("error", provider == "apple" ? "user_cancelled_authorize" : "access_denied")]
        } else {
            let email = form["email"].flatMap { $0.isEmpty ? nil : $0 }
            let claims = MintRequest(sub: sub, email: email, nonce: form["nonce_override"] ?? form["nonce"],
                                     aud: form["aud"].flatMap { $0.isEmpty ? nil : $0 } ?? clientID,
                                     name: form["name"].flatMap { $0.isEmpty ? nil : $0 }, emailVerified: email.map { _ in true },
                                     tid: form["tid"].flatMap { $0.isEmpty ? nil : $0 })
            answer = [("code", authorizations.code(provider: provider, clientID: clientID, redirectURI: redirectURI, claims: claims))]
        }
        if let state = form["state"], !state.isEmpty { answer.append(("state", state)) }
        guard form["response_mode"] == "form_post" else {
            var components = URLComponents(string: redirectURI) ?? URLComponents()
            components.queryItems = (components.queryItems ?? []) + answer.map { URLQueryItem(name: $0.0, value: $0.1) }
            return Response(status: .found, headers: [.location: components.string ?? redirectURI])
        }
        // Apple's `form_post`, with the one-time `user` JSON when a name was given.
        let given = form["given_name"] ?? "", family = form["family_name"] ?? ""
        if !cancelled, !given.isEmpty || !family.isEmpty {
            let user = try JSONSerialization.data(withJSONObject: [
                "name": ["firstName": given, "lastName": family], "email": form["email"] ?? "",
            ], options: [.sortedKeys])
            answer.append(("user", String(decoding: user, as: UTF8.self)))
        }
        let fields = answer.map { "<input type=\"hidden\" name=\"\($0.0)\" value=\"\(HTML.escape($0.1))\">" }.joined()
        let html = """
            <!doctype html><html><head><meta charset="utf-8"><title>Returning…</title></head><body>\
            <form id="form_post" method="post" action="\(HTML.escape(redirectURI))">\(fields)\
            <noscript><button type="submit">Continue</button></noscript></form>\
            <script>document.getElementById("form_post").submit()</script></body></html>
            """
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// A token endpoint (Google's, an OpenID Connect provider's): the web client's secret, then the code, once.
    func token(_ request: Request, provider: String,
               mint: @Sendable (MintRequest) throws -> String) async throws -> Response {
        let form = try await FormBody.read(request)
        guard form["client_secret"] == AuthorizationEmulator.devClientSecret else {
            return try JSONResponse.make(["error": "invalid_client"], status: .unauthorized)
        }
        guard form["grant_type"] == "authorization_code", let code = form["code"], let clientID = form["client_id"] else {
            return try JSONResponse.make(["error": "invalid_request"], status: .badRequest)
        }
        do {
            let grant = try authorizations.redeem(code, provider: provider, clientID: clientID,
                                                  redirectURI: form["redirect_uri"] ?? "")
            return try JSONResponse.make(["id_token": try mint(grant.claims), "access_token": "emulated",
                                          "token_type": "Bearer"])
        } catch AuthorizationEmulator.Refusal.unavailable {
            return try JSONResponse.make(["error": "temporarily_unavailable"], status: .serviceUnavailable)
        } catch {
            return try JSONResponse.make(["error": "invalid_grant"], status: .badRequest)
        }
    }
}
