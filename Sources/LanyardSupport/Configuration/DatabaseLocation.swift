import Foundation

/// Where the data lives, parsed from `LANYARD_DATABASE_URL`.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqliteFile(path: String)
    case sqliteMemory
    case postgres(PostgresLocation)

    public struct PostgresLocation: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String?
        public var database: String
        /// `sslmode` from the query string: `disable`, `prefer` (default) or `require`.
        public var tlsMode: String
        /// `prepared_statements=off` in the query string runs every statement unnamed, for poolers in
        /// transaction mode that cannot keep a connection's prepared statements (older PgBouncer).
        public var preparedStatements: Bool
        /// A directory holding the server's Unix-domain socket (`?host=/var/run/postgresql`, as libpq spells
        /// it) instead of a TCP host, for a server on the same machine.
        public var socketDirectory: String?

        public init(host: String, port: Int, username: String, password: String?, database: String, tlsMode: String,
                    preparedStatements: Bool = true, socketDirectory: String? = nil) {
            self.socketDirectory = socketDirectory
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
            self.tlsMode = tlsMode
            self.preparedStatements = preparedStatements
        }
    }

    /// Parses `sqlite:PATH`, `sqlite::memory:` or `postgres://user:pass@host:port/db`; `nil` if it is none of them.
    public init?(url: String) {
        if url == "sqlite::memory:" {
            self = .sqliteMemory
            return
        }
        if url.hasPrefix("sqlite:") {
            var path = String(url.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty else { return nil }
            self = .sqliteFile(path: path)
            return
        }
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://"),
              let components = URLComponents(string: url),
              let user = components.user, !user.isEmpty
        else { return nil }
        func option(_ name: String) -> String? { components.queryItems?.first(where: { $0.name == name })?.value }
        let socketDirectory = option("host")
        if let socketDirectory, !socketDirectory.hasPrefix("/") { return nil }
        let host = components.host ?? ""
        guard !host.isEmpty || socketDirectory != nil else { return nil }
        var port = components.port ?? 5432
        if let text = option("port") {
            guard let number = Int(text), (1...65535).contains(number) else { return nil }
            port = number
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty else { return nil }
        let tlsMode = option("sslmode") ?? "prefer"
        guard ["disable", "prefer", "require"].contains(tlsMode) else { return nil }
        let prepared = option("prepared_statements") ?? "on"
        guard ["on", "off"].contains(prepared) else { return nil }
        self = .postgres(PostgresLocation(
            host: host, port: port,
            username: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database, tlsMode: tlsMode, preparedStatements: prepared == "on", socketDirectory: socketDirectory))
    }

    public var isPostgres: Bool {
        if case .postgres = self { return true }
        return false
    }

    /// Printable without the password.
    public var description: String {
        switch self {
        case .sqliteFile(let path): "sqlite:\(path)"
        case .sqliteMemory: "sqlite::memory:"
        case .postgres(let location):
            if let directory = location.socketDirectory {
                "postgres://\(location.username)@/\(location.database)?host=\(directory) (port \(location.port))"
            } else {
                "postgres://\(location.username)@\(location.host):\(location.port)/\(location.database)"
            }
        }
    }
}
