import Foundation
import LanyardProviders
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
        try await remove(userID: caller.userID, sessionID: caller.sessionID, client: client, actor: nil,
                         missing: LanyardError.unauthorized("This account no longer exists"))
    }

    /// An operator's deletion (`DELETE /v1/admin/users/{id}`): the same effects, no recent sign-in needed.
    public func deleteByAdmin(userID: String, client: ClientInfo) async throws {
        try await remove(userID: userID, sessionID: nil, client: client, actor: "admin",
                         missing: LanyardError.notFound("No such account"))
    }

    private func remove(userID: String, sessionID: String?, client: ClientInfo, actor: String?,
                        missing: LanyardError) async throws {
        let dependencies = self.dependencies
        // Retried when a concurrent request that locked one of the account's rows first made it deadlock.
        let affected = try await dependencies.database.transactionRetryingConflicts { connection in
            let users = UserStore(connection)
            guard try await users.findForUpdate(id: userID) != nil else { throw missing }
            let providers = try await IdentityStore(connection).list(userID: userID).map(\.provider)
            // Apple is owed the revocation of the account's Apple tokens (sent later, never waited for here).
            if providers.contains(where: dependencies.signInMethods.owesAppleRevocation) {
                try await AppleTokenStore(connection).scheduleRevocation(userID: userID, at: dependencies.clock.now())
            }
            // Memberships go now, and the groups it owned pass on or dissolve (reference section 14).
            let affected = try await GroupLifecycle.accountDeleting(userID, connection, dependencies, clientIP: client.ip)
            // Identities, sessions and refresh tokens go with the account (ON DELETE CASCADE).
            try await users.delete(id: userID)
            var details = ["providers": providers.joined(separator: ",")]
            details["actor"] = actor
            try await dependencies.audit(connection, at: dependencies.clock.now(), clientIP: client.ip)
                .write(.userDeleted, userID: userID, sessionID: sessionID, details: details)
            return affected
        }
        dependencies.signals.accessChanged([userID] + affected)
    }
}
