import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport
import struct LanyardWire.LinkResponse
import struct LanyardWire.User

/// One account, several sign-in methods: attaching and removing identities (reference sections 3 and 6).
/// Linking never signs anyone out; unlinking needs a recent sign-in and never removes the last identity.
public struct Linking: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func link(provider: Provider, idToken: String, nonce: String?, caller: Caller,
                     client: ClientInfo) async throws -> LinkResponse {
        let identity = try await IdentityProofs(dependencies).verify(.idToken(provider: provider, idToken: idToken, nonce: nonce),
                                                                     client: client)
        return try await link(identity, caller: caller, client: client)
    }

    /// What a link writes besides the identity, in its transaction (a passkey's key and counter).
    typealias AlsoWrite = @Sendable (any DatabaseConnection, IdentityRecord) async throws -> Void

    /// Links an identity already proven (an ID token's, an email code's, a passkey's) to the caller's account.
    /// `via` names a way the proof came other than the provider's own (`redirect`) in the audit.
    public func link(_ identity: VerifiedIdentity, caller: Caller, client: ClientInfo, via: String? = nil) async throws -> LinkResponse {
        try await link(identity, caller: caller, client: client, alsoWriting: nil, via: via)
    }

    func link(_ identity: VerifiedIdentity, caller: Caller, client: ClientInfo, alsoWriting: AlsoWrite?,
              via: String? = nil) async throws -> LinkResponse {
        do {
            return try await linkTransaction(provider: identity.provider, identity: identity, caller: caller, client: client,
                                             alsoWriting: alsoWriting, via: via)
        } catch StoreError.notNullViolation {
            // The account was merged away or deleted between the read and the write (`IdentityStore.link`).
            throw LanyardError.unauthorized("This account no longer exists")
        }
    }

    /// What a link decides on: the account, its identities, and the identity's current owner if any; and the
    /// place after the account's last identity when the read included it.
    typealias LinkRead = (user: UserRecord, owned: [IdentityRecord], existing: IdentityRecord?, position: Int64?)

    private func linkTransaction(provider: Provider, identity: VerifiedIdentity, caller: Caller,
                                 client: ClientInfo, alsoWriting: AlsoWrite?, via: String?) async throws -> LinkResponse {
        let dependencies = self.dependencies
        let method = dependencies.signInMethods.method(provider) ?? .unknown(provider)
        // When the bearer check brought the account and the store read the identity ahead of the transaction,
        // the first attempt decides on those; a retry reads both again inside.
        let lookup = try await dependencies.identityOwners.lookup(provider: provider.rawValue, subject: identity.subject)
        var firstRead: FirstAttempt<LinkRead>?
        if let account = caller.account, let ahead = lookup.takeReadAhead() {
            firstRead = FirstAttempt((account.user, account.identities, ahead?.identity, account.nextLinkPosition))
        }
        return try await dependencies.database.transactionRetryingConflicts { [firstRead] connection in
            let read: LinkRead? = if let prefetched = firstRead?.take() {
                prefetched
            } else {
                try await UserStore(connection).findForLink(id: caller.userID, provider: provider.rawValue,
                                                            providerUserID: identity.subject).map { ($0, $1, $2, nil) }
            }
            guard let (user, owned, existing, position) = read, user.mergedInto == nil
            else { throw LanyardError.unauthorized("This account no longer exists") }
            try Self.checkLinkable(method, existingOwner: existing?.userID, account: user, owned: owned)
            let linked = try await self.write(identity, of: provider, to: user, at: position, on: connection)
            if method.manyPerAccount { try await Self.checkCap(of: method, userID: user.id, on: connection) }
            try await alsoWriting?(connection, linked.identity)
            try await dependencies.audit(connection, at: linked.linkedAt, clientIP: client.ip)
                .write(.identityLinked, userID: user.id, sessionID: caller.sessionID,
                       details: via.map { ["provider": provider.rawValue, "via": $0] } ?? ["provider": provider.rawValue])
            let account = User(user: linked.account, identities: owned + [linked.identity])
            return LinkResponse(linkedProviders: account.identities.map(\.provider),
                                message: "\(method.displayName) account linked", user: account)
        }
    }

    /// Writes the link: the identity, and the account no longer a guest and named if it had no name. Returns
    /// the account as this transaction leaves it, from the read and these writes.
    private func write(_ identity: VerifiedIdentity, of provider: Provider, to user: UserRecord, at position: Int64?,
                       on connection: any DatabaseConnection) async throws
        -> (identity: IdentityRecord, account: UserRecord, linkedAt: Date) {
        let now = dependencies.clock.now()
        let users = UserStore(connection)
        let linked = IdentityRecord(identity, id: dependencies.random.newID(at: now), userID: user.id,
                                    linkedAt: now, lastSignInAt: nil)
        // First of the held writes: it checks the account is still live before anything else touches it.
        try await IdentityStore(connection).link(linked, at: position)
        var account = user
        if user.isAnonymous {
            try await users.setAnonymous(id: user.id, false, at: now)
            account.isAnonymous = false
        }
        if let name = identity.name, user.displayName == nil {
            try await users.setDisplayNameIfEmpty(id: user.id, to: name, at: now)
            account.displayName = name
        }
        return (linked, account, now)
    }

    /// The conflict rules of linking, in the order a person would want them explained.
    static func checkLinkable(_ method: SignInMethod, existingOwner: String?, account: UserRecord,
                              owned: [IdentityRecord]) throws(LanyardError) {
        if let existingOwner {
            if existingOwner == account.id { throw .alreadyLinked(method.displayName) }
            // A guest can still bring their data along by signing in with this identity instead.
            throw .identityInUse(method.displayName, mergeAvailable: account.isAnonymous)
        }
        if !method.manyPerAccount, owned.contains(where: { $0.provider == method.provider.rawValue }) {
            throw .providerAlreadyLinked(method.displayName)
        }
    }

    /// The cap of a method an account may hold several of (passkeys: reference section 25), counted after this
    /// link's insert in its transaction. Counting sends the held insert first, which locks the account's row: a
    /// racing link waits for this one's commit and then counts it, so options fetched ahead cannot pass the cap.
    static func checkCap(of method: SignInMethod, userID: String, on connection: any DatabaseConnection) async throws {
        let held = try await IdentityStore(connection).count(userID: userID, provider: method.provider.rawValue)
        guard held <= method.perAccount else {
            let plural = method.displayName.lowercased() + "s"
            throw LanyardError.invalidRequest(field: plural, "This account holds \(method.perAccount) \(plural); remove one first")
        }
    }

    /// `DELETE /v1/auth/link/{provider}`: the account's identity of a provider that allows one per account.
    public func unlink(provider: Provider, caller: Caller, client: ClientInfo) async throws -> LinkResponse {
        if dependencies.signInMethods.allowsSeveral(provider.rawValue) {
            throw LanyardError.invalidRequest(field: "provider", "Passkeys are removed one at a time: DELETE /v1/users/me/passkeys/{id}")
        }
        let displayName = dependencies.signInMethods.displayName(provider)
        return try await unlink(userID: caller.userID, caller: caller, actor: nil, client: client) { owned in
            guard let identity = owned.first(where: { $0.provider == provider.rawValue }) else {
                throw LanyardError.providerNotLinked(displayName)
            }
            return identity
        }
    }

    /// One identity by its id, of any kind: GoTrue's `DELETE /user/identities/{id}`, a passkey's removal (by the
    /// person, or an operator when `caller` is nil).
    public func unlink(identityID: String, userID: String, caller: Caller?, actor: String?, client: ClientInfo,
                       onlyProvider: Provider? = nil) async throws -> LinkResponse {
        try await unlink(userID: userID, caller: caller, actor: actor, client: client) { owned in
            guard let identity = owned.first(where: { $0.id == identityID }),
                  onlyProvider.map({ $0.rawValue == identity.provider }) ?? true else {
                throw LanyardError.notFound("This account has no \(onlyProvider == .passkey ? "passkey" : "identity") \(identityID)")
            }
            return identity
        }
    }

    /// The one unlink: the account locked, the identity `pick` chooses, never the last way in, Apple's token owed
    /// its revocation, audited in the same transaction. A person needs a recent sign-in; an operator does not.
    private func unlink(userID: String, caller: Caller?, actor: String?, client: ClientInfo,
                        pick: @escaping @Sendable ([IdentityRecord]) throws -> IdentityRecord) async throws -> LinkResponse {
        if let caller { try Authenticator(dependencies).requireRecentSignIn(caller) }
        let dependencies = self.dependencies
        return try await dependencies.database.transaction { connection in
            let now = dependencies.clock.now()
            guard let (_, owned) = try await UserStore(connection).findWithIdentitiesForUpdate(id: userID) else {
                throw caller == nil ? LanyardError.notFound("No such user") : LanyardError.unauthorized("This account no longer exists")
            }
            let identity = try pick(owned)
            guard owned.count > 1 else { throw LanyardError.cannotUnlinkOnlyProvider }
            let methods = dependencies.signInMethods
            if methods.owesAppleRevocation(identity.provider) {
                // The account's Apple token is this identity's: Apple is owed its revocation.
                try await AppleTokenStore(connection).scheduleRevocation(userID: userID, at: now)
            }
            try await IdentityStore(connection).delete(id: identity.id)
            // One of several is named by its id (a passkey's, in webhooks and the audit).
            let oneOfSeveral = methods.allowsSeveral(identity.provider)
            var details = ["provider": identity.provider]
            if oneOfSeveral { details["\(identity.provider)_id"] = identity.id }
            if let actor { details["actor"] = actor }
            try await dependencies.audit(connection, at: now, clientIP: client.ip)
                .write(.identityUnlinked, userID: userID, sessionID: caller?.sessionID, details: details)
            let name = methods.displayName(Provider(rawValue: identity.provider))
            let message = oneOfSeveral ? "\(name) removed" : "\(name) account unlinked"
            return LinkResponse(remaining: owned.filter { $0.id != identity.id }, message: message)
        }
    }
}
