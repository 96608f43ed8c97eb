import Crypto
import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport

/// Redirect sign-in's pure rules (reference section 23): PKCE with S256 only, the URLs the browser is sent to, and
/// what Apple sends once beside the code.
enum RedirectRules {
    /// A challenge is S256's: 43 base64url characters (the SHA-256 of a verifier); `plain` is refused.
    static func checkChallenge(_ challenge: String, method: String) throws(LanyardError) {
        guard method.uppercased() == "S256" else {
            throw .invalidRequest(field: "code_challenge_method", "code_challenge_method must be S256")
        }
        guard challenge.utf8.count == 43, Base64URL.decode(challenge)?.count == 32 else {
            throw .invalidRequest(field: "code_challenge", "code_challenge must be the base64url SHA-256 of the code_verifier")
        }
    }

    /// Whether `verifier` (RFC 7636: 43 to 128 unreserved characters) hashes to `challenge`.
    static func verifies(_ verifier: String, challenge: String) -> Bool {
        guard (43...128).contains(verifier.utf8.count),
              verifier.utf8.allSatisfy({ byte in
                  (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                      || [0x2D, 0x2E, 0x5F, 0x7E].contains(byte)
              }) else { return false }
        let computed = Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8))))
        return constantTimeEqual(computed, challenge)
    }

    /// Lanyard's code as stored: its SHA-256 (256 random bits need no key).
    static func codeHash(_ code: String) -> String {
        Data(SHA256.hash(data: Data(code.utf8))).hexString
    }

    /// The provider's page for this flow.
    static func authorizationURL(_ endpoint: String, client: RedirectClient, callback: String, state: String,
                                 nonce: String) -> String {
        var components = URLComponents(string: endpoint) ?? URLComponents()
        var items = (components.queryItems ?? []) + [
            URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: client.clientID),
            URLQueryItem(name: "redirect_uri", value: callback), URLQueryItem(name: "scope", value: client.scope),
            URLQueryItem(name: "state", value: state), URLQueryItem(name: "nonce", value: nonce),
        ]
        if client.formPost { items.append(URLQueryItem(name: "response_mode", value: "form_post")) }
        components.queryItems = items
        return formEncodedPlus(components)
    }

    /// Back to the app with Lanyard's code and the app's own state.
    static func back(to flow: RedirectFlowRecord, code: String) -> String {
        append([("code", code)] + (flow.clientState.map { [("state", $0)] } ?? []), to: flow.redirectURI)
    }

    /// Back to the app with an OAuth error (RFC 6749 4.1.2.1) and the app's state: the app shows it, nothing signs in.
    static func back(to flow: RedirectFlowRecord, error: String, description: String? = nil) -> String {
        append([("error", error)] + (description.map { [("error_description", $0)] } ?? [])
               + (flow.clientState.map { [("state", $0)] } ?? []), to: flow.redirectURI)
    }

    /// A provider's `error` passed on only when it is one OAuth names; anything else is `server_error`.
    static func oauthErrorName(_ error: String) -> String {
        let known = ["access_denied", "invalid_request", "unauthorized_client", "unsupported_response_type",
                     "invalid_scope", "server_error", "temporarily_unavailable", "user_cancelled_authorize"]
        return known.contains(error) ? error : "server_error"
    }

    /// The name in Apple's one-time `user` JSON (`{"name": {"firstName", "lastName"}, "email"}`), or nil.
    static func appleName(_ user: String?) -> String? {
        guard let user, user.utf8.count <= 4096, case .object(let members)? = try? JSONParser.parse(Array(user.utf8)),
              case .object(let name)? = members["name"] else { return nil }
        let full = [name["firstName"]?.stringValue, name["lastName"]?.stringValue]
            .compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }.joined(separator: " ")
        guard !full.isEmpty, !full.containsNUL else { return nil }
        return String(full.prefix(200))
    }

    private static func append(_ items: [(String, String)], to uri: String) -> String {
        guard var components = URLComponents(string: uri) else { return uri }
        components.queryItems = (components.queryItems ?? []) + items.map { URLQueryItem(name: $0.0, value: $0.1) }
        return formEncodedPlus(components)
    }

    /// URLComponents leaves `+` unescaped in a query, where servers read it as a space.
    private static func formEncodedPlus(_ components: URLComponents) -> String {
        var components = components
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.string ?? ""
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
