import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport
import struct LanyardWire.User

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

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func signIn(provider: Provider, request: SignInRequest, guest: Caller?, client: ClientInfo) async throws -> IssuedSession {
        let identity = try await IdentityProofs(dependencies).verify(
            .idToken(provider: provider, idToken: request.idToken, nonce: request.nonce), client: client)
        return try await signIn(identity, name: request.fullName ?? identity.name, guest: guest, client: client)
    }

    /// Signs in with an identity already proven (an ID token's, an email code's). `via` names a way the proof came
    /// other than the provider's own (`redirect`) in the audit.
    public func signIn(_ identity: VerifiedIdentity, name: String?, guest: Caller?, client: ClientInfo,
                       via: String? = nil) async throws -> IssuedSession {
        let lookup = try await dependencies.identityOwners.lookup(provider: identity.provider.rawValue, subject: identity.subject)
        let dependencies = self.dependencies
        let (landed, session) = try await dependencies.database.transactionRetryingConflicts { connection in
            let found = try await lookup.read(on: connection)
            if found?.owner.disabledAt != nil { throw LanyardError.accountDisabled }
            if found == nil, dependencies.signInMethods.method(identity.provider)?.createsAccounts == false {
                // Removed since it was verified: a passkey signs no one up.
                throw LanyardError.invalidPasskey("unknown_credential", "No account has this passkey; it may have been removed")
            }
            let guestAccount = if let guest { try await UserStore(connection).findForUpdate(id: guest.userID) } else { nil as UserRecord? }
            let decision = try SignInDecision.decide(
                guest: guestAccount.map { .init(id: $0.id, isAnonymous: $0.isAnonymous, mergedInto: $0.mergedInto) },
                bearerEndedByMerge: guest?.mergedInto != nil, identityOwner: found?.owner.id)
            let attempt = Attempt(dependencies: dependencies, connection: connection, now: dependencies.clock.now(),
                                  client: client, identity: identity, name: name, found: found, via: via)
            return try await attempt.carryOut(decision)
        }
        if let guestID = landed.mergedFrom {
            // The guest's records are now the account's, and the guest's sessions ended with the merge.
            dependencies.signals.recordsChanged([landed.userID], written: [])
            dependencies.signals.accessChanged([guestID])
        }
        return try await SessionIssuer(dependencies: dependencies).respond(session, account: landed.account,
                                                                           groups: landed.groups, legacyID: landed.legacyID,
                                                                           isNewUser: landed.isNewUser,
                                                                           mergedFrom: landed.mergedFrom)
    }

    /// Where a sign-in landed, for its answer.
    struct Landed: Sendable {
        var userID: String
        var isNewUser = false
        var mergedFrom: String?
        /// The account as the transaction leaves it, when known without reading it again, and its `groups` claim.
        var account: User?
        var groups = GroupsClaim.none
        /// The account's legacy id, read with `account`.
        var legacyID: String?
    }

    /// One attempt of a sign-in's transaction: carries out the decision, then opens the session.
    struct Attempt {
        let dependencies: CoreDependencies
        let connection: any DatabaseConnection
        let now: Date
        let client: ClientInfo
        let identity: VerifiedIdentity
        let name: String?
        let found: IdentityWithOwner?
        let via: String?
        var provider: String { identity.provider.rawValue }
        /// What the audit says of this sign-in: the provider, and how the proof came when not directly.
        var details: [String: String] { via.map { ["provider": provider, "via": $0] } ?? ["provider": provider] }
        var audit: AuditLog { dependencies.audit(connection, at: now, clientIP: client.ip) }

        func carryOut(_ decision: SignInDecision) async throws -> (Landed, OpenedSession) {
            let landed: Landed
            switch decision {
            case .landMergedGuest(let guestID, let target):
                landed = Landed(userID: target, mergedFrom: guestID)
            case .mergeGuest(let guestID, let target):
                // The guest's session is this request's: the guest's own side of any clash is `current`.
                let plan = MergePlan(mergeID: dependencies.random.newID(at: now), into: target, from: guestID,
                                     kind: .guest, actor: target, currentIsInto: false, at: now)
                _ = try await MergeEngine(dependencies: dependencies, connection: connection, audit: audit).run(plan)
                landed = Landed(userID: target, mergedFrom: guestID)
            case .upgradeGuest(let guestID):
                try await upgrade(guestID)
                landed = Landed(userID: guestID)
            case .signIn(let userID):
                landed = Landed(userID: userID, account: signedInAccount(),
                                groups: GroupsClaim(stored: found?.owner.groupClaims), legacyID: found?.owner.legacy?.id)
            case .signUp:
                landed = try await signUp()
            }
            try await keepAccountCurrent(landed)
            return (landed, try await openSession(for: landed.userID))
        }

        /// The guest gains the identity and stops being anonymous.
        private func upgrade(_ guestID: String) async throws {
            try await IdentityStore(connection).insert(IdentityRecord(identity, id: dependencies.random.newID(at: now),
                                                                      userID: guestID, linkedAt: now, lastSignInAt: now))
            try await UserStore(connection).setAnonymous(id: guestID, false, at: now)
            try await audit.write(.identityLinked, userID: guestID, details: details)
        }

        private func signUp() async throws -> Landed {
            let userID = switch dependencies.userIDStrategy {
            case .random: dependencies.random.newID(at: now)
            case .derived: DerivedUserID.make(provider: provider, subject: identity.subject)
            }
            let user = UserRecord(id: userID, createdAt: now, isAnonymous: false, displayName: name)
            let linked = IdentityRecord(identity, id: dependencies.random.newID(at: now), userID: userID,
                                        linkedAt: now, lastSignInAt: now)
            try await UserStore(connection).insert(user)
            try await IdentityStore(connection).insertFirst(linked)
            try await audit.write(.userCreated, userID: userID, details: details)
            return Landed(userID: userID, isNewUser: true, account: User(user: user, identities: [linked]))
        }

        /// The identity's account as this sign-in leaves it, from the read and the sign-in's own changes.
        private func signedInAccount() -> User? {
            guard let found else { return nil }
            var owner = found.owner
            if let name, owner.displayName == nil { owner.displayName = name }
            return User(user: owner, identities: found.ownerIdentities.map { known in
                guard known.id == found.identity.id, recordsSignIn else { return known }
                var signedIn = known
                signedIn.recordSignIn(at: now, email: identity.email, emailVerified: identity.emailVerified,
                                      isPrivateEmail: identity.isPrivateEmail)
                return signedIn
            })
        }

        /// Kept to the second: a repeat within it changes nothing stored about the identity (nor in the answer).
        private var recordsSignIn: Bool {
            found?.identity.signInChanges(at: now, email: identity.email, emailVerified: identity.emailVerified,
                                          isPrivateEmail: identity.isPrivateEmail) ?? false
        }

        /// A known account keeps its name, one without (a guest, say) takes the provider's; its activity is written
        /// only when it has gone stale (a new account starts active).
        private func keepAccountCurrent(_ landed: Landed) async throws {
            guard !landed.isNewUser else { return }
            let users = UserStore(connection)
            let keepsItsName = found.map { $0.owner.id == landed.userID && $0.owner.displayName != nil } ?? false
            if let name, !keepsItsName {
                try await users.setDisplayNameIfEmpty(id: landed.userID, to: name, at: now)
            }
            if found.map({ UserStore.activityIsStale($0.owner.lastActiveAt, at: now) }) ?? true {
                try await users.markActive(id: landed.userID, at: now)
            }
        }

        private func openSession(for userID: String) async throws -> OpenedSession {
            let opened = try await SessionIssuer(dependencies: dependencies).open(
                userID: userID, method: provider, client: client, connection: connection, now: now)
            try await audit.write(.signIn, userID: userID, sessionID: opened.sessionID, details: details)
            // Last, so concurrent sign-ins of one person hold this row's lock only until the commit.
            if let existing = found?.identity {
                try await IdentityStore(connection).recordSignIn(of: existing, at: now, email: identity.email,
                                                                 emailVerified: identity.emailVerified,
                                                                 isPrivateEmail: identity.isPrivateEmail)
            }
            return opened
        }
    }
}
