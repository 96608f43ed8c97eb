import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport

/// `POST /v1/auth/reauthenticate/{provider}`: proves the person is still there, with an ID token of one of
/// the account's own identities. The device gets a new session with a fresh `auth_time`; the old one ends.
public struct Reauthentication: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func reauthenticate(provider: Provider, idToken: String, nonce: String?, caller: Caller,
                               client: ClientInfo) async throws -> IssuedSession {
        let identity = try await IdentityProofs(dependencies).verify(.idToken(provider: provider, idToken: idToken, nonce: nonce),
                                                                     client: client)
        return try await reauthenticate(identity, caller: caller, client: client)
    }

    /// Re-authenticates with an identity already proven (an ID token's, an email code's).
    public func reauthenticate(_ identity: VerifiedIdentity, caller: Caller, client: ClientInfo) async throws -> IssuedSession {
        let provider = identity.provider
        let dependencies = self.dependencies
        // Retried when the account's deletion races it (a deadlock, or the account gone before the insert): the
        // retry finds the identity gone with it.
        let opened = try await dependencies.database.transactionRetryingConflicts { connection in
            let now = dependencies.clock.now()
            // The old session ends first, and only once: of requests racing with one session (or a sign-out beside
            // them), one gets the new session; the rest wait for this row and find it ended.
            guard try await SessionStore(connection).revoke(id: caller.sessionID, reason: "reauthenticated", at: now) else {
                throw LanyardError.sessionEnded
            }
            let identities = IdentityStore(connection)
            let existing = try await identities.find(provider: provider.rawValue, providerUserID: identity.subject)
            guard let existing, existing.userID == caller.userID else {
                // Its identities go with a deleted account: say which is the case.
                guard let (_, owned) = try await UserStore(connection).findWithIdentities(id: caller.userID) else {
                    throw LanyardError.unauthorized("This account no longer exists")
                }
                throw LanyardError.identityNotOnAccount(dependencies.signInMethods.displayName(provider),
                                                        accountHasProvider: owned.contains { $0.provider == provider.rawValue })
            }
            try await identities.recordSignIn(of: existing, at: now, email: identity.email,
                                              emailVerified: identity.emailVerified, isPrivateEmail: identity.isPrivateEmail)
            let opened = try await SessionIssuer(dependencies: dependencies).open(
                userID: caller.userID, method: provider.rawValue, client: client, connection: connection, now: now)
            try await dependencies.audit(connection, at: now, clientIP: client.ip)
                .write(.reauthenticated, userID: caller.userID, sessionID: opened.sessionID,
                       details: ["provider": provider.rawValue, "previous_session": caller.sessionID])
            return opened
        }
        dependencies.signals.accessChanged([caller.userID])
        return try await SessionIssuer(dependencies: dependencies).respond(opened, isNewUser: false)
    }
}
