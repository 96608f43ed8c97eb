import Foundation
import LanyardStore
import LanyardSupport

/// A session as `GET /v1/sessions` shows it.
public struct SessionView: Encodable, Sendable {
    public var id: String
    public var createdAt: Date
    public var lastRefreshedAt: Date
    public var expiresAt: Date
    public var authTime: Date
    public var method: String
    public var clientIP: String?
    public var userAgent: String?
    public var current: Bool

    enum CodingKeys: String, CodingKey {
        case id, method, current
        case createdAt = "created_at", lastRefreshedAt = "last_refreshed_at", expiresAt = "expires_at"
        case authTime = "auth_time", clientIp = "client_ip", userAgent = "user_agent"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastRefreshedAt, forKey: .lastRefreshedAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(authTime, forKey: .authTime)
        try container.encode(method, forKey: .method)
        try container.encode(clientIP, forKey: .clientIp)
        try container.encode(userAgent, forKey: .userAgent)
        try container.encode(current, forKey: .current)
    }
}

/// Sign-out and the account's list of signed-in devices.
public struct SessionManagement: Sendable {
    public enum SignOutScope: String, Sendable {
        case local, global, others
    }

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func list(for caller: Caller) async throws -> [SessionView] {
        let now = dependencies.clock.now()
        return try await dependencies.database.read { connection in
            try await SessionStore(connection).listActive(userID: caller.userID, at: now).map {
                SessionView(id: $0.id, createdAt: $0.createdAt, lastRefreshedAt: $0.refreshedAt, expiresAt: $0.expiresAt,
                            authTime: $0.authTime, method: $0.amr, clientIP: $0.clientIP, userAgent: $0.userAgent,
                            current: $0.id == caller.sessionID)
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
    }
}
