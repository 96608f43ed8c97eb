import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport
import LanyardWire

/// `POST /v1/auth/migrate/{source}` (reference section 24): the updated app sends the old system's session once
/// and gets a Lanyard session, with no sign-in screen. The account whose legacy id matches answers (imported
/// earlier); otherwise, where the token names identities (Firebase) or the user is anonymous there, a new account
/// is made with them and the legacy id. A legacy id bridges into exactly one account under any race: the unique
/// index on (`legacy_id`, `legacy_source`) refuses the second, whose retry reads the first's account.
public struct Bridge: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func migrate(_ proof: IdentityProof, client: ClientInfo) async throws -> IssuedSession {
        let session = try await IdentityProofs(dependencies).verifyLegacySession(proof)
        let dependencies = self.dependencies
        let legacy = LegacyAccountID(source: session.source.rawValue, id: session.legacyID)
        let landed = try await dependencies.database.transactionRetryingConflicts { connection in
            let now = dependencies.clock.now()
            let store = ImportStore(connection)
            let decision = try await Self.decide(session, legacy: legacy, store: store, connection: connection)
            let attempt = Attempt(dependencies: dependencies, connection: connection, now: now, client: client,
                                  session: session, legacy: legacy)
            return try await attempt.carryOut(decision)
        }
        return try await SessionIssuer(dependencies: dependencies).respond(landed.opened, isNewUser: landed.isNewUser)
    }

    /// What the bridge does, from what the transaction read.
    enum Decision: Equatable {
        /// The account carrying the legacy id (or the one it was merged into).
        case answer(userID: String)
        /// The account holding the token's identities, which has no legacy id of this source yet: it gains it.
        case adopt(userID: String)
        /// A new account with the token's identities (none for a guest) and the legacy id.
        case create
    }

    static func decide(_ session: VerifiedLegacySession, legacy: LegacyAccountID, store: ImportStore,
                       connection: any DatabaseConnection) async throws -> Decision {
        if let account = try await store.findAccount(legacy) {
            return try await answer(account, connection: connection)
        }
        var holders: [String: LegacyAccountID?] = [:]
        var heldBySubject: Set<String> = []
        for identity in session.identities {
            if let owner = try await store.identityOwners(provider: identity.provider.rawValue, subjects: [identity.subject])[identity.subject] {
                holders[owner.userID] = owner.legacy
                if identity.provider != .email { heldBySubject.insert(owner.userID) }
            }
        }
        // Each read sees what was committed when it ran (PostgreSQL's read committed): a racing crossing of this same
        // old session may have committed its account between the legacy-id read above and these. That account is the
        // one a serial run would have answered, not another person's.
        if let mine = holders.first(where: { $0.value == legacy })?.key,
           let account = try await UserStore(connection).find(id: mine) {
            return try await answer(account, connection: connection)
        }
        switch holders.count {
        case 0:
            guard !session.identities.isEmpty || session.isAnonymous else {
                throw LanyardError(.notFound, """
                    No account carries this \(session.source.rawValue) user's id: import the users before shipping the bridge
                    """, details: ["reason": "not_imported"])
            }
            return .create
        case 1:
            let (userID, held) = holders.first!
            // An address alone never joins two people (an old address may be someone else's now): only a provider's
            // subject finds the account to adopt.
            guard heldBySubject.contains(userID) else { throw LanyardError.identityInUse("email", mergeAvailable: false) }
            // Another person's old account, as far as the legacy ids say: reported, never joined.
            if held != nil { throw LanyardError.identityInUse(session.identities[0].provider.rawValue, mergeAvailable: false) }
            guard let account = try await UserStore(connection).find(id: userID), account.mergedInto == nil else {
                throw StoreError.serializationFailure
            }
            guard account.disabledAt == nil else { throw LanyardError.accountDisabled }
            return .adopt(userID: userID)
        default:
            // The token's identities are on two accounts here: which one is the person's is not the bridge's call.
            throw LanyardError.identityInUse(session.identities[0].provider.rawValue, mergeAvailable: false)
        }
    }

    /// The account carrying the legacy id answers; a bridged guest that signed in with an identity of another
    /// account was merged into it, and that one answers.
    private static func answer(_ found: UserRecord, connection: any DatabaseConnection) async throws -> Decision {
        var account = found
        while let target = account.mergedInto, let next = try await UserStore(connection).find(id: target) { account = next }
        guard account.disabledAt == nil else { throw LanyardError.accountDisabled }
        return .answer(userID: account.id)
    }

    struct Landed: Sendable {
        var opened: OpenedSession
        var isNewUser: Bool
    }

    struct Attempt {
        let dependencies: CoreDependencies
        let connection: any DatabaseConnection
        let now: Date
        let client: ClientInfo
        let session: VerifiedLegacySession
        let legacy: LegacyAccountID
        var method: String { session.source.rawValue }
        var audit: AuditLog { dependencies.audit(connection, at: now, clientIP: client.ip) }

        func carryOut(_ decision: Decision) async throws -> Landed {
            let userID: String
            var isNewUser = false
            switch decision {
            case .answer(let id):
                userID = id
                if let account = try await UserStore(connection).find(id: id), UserStore.activityIsStale(account.lastActiveAt, at: now) {
                    try await UserStore(connection).markActive(id: id, at: now)
                }
                // The account's first appearance here (nobody has signed into it): the identities its export left out
                // join it (Apple before firebase-tools 15.19, a provider linked after the export). Only then, so an
                // identity the person has since unlinked, or Apple has deleted, does not come back with a later
                // crossing; never an address, which is no proof of being the same person.
                if try await !ImportStore(connection).hasSessions(userID: id) {
                    var leftOut: [VerifiedIdentity] = []
                    for identity in try await missing(from: id) where identity.provider != .email {
                        if try await ImportStore(connection).identityOwners(provider: identity.provider.rawValue,
                                                                            subjects: [identity.subject]).isEmpty {
                            leftOut.append(identity)
                        }
                    }
                    try await link(leftOut, to: id)
                }
            case .adopt(let id):
                userID = id
                guard try await ImportStore(connection).setLegacy(legacy, userID: id, at: now) else {
                    // It gained a legacy id meanwhile: read again.
                    throw StoreError.serializationFailure
                }
                try await link(try await missing(from: id), to: id)
                try await UserStore(connection).markActive(id: id, at: now)
            case .create:
                userID = try await create()
                isNewUser = true
            }
            // Not a sign-in: the session counts from the old system's sign-in where the token says when (Firebase),
            // else from long ago, so changing the account's ways in asks the person to sign in first.
            let opened = try await SessionIssuer(dependencies: dependencies).open(
                userID: userID, method: method, client: client, connection: connection, now: now,
                signedInAt: session.signedInAt ?? Date(timeIntervalSince1970: 0))
            try await audit.write(.signIn, userID: userID, sessionID: opened.sessionID, details: ["provider": method])
            try await audit.write(.userMigrated, userID: userID, sessionID: opened.sessionID, details: [
                "legacy_id": legacy.id, "legacy_source": legacy.source, "is_new_user": isNewUser ? "true" : "false"])
            return Landed(opened: opened, isNewUser: isNewUser)
        }

        /// A new account: a guest, or the token's identities in its order (the first the primary), with the legacy id.
        private func create() async throws -> String {
            let userID = try await keptID() ?? dependencies.random.newID(at: now)
            var user = UserRecord(id: userID, createdAt: now, isAnonymous: session.identities.isEmpty,
                                  displayName: session.identities.lazy.compactMap(\.name).first)
            user.legacy = legacy
            try await ImportStore(connection).insertAccount(user)
            for (position, identity) in session.identities.enumerated() {
                try await IdentityStore(connection).insert(IdentityRecord(identity, id: dependencies.random.newID(at: now),
                                                                          userID: userID, linkedAt: now, lastSignInAt: now),
                                                           at: Int64(position + 1))
            }
            var details = ["legacy_id": legacy.id, "legacy_source": legacy.source, "actor": "bridge"]
            details["provider"] = session.identities.first?.provider.rawValue
            try await audit.write(.userCreated, userID: userID, details: details)
            return userID
        }

        /// A Supabase user's UUID as their Lanyard id (`LANYARD_SUPABASE_KEEP_IDS`), where no account has it: the
        /// app's rows keyed by it stay theirs. A racing crossing of the same session that takes it first makes this
        /// insert fail, and the retry answers with that crossing's account.
        private func keptID() async throws -> String? {
            guard session.source == .supabase, dependencies.legacySessions.settings.supabaseKeepIDs,
                  try await UserStore(connection).find(id: legacy.id) == nil else { return nil }
            return legacy.id
        }

        /// The token's identities of providers the account has none of.
        private func missing(from userID: String) async throws -> [VerifiedIdentity] {
            let held = try await IdentityStore(connection).list(userID: userID)
            return session.identities.filter { identity in !held.contains { $0.provider == identity.provider.rawValue } }
        }

        /// Links `identities` to the account, after its others, as `Linking` does: a guest gaining one is no longer a
        /// guest, and an account without a name takes the first the identities carry.
        private func link(_ identities: [VerifiedIdentity], to userID: String) async throws {
            guard !identities.isEmpty else { return }
            var position = try await ImportStore(connection).nextLinkPosition(userID: userID)
            for identity in identities {
                try await IdentityStore(connection).link(IdentityRecord(identity, id: dependencies.random.newID(at: now),
                                                                        userID: userID, linkedAt: now, lastSignInAt: now),
                                                         at: Int64(position))
                try await audit.write(.identityLinked, userID: userID, details: ["provider": identity.provider.rawValue])
                position += 1
            }
            let users = UserStore(connection)
            guard let account = try await users.find(id: userID) else { throw StoreError.serializationFailure }
            if account.isAnonymous { try await users.setAnonymous(id: userID, false, at: now) }
            if account.displayName == nil, let name = identities.lazy.compactMap(\.name).first {
                try await users.setDisplayNameIfEmpty(id: userID, to: name, at: now)
            }
        }
    }
}
