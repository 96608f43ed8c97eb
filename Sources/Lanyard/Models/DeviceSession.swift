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
    public var id: String
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

    enum CodingKeys: String, CodingKey {
        case id, method
        case createdAt = "created_at", lastRefreshedAt = "last_refreshed_at", expiresAt = "expires_at"
        case authTime = "auth_time", clientIP = "client_ip", userAgent = "user_agent", isCurrent = "current"
    }
}

/// Which sessions `signOut(scope:)` ends.
///
/// ```swift
/// try await client.signOut(scope: .others) // every other device; this one stays signed in
/// ```
public enum SignOutScope: String, Sendable {
    /// This device only.
    case local
    /// Every device, this one included.
    case global
    /// Every device but this one.
    case others
}
