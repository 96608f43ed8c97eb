import Foundation
import LanyardStore
import LanyardSupport

/// `DELETE /v1/users/me`: the account, its identities, sessions and data go in one transaction; its tokens stop
/// working at once and its provider accounts can sign up afresh.
public struct AccountDeletion: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func delete(_ caller: Caller, client: ClientInfo) async throws {
        try Authenticator(dependencies).requireRecentSignIn(caller)
        let dependencies = self.dependencies
        // Retried when a concurrent request that locked one of the account's rows first made it deadlock.
        try await dependencies.database.transactionRetryingConflicts { connection in
            let users = UserStore(connection)
            guard try await users.findForUpdate(id: caller.userID) != nil else {
                throw LanyardError.unauthorized("This account no longer exists")
            }
            let providers = try await IdentityStore(connection).list(userID: caller.userID).map(\.provider)
            // Identities, sessions and refresh tokens go with the account (ON DELETE CASCADE).
            try await users.delete(id: caller.userID)
            try await AuditLog(connection, at: dependencies.clock.now(), clientIP: client.ip)
                .write(.userDeleted, userID: caller.userID, sessionID: caller.sessionID,
                       details: ["providers": providers.joined(separator: ",")])
        }
    }
}
