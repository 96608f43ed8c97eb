import Foundation
import LanyardStore
import LanyardSupport

/// Guests: accounts with no identity yet, and the clean-up of the ones that never came back.
public struct AnonymousAccounts: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// `POST /v1/auth/anonymous`.
    public func create(client: ClientInfo) async throws -> IssuedSession {
        let dependencies = self.dependencies
        let opened = try await dependencies.database.transaction { connection in
            let now = dependencies.clock.now()
            let userID = dependencies.random.newID(at: now)
            try await UserStore(connection).insert(UserRecord(id: userID, createdAt: now, isAnonymous: true))
            let opened = try await SessionIssuer(dependencies: dependencies).open(
                userID: userID, method: "anonymous", client: client, connection: connection, now: now)
            let audit = dependencies.audit(connection, at: now, clientIP: client.ip)
            try await audit.write(.userCreated, userID: userID, sessionID: opened.sessionID, details: ["provider": "anonymous"])
            return opened
        }
        return try await SessionIssuer(dependencies: dependencies).respond(opened, isNewUser: true)
    }

    /// `lanyard users purge-anonymous`: deletes anonymous accounts idle since `cutoff`, and only those.
    /// - Returns: how many were deleted.
    public func purge(idleSince cutoff: Date) async throws -> Int {
        var total = 0
        let dependencies = self.dependencies
        while true {
            let deleted = try await dependencies.database.transaction { connection in
                let ids = try await UserStore(connection).deleteIdleAnonymous(before: cutoff, limit: 500)
                let audit = dependencies.audit(connection, at: dependencies.clock.now(), clientIP: nil)
                for id in ids {
                    try await audit.write(.anonymousPurged, userID: id)
                }
                return ids.count
            }
            total += deleted
            if deleted < 500 { return total }
        }
    }
}
