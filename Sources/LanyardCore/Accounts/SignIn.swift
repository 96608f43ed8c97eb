import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport

/// `POST /v1/auth/signin/{provider}`.
public struct SignInRequest: Sendable {
    public var idToken: String
    public var nonce: String?
    public var givenName: String?
    public var familyName: String?

    public init(idToken: String, nonce: String?, givenName: String?, familyName: String?) {
        self.idToken = idToken
        self.nonce = nonce
        self.givenName = givenName
        self.familyName = familyName
    }

    /// Apple sends the name only on the first authorization, outside the token.
    var fullName: String? {
        let name = [givenName, familyName].compactMap { $0?.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty ? nil : String(name.prefix(200))
    }
}

/// Signs a person in with a provider ID token: finds the account by (provider, sub) or creates one.
/// With the bearer of an anonymous account, a new identity upgrades that account in place, and an identity
/// that already has an account signs into it and merges the guest into it.
public struct SignIn: Sendable {
    let dependencies: CoreDependencies
    let merge: AccountMerge

    public init(_ dependencies: CoreDependencies, merge: AccountMerge = AccountMerge()) {
        self.dependencies = dependencies
        self.merge = merge
    }

    public func signIn(provider: Provider, request: SignInRequest, guest: Caller?, client: ClientInfo) async throws -> SessionResponse {
        try await dependencies.rateLimiter.check(.signIn, key: client.ip)
        let identity = try await dependencies.providerTokens.verify(request.idToken, provider: provider, nonce: request.nonce)
        let dependencies = self.dependencies
        let merge = self.merge
        // On PostgreSQL the identity is read before the transaction, batched with other sign-ins' (it was read
        // before `BEGIN` anyway, `IdentityOwnerReader`); a retry reads it again inside.
        var firstRead: FirstAttempt<IdentityWithOwner?>?
        if let batched = dependencies.identityOwners.batched(provider: provider.rawValue) {
            firstRead = FirstAttempt(try await batched.read(identity.subject))
        }
        let (opened, isNewUser, mergedFrom, account) = try await dependencies.database.transactionRetryingConflicts { [firstRead] connection in
            let now = dependencies.clock.now()
            let audit = dependencies.audit(connection, at: now, clientIP: client.ip)
            let users = UserStore(connection)
            let identities = IdentityStore(connection)
            let found = if let prefetched = firstRead?.take() {
                prefetched
            } else {
                try await identities.findWithOwner(provider: provider.rawValue, providerUserID: identity.subject)
            }
            let existing = found?.identity
            if found?.owner.disabledAt != nil { throw LanyardError.accountDisabled }
            let name = request.fullName ?? identity.name
            // Kept to the second: a repeat within it changes nothing stored about the identity (nor in the answer).
            let recordsSignIn = existing?.signInChanges(at: now, email: identity.email, emailVerified: identity.emailVerified,
                                                        isPrivateEmail: identity.isPrivateEmail) ?? false

            var userID: String
            var isNewUser = false
            var mergedFrom: String?
            // The account as this transaction leaves it, when known without reading it again.
            var account: UserView?
            if let guest, let guestUser = try await users.findForUpdate(id: guest.userID), guestUser.isAnonymous {
                if let target = guestUser.mergedInto {
                    // A retry after a lost response: the merge already happened; land in the same account again.
                    guard existing?.userID == target else { throw LanyardError.unauthorized("This session has ended") }
                    userID = target
                    mergedFrom = guestUser.id
                } else if let existing {
                    userID = existing.userID
                    mergedFrom = guestUser.id
                    try await merge.merge(anonymous: guestUser, into: existing.userID, connection: connection,
                                          audit: audit, now: now)
                } else {
                    // Upgrade in place: the guest keeps their id and everything attached to it.
                    userID = guestUser.id
                    try await identities.insert(IdentityRecord(identity, id: dependencies.random.newID(at: now), userID: userID,
                                                               linkedAt: now, lastSignInAt: now))
                    try await users.setAnonymous(id: userID, false, at: now)
                    try await audit.write(.identityLinked, userID: userID, details: ["provider": provider.rawValue])
                }
            } else if let guest, guest.mergedInto != nil {
                throw LanyardError.unauthorized("This session has ended")
            } else if let found {
                userID = found.owner.id
                var owner = found.owner
                if let name, owner.displayName == nil { owner.displayName = name }
                account = UserView(user: owner, identities: found.ownerIdentities.map { known in
                    guard known.id == found.identity.id, recordsSignIn else { return known }
                    var signedIn = known
                    signedIn.recordSignIn(at: now, email: identity.email, emailVerified: identity.emailVerified,
                                          isPrivateEmail: identity.isPrivateEmail)
                    return signedIn
                })
            } else {
                userID = switch dependencies.userIDStrategy {
                case .random: dependencies.random.newID(at: now)
                case .derived: DerivedUserID.make(provider: provider.rawValue, subject: identity.subject)
                }
                isNewUser = true
                let user = UserRecord(id: userID, createdAt: now, isAnonymous: false, displayName: name)
                let linked = IdentityRecord(identity, id: dependencies.random.newID(at: now), userID: userID,
                                            linkedAt: now, lastSignInAt: now)
                try await users.insert(user)
                try await identities.insertFirst(linked)
                try await audit.write(.userCreated, userID: userID, details: ["provider": provider.rawValue])
                account = UserView(user: user, identities: [linked])
            }

            // A known account keeps its name; one without (a guest, say) takes the provider's.
            let keepsItsName = found.map { $0.owner.id == userID && $0.owner.displayName != nil } ?? false
            if let name, !isNewUser, !keepsItsName {
                try await users.setDisplayNameIfEmpty(id: userID, to: name, at: now)
            }
            // A new account starts active; a known one's activity is written only when it has gone stale.
            if !isNewUser, found.map({ UserStore.activityIsStale($0.owner.lastActiveAt, at: now) }) ?? true {
                try await users.markActive(id: userID, at: now)
            }
            let opened = try await SessionIssuer(dependencies: dependencies).open(
                userID: userID, method: provider.rawValue, client: client, connection: connection, now: now)
            try await audit.write(.signIn, userID: userID, sessionID: opened.sessionID,
                                  details: ["provider": provider.rawValue])
            // Last, so concurrent sign-ins of one person hold this row's lock only until the commit.
            if let existing {
                try await identities.recordSignIn(of: existing, at: now, email: identity.email,
                                                  emailVerified: identity.emailVerified,
                                                  isPrivateEmail: identity.isPrivateEmail)
            }
            return (opened, isNewUser, mergedFrom, account)
        }
        return try await SessionIssuer(dependencies: dependencies).respond(opened, account: account, isNewUser: isNewUser,
                                                                           mergedFrom: mergedFrom)
    }

}
