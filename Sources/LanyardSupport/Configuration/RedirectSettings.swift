import Foundation

/// Redirect sign-in (reference section 23): the exact URIs a flow may return to, and the web clients Lanyard
/// redeems providers' authorization codes with. Apple signs its client secret with the key of Apple's lifecycle
/// (`LANYARD_APPLE_TEAM_ID`, `_KEY_ID`, `_PRIVATE_KEY`); an OpenID Connect provider's secret is
/// `LANYARD_OIDC_<NAME>_CLIENT_SECRET`.
public struct RedirectSettings: Sendable {
    /// `LANYARD_REDIRECT_URIS`: exact URIs (https, an app's own scheme, a universal link); in dev mode also any
    /// `http://localhost:PORT/…`, `http://127.0.0.1:PORT/…` and `http://[::1]:PORT/…`.
    public var uris: [String] = []
    /// `LANYARD_APPLE_SERVICES_ID`: the Services ID Apple's web sign-in runs under.
    public var appleServicesID: String?
    /// `LANYARD_GOOGLE_WEB_CLIENT_ID` and `_SECRET`: the web client of Google's OAuth.
    public var googleWebClientID: String?
    public var googleWebClientSecret: String?
    /// Dev mode: loopback web pages may be the target without being listed.
    public var allowsLoopback = false

    public init() {}

    /// Whether a flow may return to `uri`: listed exactly, or in dev mode a loopback http page.
    public func allows(_ uri: String) -> Bool {
        if uris.contains(uri) { return true }
        guard allowsLoopback, let components = URLComponents(string: uri), components.scheme == "http",
              let host = components.host, ["localhost", "127.0.0.1", "[::1]", "::1"].contains(host), components.fragment == nil else {
            return false
        }
        return true
    }

    static func read(_ reader: EnvironmentReader, devMode: Bool) throws(ConfigurationError) -> RedirectSettings {
        var settings = RedirectSettings()
        settings.allowsLoopback = devMode
        settings.uris = try reader.list("LANYARD_REDIRECT_URIS").map { (uri) throws(ConfigurationError) in
            guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased(),
                  components.fragment == nil, !EmailSettings.refusedRedirectSchemes.contains(scheme),
                  !["http", "https"].contains(scheme) || components.host?.isEmpty == false else {
                throw ConfigurationError(variable: "LANYARD_REDIRECT_URIS", problem: """
                    \(uri): expected an exact https://host/path, an app's own scheme (com.example.app:/callback) or a universal link
                    """)
            }
            return uri
        }
        settings.appleServicesID = reader.string("LANYARD_APPLE_SERVICES_ID")
        settings.googleWebClientID = reader.string("LANYARD_GOOGLE_WEB_CLIENT_ID")
        settings.googleWebClientSecret = reader.string("LANYARD_GOOGLE_WEB_CLIENT_SECRET")
        if (settings.googleWebClientID == nil) != (settings.googleWebClientSecret == nil) {
            throw ConfigurationError(variable: settings.googleWebClientID == nil ? "LANYARD_GOOGLE_WEB_CLIENT_ID"
                                         : "LANYARD_GOOGLE_WEB_CLIENT_SECRET",
                                     problem: "is required with the other: Google's web client is an id and its secret")
        }
        return settings
    }
}
