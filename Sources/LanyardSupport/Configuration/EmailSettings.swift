import Foundation

/// Where mail goes: `LANYARD_SMTP_URL` (reference section 18). The password never appears in a description.
public struct SMTPEndpoint: Sendable, Equatable, CustomStringConvertible {
    public enum Security: String, Sendable {
        /// `smtp://`: plain connection upgraded with STARTTLS, which the server must offer.
        case startTLS
        /// `smtps://`: TLS from the first byte.
        case implicitTLS
        /// `smtp+insecure://`: no TLS at all, allowed only to a loopback host.
        case none
    }

    public var security: Security
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?

    public var description: String {
        let scheme = switch security { case .startTLS: "smtp"; case .implicitTLS: "smtps"; case .none: "smtp+insecure" }
        return "\(scheme)://\(username.map { "\($0):***@" } ?? "")\(host):\(port)"
    }

    /// Reads `smtp://user:pass@host:587`, `smtps://…:465` or `smtp+insecure://127.0.0.1:25`.
    public init?(url text: String) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty, components.path.isEmpty || components.path == "/"
        else { return nil }
        switch scheme {
        case "smtp": (security, port) = (.startTLS, components.port ?? 587)
        case "smtps": (security, port) = (.implicitTLS, components.port ?? 465)
        case "smtp+insecure":
            guard OIDCProviderConfiguration.isLoopback(host) else { return nil }
            (security, port) = (.none, components.port ?? 25)
        default: return nil
        }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.username = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
        self.password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
    }
}

/// Email codes and links (reference section 18): delivery, lifetimes, where links may lead, and the limits.
public struct EmailSettings: Sendable {
    /// nil: mail is kept in the emulator's mailbox (dev mode), or email is not offered (elsewhere).
    public var smtp: SMTPEndpoint?
    /// `LANYARD_SMTP_CA_FILE`: a PEM file of CAs trusted besides the system's.
    public var smtpCAFile: String?
    /// `LANYARD_EMAIL_FROM`: the `From:` of every mail.
    public var from = "Lanyard <no-reply@lanyard.localhost>"
    /// `LANYARD_EMAIL_TTL`: how long a flow lives.
    public var flowTTL: TimeInterval = 900
    /// `LANYARD_EMAIL_REDIRECT_URLS`: where a confirmed link may send the browser (exact match, any scheme).
    public var redirectURLs: [String] = []
    /// `LANYARD_EMAIL_TEMPLATES`: a folder whose `{intent}.subject`, `{intent}.txt` and `{intent}.html` replace the
    /// built-in mails.
    public var templatesFolder: String?
    /// Per address: the shortest gap between two mails and the most in an hour.
    public var addressInterval: TimeInterval = 60
    public var addressPerHour = 5
    /// Per client IP, per hour.
    public var ipPerHour = 30
    /// Per deployment, per hour (`LANYARD_EMAIL_MAX_PER_HOUR`): a bot cannot burn the sender's reputation.
    public var maxPerHour = 1_000
    /// Wrong codes per address per hour across all its flows (`LANYARD_EMAIL_WRONG_CODES_PER_HOUR`): past it, the
    /// address's codes are not checked and its starts are refused until the hour is over.
    public var wrongCodesPerHour = 10

    public init() {}

    /// The Content-Security-Policy source that lets the link page's form redirect to `url`: its origin for http(s)
    /// (the host in ASCII), its scheme for an app's own (`myapp:`); nil when none can be written.
    public static func formActionSource(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme.first?.isLetter == true,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        guard scheme == "http" || scheme == "https" else { return scheme + ":" }
        guard let host = components.encodedHost?.lowercased(), !host.isEmpty,
              host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.".contains($0)) }) else { return nil }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }

    /// Schemes a confirmed link never sends a browser to.
    static let refusedRedirectSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "ftp", "blob", "about", "filesystem"]

