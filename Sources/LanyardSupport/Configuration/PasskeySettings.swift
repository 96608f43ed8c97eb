import Foundation

/// Passkeys (reference section 19): the relying party, the origins its clients report, and the apps whose
/// association files Lanyard serves.
public struct PasskeySettings: Sendable, Equatable {
    /// An Android app allowed to use the relying party's passkeys: its package and signing certificate.
    public struct AndroidApp: Sendable, Equatable {
        public var package: String
        /// SHA-256 of the signing certificate, colon-separated upper-case hex (as `keytool -list` prints it).
        public var fingerprint: String

        public init(package: String, fingerprint: String) {
            (self.package, self.fingerprint) = (package, fingerprint)
        }

        /// The origin Credential Manager reports for this app: `android:apk-key-hash:` and the base64url hash.
        public var origin: String {
            let bytes = fingerprint.split(separator: ":").compactMap { UInt8($0, radix: 16) }
            return "android:apk-key-hash:" + Base64URL.encode(bytes)
        }
    }

    /// `LANYARD_WEBAUTHN_RP_ID`: the domain passkeys are bound to; nil outside dev mode means passkeys are off.
    public var rpID: String?
    /// `LANYARD_WEBAUTHN_ORIGINS`: `https://…` web origins and `android:apk-key-hash:…` app origins.
    public var origins: [String] = []
    /// `LANYARD_WEBAUTHN_USER_VERIFICATION`: `required` (default), `preferred` or `discouraged`.
    public var userVerification = "required"
    /// `LANYARD_APPLE_APP_IDS`: `TEAMID.bundle.id` of each iOS app (the `webcredentials` association).
    public var appleAppIDs: [String] = []
    /// `LANYARD_ANDROID_APPS`: `package=FINGERPRINT` of each Android app (Digital Asset Links); each adds its origin.
    public var androidApps: [AndroidApp] = []

    public init() {}

    public var requiresUserVerification: Bool { userVerification == "required" }

    /// The relying party's id and accepted origins; in dev mode `localhost` and the dev server's own origin.
    public func party(devMode: Bool, issuer: String) -> (id: String, origins: [String])? {
        var origins = origins + androidApps.map(\.origin)
        if let rpID { return (rpID, origins) }
        guard devMode else { return nil }
        if let components = URLComponents(string: issuer), let port = components.port {
            origins.append("http://localhost:\(port)")
        }
        return ("localhost", origins)
    }

    static func read(_ reader: EnvironmentReader) throws(ConfigurationError) -> PasskeySettings {
        var settings = PasskeySettings()
        if let rpID = reader.string("LANYARD_WEBAUTHN_RP_ID") {
            guard !rpID.contains("/"), !rpID.contains(":"), rpID == rpID.lowercased(), rpID.contains(".") || rpID == "localhost" else {
                throw ConfigurationError(variable: "LANYARD_WEBAUTHN_RP_ID", problem: "expected a lower-case domain such as example.com, got \(rpID)")
            }
            settings.rpID = rpID
        }
        settings.origins = try reader.list("LANYARD_WEBAUTHN_ORIGINS").map { (origin) throws(ConfigurationError) in
            if origin.hasPrefix("android:apk-key-hash:"), origin.count > 21 { return origin }
            guard let components = URLComponents(string: origin), let scheme = components.scheme, let host = components.host,
                  components.path.isEmpty, components.query == nil,
                  scheme == "https" || scheme == "http" && (OIDCProviderConfiguration.isLoopback(host) || host == "localhost")
            else {
                throw ConfigurationError(variable: "LANYARD_WEBAUTHN_ORIGINS", problem: """
                    \(origin) is not https://host[:port] (http only for localhost) or android:apk-key-hash:…
                    """)
            }
            return origin
        }
        if let verification = reader.string("LANYARD_WEBAUTHN_USER_VERIFICATION") {
            guard ["required", "preferred", "discouraged"].contains(verification) else {
                throw ConfigurationError(variable: "LANYARD_WEBAUTHN_USER_VERIFICATION", problem: "expected required, preferred or discouraged")
            }
            settings.userVerification = verification
        }
        settings.appleAppIDs = try reader.list("LANYARD_APPLE_APP_IDS").map { (id) throws(ConfigurationError) in
            let parts = id.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
                throw ConfigurationError(variable: "LANYARD_APPLE_APP_IDS", problem: "expected TEAMID.bundle.id (a 10-character team id), got \(id)")
            }
            return id
        }
        settings.androidApps = try reader.list("LANYARD_ANDROID_APPS").map { (entry) throws(ConfigurationError) in
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            let hex = parts.count == 2 ? parts[1].split(separator: ":") : []
            guard parts.count == 2, !parts[0].isEmpty, hex.count == 32,
                  hex.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
                throw ConfigurationError(variable: "LANYARD_ANDROID_APPS", problem: """
                    expected package=SHA256 fingerprint (32 colon-separated hex bytes), got \(entry)
                    """)
            }
            return AndroidApp(package: parts[0], fingerprint: parts[1].uppercased())
        }
        return settings
    }
}
