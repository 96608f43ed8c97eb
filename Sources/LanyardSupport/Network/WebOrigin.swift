import Foundation

/// A web origin as browsers send it in `Origin`: `scheme://host[:port]`, nothing after it.
public enum WebOrigin {
    /// `text` in the form browsers send (lower-case scheme and host, no default port, no path), or `nil` when it
    /// is not one exact http(s) origin (`*`, a path, a query, credentials).
    public static func canonical(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host?.lowercased(), !host.isEmpty,
              components.path.isEmpty, components.query == nil, components.fragment == nil,
              components.user == nil, components.password == nil
        else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = components.port.flatMap { $0 == defaultPort ? nil : ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)"
    }
}
