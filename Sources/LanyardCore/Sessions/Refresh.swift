import Foundation
import LanyardStore
import LanyardSupport
import struct LanyardWire.User

/// `POST /v1/auth/refresh`: rotates a refresh token (reference section 4).
public struct Refresh: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    enum Outcome: Sendable {
        case issued(SessionRecord, successor: String, account: User, groups: GroupsClaim, legacyID: String?)
        case reused
    }

    public func refresh(token: String, client: ClientInfo) async throws -> IssuedSession {
        guard RefreshTokens.isWellFormed(token) else { throw LanyardError.invalidRefreshToken }
        let dependencies = self.dependencies
        // Read before any transaction and unlocked: refreshes of one token that race all decide to rotate it,
        // and the rotation is idempotent.
        guard let target = try await dependencies.refreshTargets.find(tokenKey: RefreshTokens.storageKey(token)) else {
            throw LanyardError.invalidRefreshToken
        }
        let now = dependencies.clock.now()
        // A disabled account's sessions were ended with it: say why, rather than that the session ended.
        guard target.owner.disabledAt == nil else { throw LanyardError.accountDisabled }
        // An account a full merge absorbed: say into which, so the device can sign in there.
        if let into = target.owner.mergedInto, target.owner.mergeKind == "full" { throw LanyardError.accountMerged(into: into) }
        guard target.session.isActive(at: now) else { throw LanyardError.invalidRefreshToken }
        let session = target.session
        let successor = RefreshTokens.successor(of: token, session: session.id, key: dependencies.refreshSuccessorKey.bytes)
        let issued = Outcome.issued(session, successor: successor,
                                    account: User(user: target.owner, identities: target.ownerIdentities),
                                    groups: GroupsClaim(stored: target.owner.groupClaims), legacyID: target.owner.legacy?.id)
        // The outcome is returned rather than thrown so that a reuse's revocation commits.
        let outcome: Outcome = switch RefreshTokens.decide(rotatedAt: target.token.rotatedAt, now: now,
                                                           grace: dependencies.refreshReuseGrace) {
        case .rotate:
            try await rotate(target, to: successor, at: now, answering: issued)
        case .repeatWithinGrace:
            // Answered again with the successor the first rotation stored: nothing to write.
            issued
        case .reuse:
            try await revokeForReuse(session, client: client, at: now)
        }
        switch outcome {
        case .reused:
            dependencies.signals.accessChanged([target.session.userID])
            throw LanyardError.refreshTokenReused
        case .issued(let session, let successor, let account, let groups, let legacyID):
            let opened = OpenedSession(userID: session.userID, sessionID: session.id, refreshToken: successor,
                                       authTime: session.authTime, method: session.amr)
            return try await SessionIssuer(dependencies: dependencies).respond(opened, account: account, groups: groups,
                                                                               legacyID: legacyID, isNewUser: false)
        }
    }

    /// A rotated token presented again after the grace: the session is revoked, and the revocation commits.
    private func revokeForReuse(_ session: SessionRecord, client: ClientInfo, at now: Date) async throws -> Outcome {
        let dependencies = self.dependencies
        return try await dependencies.database.transactionRetryingConflicts { connection in
            try await SessionStore(connection).revoke(id: session.id, reason: "refresh_token_reused", at: now)
            try await dependencies.audit(connection, at: now, clientIP: client.ip)
                .write(.refreshReuseDetected, userID: session.userID, sessionID: session.id)
            return .reused
        }
    }

    /// Stores the rotation: the presented token used, its successor stored, the session extended
    /// (`RefreshRotations`).
    private func rotate(_ target: RefreshTarget, to successor: String, at now: Date,
                        answering issued: Outcome) async throws -> Outcome {
        let rotation = Rotation(tokenKey: target.token.tokenKey, successorKey: RefreshTokens.storageKey(successor),
                                sessionID: target.session.id, date: now,
                                sessionExpiresAt: now.addingTimeInterval(dependencies.refreshTokenTTL))
        let marksActive = UserStore.activityIsStale(target.owner.lastActiveAt, at: now)
        // False when the account, and the session with it, was deleted since the read.
        guard try await dependencies.refreshRotations.rotate(rotation, markingActive: marksActive ? target.session.userID : nil)
        else { throw LanyardError.invalidRefreshToken }
        return issued
    }
}