    /// The address part of `from` (`a@b` out of `Name <a@b>`), for `MAIL FROM` and `Message-ID`.
    public var fromAddress: String { Self.address(in: from) }

    static func address(in mailbox: String) -> String {
        guard let open = mailbox.lastIndex(of: "<"), let close = mailbox.lastIndex(of: ">"), open < close else { return mailbox }
        return String(mailbox[mailbox.index(after: open)..<close])
    }

    static func read(_ reader: EnvironmentReader, devMode: Bool) throws(ConfigurationError) -> EmailSettings {
        var settings = EmailSettings()
        if let text = reader.string("LANYARD_SMTP_URL") {
            guard let endpoint = SMTPEndpoint(url: text) else {
                throw ConfigurationError(variable: "LANYARD_SMTP_URL", problem: """
                    expected smtp://user:pass@host:587 (STARTTLS required), smtps://user:pass@host:465 (TLS), or \
                    smtp+insecure://127.0.0.1:port (loopback only)
                    """)
            }
            settings.smtp = endpoint
        }
        if let file = reader.string("LANYARD_SMTP_CA_FILE") {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw ConfigurationError(variable: "LANYARD_SMTP_CA_FILE", problem: "\(file) cannot be read")
            }
            settings.smtpCAFile = file
        }
        if let from = reader.string("LANYARD_EMAIL_FROM") {
            guard !from.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
                  (try? EmailAddress(address(in: from))) != nil
            else { throw ConfigurationError(variable: "LANYARD_EMAIL_FROM", problem: "expected an address or Name <address>, one line") }
            settings.from = from
        } else if settings.smtp != nil, !devMode {
            throw ConfigurationError(variable: "LANYARD_EMAIL_FROM", problem: "is required with LANYARD_SMTP_URL")
        }
        settings.flowTTL = try reader.seconds("LANYARD_EMAIL_TTL", minimum: 60) ?? settings.flowTTL
        settings.redirectURLs = try reader.list("LANYARD_EMAIL_REDIRECT_URLS").map { (url) throws(ConfigurationError) in
            guard let components = URLComponents(string: url), let scheme = components.scheme, !scheme.isEmpty,
                  components.fragment == nil else {
                throw ConfigurationError(variable: "LANYARD_EMAIL_REDIRECT_URLS", problem: "\(url) is not an absolute URL")
            }
            // An app's own scheme or a web page; never a scheme that runs or reads something in the browser. The
            // link's page must be able to name it in its Content-Security-Policy, or a browser would stay there.
            guard !Self.refusedRedirectSchemes.contains(scheme.lowercased()), Self.formActionSource(url) != nil else {
                throw ConfigurationError(variable: "LANYARD_EMAIL_REDIRECT_URLS",
                                         problem: "\(url): expected https://host, http://host or an app's own scheme")
            }
            return url
        }
        if let folder = reader.string("LANYARD_EMAIL_TEMPLATES") {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw ConfigurationError(variable: "LANYARD_EMAIL_TEMPLATES", problem: "\(folder) is not a folder")
            }
            settings.templatesFolder = folder
        }
        settings.addressInterval = try reader.seconds("LANYARD_EMAIL_ADDRESS_INTERVAL", minimum: 0) ?? settings.addressInterval
        settings.addressPerHour = try reader.integer("LANYARD_EMAIL_ADDRESS_PER_HOUR", in: 1...1_000) ?? settings.addressPerHour
        settings.ipPerHour = try reader.integer("LANYARD_EMAIL_IP_PER_HOUR", in: 1...1_000_000) ?? settings.ipPerHour
        settings.maxPerHour = try reader.integer("LANYARD_EMAIL_MAX_PER_HOUR", in: 1...10_000_000) ?? settings.maxPerHour
        settings.wrongCodesPerHour = try reader.integer("LANYARD_EMAIL_WRONG_CODES_PER_HOUR", in: 1...1_000)
            ?? settings.wrongCodesPerHour
        return settings
    }
}
