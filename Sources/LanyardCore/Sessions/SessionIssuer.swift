import Foundation
import LanyardStore
import LanyardSupport

/// The tokens handed to a device for one session.
public struct IssuedTokens: Sendable {
    public var accessToken: String
    public var refreshToken: String
    public var expiresIn: Int
    public var sessionID: String
}

/// Opens sessions: a `sessions` row, its first refresh token (stored hashed) and an access token.
struct SessionIssuer {
    let dependencies: CoreDependencies

    func open(userID: String, isAnonymous: Bool, method: String, client: ClientInfo,
              connection: any DatabaseConnection, now: Date) async throws -> IssuedTokens {
        let session = SessionRecord(
            id: dependencies.random.uuid().uuidString.lowercased(), userID: userID, createdAt: now,
            expiresAt: now.addingTimeInterval(dependencies.refreshTokenTTL), authTime: now, amr: method,
            clientIP: client.ip, userAgent: client.userAgent.map { String($0.prefix(512)) })
        try await SessionStore(connection).insert(session)
        let refreshToken = RefreshTokens.generate(dependencies.random)
        try await RefreshTokenStore(connection).insert(tokenHash: RefreshTokens.hash(refreshToken),
                                                       sessionID: session.id, at: now)
        return IssuedTokens(
            accessToken: try dependencies.accessTokens.issue(userID: userID, sessionID: session.id, authTime: now,
                                                              method: method, isAnonymous: isAnonymous),
            refreshToken: refreshToken, expiresIn: dependencies.accessTokens.lifetime, sessionID: session.id)
    }
}
