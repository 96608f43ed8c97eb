import Foundation
import LanyardStore
import LanyardSupport

/// `POST /v1/auth/refresh`: rotates a refresh token (DESIGN section 4).
public struct Refresh: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    enum Outcome: Sendable {
        case issued(SessionRecord, successor: String, account: UserView)
        case invalid
        case reused
    }

    public func refresh(token: String, client: ClientInfo) async throws -> SessionResponse {
        try await dependencies.rateLimiter.check(.signIn, key: client.ip)
        guard RefreshTokens.isWellFormed(token) else { throw LanyardError.invalidRefreshToken }
        let dependencies = self.dependencies
        // The outcome is returned rather than thrown so that a reuse's revocation commits.
        let outcome: Outcome = try await dependencies.database.transaction { connection in
            let now = dependencies.clock.now()
            let tokens = RefreshTokenStore(connection)
            guard let target = try await tokens.findForRefresh(tokenHash: RefreshTokens.hash(token)),
                  target.session.isActive(at: now)
            else { return .invalid }
            let session = target.session
            let successor = RefreshTokens.successor(of: token, key: dependencies.refreshSuccessorKey)
            switch RefreshTokens.decide(rotatedAt: target.token.rotatedAt, now: now, grace: dependencies.refreshReuseGrace) {
            case .rotate:
                try await tokens.rotate(target.token.tokenHash, to: RefreshTokens.hash(successor), sessionID: session.id,
                                        at: now, sessionExpiresAt: now.addingTimeInterval(dependencies.refreshTokenTTL))
                if UserStore.activityIsStale(target.owner.lastActiveAt, at: now) {
                    try await UserStore(connection).markActive(id: session.userID, at: now)
                }
            case .repeatWithinGrace:
                break
            case .reuse:
                try await SessionStore(connection).revoke(id: session.id, reason: "refresh_token_reused", at: now)
                try await AuditLog(connection, at: now, clientIP: client.ip)
                    .write(.refreshReuseDetected, userID: session.userID, sessionID: session.id)
                return .reused
            }
            return .issued(session, successor: successor,
                           account: UserView(user: target.owner, identities: target.ownerIdentities))
        }
        switch outcome {
        case .invalid:
            throw LanyardError.invalidRefreshToken
        case .reused:
            throw LanyardError.refreshTokenReused
        case .issued(let session, let successor, let account):
            let opened = OpenedSession(userID: session.userID, sessionID: session.id, refreshToken: successor,
                                       authTime: session.authTime, method: session.amr)
            return try await SessionIssuer(dependencies: dependencies).respond(opened, account: account, isNewUser: false)
        }
    }
}
