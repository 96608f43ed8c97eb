import Foundation

/// One signed-in device of the account, as `sessions()` lists it.
///
/// ```swift
/// for session in try await client.sessions() where !session.isCurrent {
///     try await client.revokeSession(session)
/// }
/// ```
public struct DeviceSession: Sendable, Equatable, Identifiable, Codable {
    /// The session's id.
    public var id: ID
    /// When the device signed in.
    public var createdAt: Date
    /// When the device last refreshed its tokens.
    public var lastRefreshedAt: Date
    /// When the session ends unless refreshed.
    public var expiresAt: Date
    /// When the person last proved who they are on that device.
    public var authTime: Date
    /// How it signed in: `apple`, `google` or `anonymous`.
    public var method: String
    /// The address the device signed in from.
    public var clientIP: String?
    /// The device's user agent.
    public var userAgent: String?
    /// This device.
    public var isCurrent: Bool

    /// Builds a session, for previews and tests.
    ///
    /// ```swift
    /// let phone = DeviceSession(id: "s1", createdAt: .now, lastRefreshedAt: .now, expiresAt: .now + 86_400,
    ///                           authTime: .now, method: "apple", isCurrent: true)
    /// ```
    public init(id: ID, createdAt: Date, lastRefreshedAt: Date, expiresAt: Date, authTime: Date, method: String,
                clientIP: String? = nil, userAgent: String? = nil, isCurrent: Bool) {
        self.id = id
        self.createdAt = createdAt
        self.lastRefreshedAt = lastRefreshedAt
        self.expiresAt = expiresAt
        self.authTime = authTime
        self.method = method
        self.clientIP = clientIP
        self.userAgent = userAgent
        self.isCurrent = isCurrent
    }

    enum CodingKeys: String, CodingKey {
        case id, method
        case createdAt = "created_at", lastRefreshedAt = "last_refreshed_at", expiresAt = "expires_at"
        case authTime = "auth_time", clientIP = "client_ip", userAgent = "user_agent", isCurrent = "current"
    }

    /// Writes every member, `null` ones too, as the server does.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastRefreshedAt, forKey: .lastRefreshedAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(authTime, forKey: .authTime)
        try container.encode(method, forKey: .method)
        try container.encode(clientIP, forKey: .clientIP)
        try container.encode(userAgent, forKey: .userAgent)
        try container.encode(isCurrent, forKey: .isCurrent)
    }
}

/// `GET /v1/sessions`: the account's signed-in devices.
///
/// ```swift
/// let list = try WireCoding.decoder().decode(SessionList.self, from: data)
/// ```
public struct SessionList: Sendable, Equatable, Codable {
    /// The active sessions, the caller's own marked `isCurrent`.
    public var sessions: [DeviceSession]

    /// Wraps a list of sessions.
    ///
    /// ```swift
    /// let list = SessionList(sessions: [])
    /// ```
    public init(sessions: [DeviceSession]) {
        self.sessions = sessions
    }
}

/// Which sessions `signOut(scope:)` ends.
///
/// ```swift
/// try await client.signOut(scope: .others) // every other device; this one stays signed in
/// ```
public enum SignOutScope: String, Sendable, Codable, CaseIterable {
    /// This device only.
    case local
    /// Every device, this one included.
    case global
    /// Every device but this one.
    case others
}
