import Crypto
import Foundation
import LanyardSupport

/// A browser through redirect sign-in (reference section 23), one hop at a time over real HTTP: the app's
/// navigation to `authorize`, the emulator's provider page where a test user is picked, the provider's way back to
/// Lanyard's callback (Apple's `form_post` included), and the app's page where the code or the error arrives.
/// Nothing is followed automatically, so a test sees every 302 and every page.
struct RedirectBrowser {
    let server: TestServer
    /// The app's PKCE pair, made per flow.
    let verifier: String
    var challenge: String { Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8)))) }

    init(_ server: TestServer) {
        self.server = server
        verifier = Base64URL.encode(Data((0..<48).map { _ in UInt8.random(in: 0...255) }))
    }

    /// `GET /v1/auth/authorize/{provider}` as a navigation: the answer as it is (a 302, or a page).
    func authorize(_ provider: String, redirectURI: String, state: String? = "app-state",
                   method: String = "S256", challenge: String? = nil) async throws -> TestResponse {
        var query = [("redirect_uri", redirectURI), ("code_challenge", challenge ?? self.challenge),
                     ("code_challenge_method", method)]
        if let state { query.append(("state", state)) }
        return try await get(server.baseURL + "/v1/auth/authorize/\(provider)?" + TestHTTP.formEncoded(query))
    }

    /// The provider's page after a 302 from `authorize`; fails the test when there was none.
    func providerPage(_ provider: String, redirectURI: String, state: String? = "app-state") async throws -> URLComponents {
        let started = try await authorize(provider, redirectURI: redirectURI, state: state)
        guard started.status == 302, let location = started.location, let page = URLComponents(string: location) else {
            throw TestSetupError("authorize did not send the browser to the provider: \(started.status) \(started.text)")
        }
        return page
    }

    /// The person picked on the emulator's page: the provider's answer (Apple's `form_post` page, or a 302 to
    /// Lanyard's callback). `extra` adds the emulator's overrides (`aud`, `nonce_override`, `tid`) or a name.
    func pick(on page: URLComponents, sub: String, email: String? = nil, extra: [(String, String)] = []) async throws -> TestResponse {
        let kept = ["client_id", "redirect_uri", "state", "nonce", "response_mode", "scope"].map { name in
            (name, page.queryItems?.first { $0.name == name }?.value ?? "")
        }
        let fields = kept + [("sub", sub), ("email", email ?? "")] + extra
        return try await TestHTTP.send(.POST, page.string ?? "", form: fields, followingRedirects: false)
    }

    /// The provider's way back to Lanyard's callback: a 302 followed, or Apple's auto-submitting form posted.
    func returnToLanyard(_ providerAnswer: TestResponse) async throws -> TestResponse {
        if providerAnswer.status == 302, let location = providerAnswer.location {
            return try await get(location)
        }
        let form = try Self.autoSubmittedForm(providerAnswer.text)
        return try await TestHTTP.send(.POST, form.action, form: form.fields, followingRedirects: false)
    }

    /// The whole way from the app to the app: where Lanyard's callback sends the browser back (its query).
    func signIn(_ provider: String, redirectURI: String, sub: String, email: String? = nil,
                extra: [(String, String)] = [], state: String? = "app-state") async throws -> [String: String] {
        let page = try await providerPage(provider, redirectURI: redirectURI, state: state)
        let back = try await returnToLanyard(try await pick(on: page, sub: sub, email: email, extra: extra))
        return try Self.arrival(back, at: redirectURI)
    }

    /// `POST /v1/auth/token` with this flow's verifier.
    func exchange(_ code: String, redirectURI: String?, verifier: String? = nil, bearer: String? = nil) async throws -> TestResponse {
        var body: [String: Any] = ["grant_type": "authorization_code", "code": code, "code_verifier": verifier ?? self.verifier]
        if let redirectURI { body["redirect_uri"] = redirectURI }
        return try await server.post("/v1/auth/token", body, bearer: bearer)
    }

    func get(_ url: String) async throws -> TestResponse {
        try await TestHTTP.send(.GET, url, followingRedirects: false)
    }

    /// The query of the app's page the callback's 302 arrives at.
    static func arrival(_ back: TestResponse, at redirectURI: String) throws -> [String: String] {
        guard back.status == 302, let location = back.location, location.hasPrefix(redirectURI),
              let items = URLComponents(string: location)?.queryItems else {
            throw TestSetupError("the callback did not send the browser back to the app: \(back.status) \(back.text)")
        }
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    /// The action and hidden fields of an auto-submitting page (Apple's `form_post`).
    static func autoSubmittedForm(_ html: String) throws -> (action: String, fields: [(String, String)]) {
        func unescape(_ text: Substring) -> String {
            text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&amp;", with: "&")
        }
        guard let action = html.firstMatch(of: /action="([^"]*)"/)?.output.1 else {
            throw TestSetupError("no form on the provider's page: \(html)")
        }
        let fields = html.matches(of: /<input type="hidden" name="([^"]*)" value="([^"]*)">/).map {
            (unescape($0.output.1), unescape($0.output.2))
        }
        return (unescape(action), fields)
    }
}
