import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

/// Sign-out and the account's list of signed-in devices.
public struct SessionManagement: Sendable {
    public typealias SignOutScope = LanyardWire.SignOutScope

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func list(for caller: Caller) async throws -> [DeviceSession] {
        let now = dependencies.clock.now()
        return try await dependencies.database.read { connection in
            try await SessionStore(connection).listActive(userID: caller.userID, at: now).map {
                DeviceSession(id: .init($0.id), createdAt: $0.createdAt, lastRefreshedAt: $0.refreshedAt, expiresAt: $0.expiresAt,
                              authTime: $0.authTime, method: $0.amr, clientIP: $0.clientIP, userAgent: $0.userAgent,
                              isCurrent: $0.id == caller.sessionID)
            }
        }
    }

    public func signOut(_ caller: Caller, scope: SignOutScope, client: ClientInfo) async throws {
        let dependencies = self.dependencies
        try await dependencies.database.transaction { connection in
            let now = dependencies.clock.now()
            let sessions = SessionStore(connection)
            switch scope {
            case .local: try await sessions.revoke(id: caller.sessionID, reason: "signed_out", at: now)
            case .global: try await sessions.revokeAll(userID: caller.userID, reason: "signed_out", at: now)
            case .others: try await sessions.revokeAll(userID: caller.userID, keeping: caller.sessionID,
                                                       reason: "signed_out", at: now)
            }
            try await dependencies.audit(connection, at: now, clientIP: client.ip)
                .write(.signOut, userID: caller.userID, sessionID: caller.sessionID, details: ["scope": scope.rawValue])
        }
        dependencies.signals.accessChanged([caller.userID])
    }

    /// `DELETE /v1/sessions/{id}`: only the caller's own sessions; others are `NOT_FOUND`.
    public func revoke(sessionID: String, caller: Caller, client: ClientInfo) async throws {
        let dependencies = self.dependencies
        try await dependencies.database.transaction { connection in
            let now = dependencies.clock.now()
            let sessions = SessionStore(connection)
            guard let session = try await sessions.find(id: sessionID), session.userID == caller.userID,
                  session.isActive(at: now) else {
                throw LanyardError.notFound("No such session")
            }
            try await sessions.revoke(id: sessionID, reason: "revoked", at: now)
            try await dependencies.audit(connection, at: now, clientIP: client.ip)
                .write(.sessionRevoked, userID: caller.userID, sessionID: sessionID)
        }
        dependencies.signals.accessChanged([caller.userID])
    }
}
