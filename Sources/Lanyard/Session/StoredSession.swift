import Foundation

/// The session the client holds, as it is stored: both tokens, when the access token expires by the device's
/// clock, and the user as last seen.
struct StoredSession: Codable, Sendable, Equatable {
    var accessToken: String
    var refreshToken: String
    var expiresAt: Date
    var user: User

    static let storageKey = "session"

    init(accessToken: String, refreshToken: String, expiresAt: Date, user: User) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.user = user
    }

    init(_ payload: SessionResponse, receivedAt: Date) {
        self.init(accessToken: payload.accessToken, refreshToken: payload.refreshToken,
                  expiresAt: receivedAt.addingTimeInterval(TimeInterval(payload.expiresIn)), user: payload.user)
    }

    enum CodingKeys: String, CodingKey {
        case user
        case accessToken = "access_token", refreshToken = "refresh_token", expiresAt = "expires_at"
    }

    /// The access token's session id (`sid`), read without verification: the server verifies, the client only
    /// needs to know which of the listed sessions is its own.
    var sessionID: String? {
        let parts = accessToken.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
              let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return claims["sid"] as? String
    }
}
