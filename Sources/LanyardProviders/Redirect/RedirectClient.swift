/// How Lanyard runs a provider's authorization-code flow (redirect sign-in, reference section 23): the web client
/// it redeems codes as, where the provider's pages are, and what it asks for.
public struct RedirectClient: Sendable, Equatable {
    /// The client's secret: a fixed one (Google, any OpenID Connect provider), or Apple's, a JWT signed per
    /// request with the team's key (so it never expires).
    public enum Secret: Sendable, Equatable {
        case fixed(String)
        case appleSignedPerRequest
    }

    /// Where the provider's authorization and token endpoints are.
    public enum Endpoints: Sendable, Equatable {
        case given(authorization: String, token: String)
        /// An OpenID Connect discovery document's `authorization_endpoint` and `token_endpoint`.
        case discovery(String)
    }

    public var clientID: String
    public var secret: Secret
    public var endpoints: Endpoints
    public var scope: String
    /// Apple answers by `response_mode=form_post`: the code arrives in a POST to the callback.
    public var formPost: Bool

    public init(clientID: String, secret: Secret, endpoints: Endpoints, scope: String = "openid email profile",
                formPost: Bool = false) {
        (self.clientID, self.secret, self.endpoints, self.scope, self.formPost) = (clientID, secret, endpoints, scope, formPost)
    }

    /// Sign in with Apple on the web: its Services ID, its pages at `servicesURL`.
    public static func apple(servicesID: String, servicesURL: String) -> RedirectClient {
        RedirectClient(clientID: servicesID, secret: .appleSignedPerRequest,
                       endpoints: .given(authorization: servicesURL + "/auth/authorize", token: servicesURL + "/auth/token"),
                       scope: "name email", formPost: true)
    }

    /// Google's OAuth for web clients.
    public static func google(clientID: String, clientSecret: String,
                              authorization: String = "https://accounts.google.com/o/oauth2/v2/auth",
                              token: String = "https://oauth2.googleapis.com/token") -> RedirectClient {
        RedirectClient(clientID: clientID, secret: .fixed(clientSecret), endpoints: .given(authorization: authorization, token: token))
    }
}
