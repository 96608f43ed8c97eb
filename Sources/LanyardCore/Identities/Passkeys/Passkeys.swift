import Crypto
import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport
import LanyardWire
import Synchronization

/// Passkeys (reference section 19): a WebAuthn credential is one more identity on an account (provider
/// `passkey`, subject its id), several per account. Registration links one to the signed-in account (a guest
/// upgrades in place); sign-in is discoverable and hands the proven identity to the same sign-in,
/// re-authentication and merge proofs as every provider's. Challenges are single-use rows, five minutes long.
public struct Passkeys: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public static let challengeTTL: TimeInterval = 300
    /// Passkeys one account may hold.
    public static let maximumPerAccount = 20

    /// The relying party, or `UNSUPPORTED_PROVIDER` when passkeys are not configured.
    func ceremony() throws -> PasskeyCeremony {
        guard let party = dependencies.passkeys.party(devMode: dependencies.devMode, issuer: dependencies.accessTokens.issuer) else {
            throw LanyardError.unsupportedProvider("passkey")
        }
        return PasskeyCeremony(party: .init(id: party.id, origins: party.origins,
                                            requireUserVerification: dependencies.passkeys.requiresUserVerification))
    }

    // MARK: registration

    /// `POST /v1/auth/passkeys/register/options`: for the signed-in account (a full account's sign-in must be
    /// recent; a guest's session is all a guest has).
    public func registrationOptions(caller: Caller) async throws -> PublicKeyCredentialCreationOptionsJSON {
        let ceremony = try ceremony()
        if !caller.isAnonymous { try Authenticator(dependencies).requireRecentSignIn(caller) }
        let dependencies = self.dependencies
        let owned = try await dependencies.database.read { connection in
            let account = try await UserStore(connection).findWithIdentities(id: caller.userID)
            let passkeys = try await PasskeyStore(connection).list(userID: caller.userID)
            return account.map { ($0.0, $0.1, passkeys) }
        }
        guard let (user, identities, passkeys) = owned, user.mergedInto == nil else {
            throw LanyardError.unauthorized("This account no longer exists")
        }
        guard passkeys.count < Self.maximumPerAccount else {
            throw LanyardError.invalidRequest(field: "passkeys", "This account holds \(Self.maximumPerAccount) passkeys; remove one first")
        }
        let handle = passkeys.first?.userHandle ?? Base64URL.encode(dependencies.random.bytes(32))
        let challenge = try await issueChallenge(PasskeyChallengeRecord(
            purpose: "register", userID: caller.userID, sessionID: caller.sessionID, userHandle: handle,
            expiresAt: dependencies.clock.now().addingTimeInterval(Self.challengeTTL)))
        let label = identities.compactMap(\.email).first ?? user.displayName ?? "Lanyard account"
        return PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: ceremony.party.id, name: ceremony.party.id),
            user: .init(id: handle, name: label, displayName: user.displayName ?? label),
            challenge: challenge,
            pubKeyCredParams: COSEKey.acceptedAlgorithms.map { .init(alg: Int($0)) },
            timeout: Int(Self.challengeTTL * 1000),
            excludeCredentials: passkeys.map { .init(id: $0.credentialID, transports: $0.transports?.split(separator: ",").map(String.init)) },
            authenticatorSelection: .init(residentKey: "required", requireResidentKey: true,
                                          userVerification: dependencies.passkeys.userVerification),
            attestation: "none")
    }

    /// `POST /v1/auth/passkeys/register`: the new passkey, checked, linked to the account that asked for the
    /// challenge, in one transaction with its key and counter.
    public func register(_ request: PasskeyRegisterRequest, caller: Caller, client: ClientInfo) async throws -> PasskeyRegistered {
        let ceremony = try ceremony()
        let credential = request.credential
        let clientDataBytes = try Self.bytes(credential.response.clientDataJSON, "clientDataJSON")
        let clientData = try Self.refusing { () throws(PasskeyRefusal) in
            try PasskeyCeremony.clientData(clientDataBytes, expecting: "webauthn.create")
        }
        let challenge = try await takeChallenge(clientData.challenge, purpose: "register")
        guard challenge.userID == caller.userID, challenge.sessionID == caller.sessionID else {
            throw LanyardError.invalidPasskey("challenge", "This challenge was issued to another session")
        }
        let attestation = try Self.bytes(credential.response.attestationObject, "attestationObject")
        let created = try Self.refusing { () throws(PasskeyRefusal) in
            try ceremony.check(origin: clientData)
            return try ceremony.register(attestationObject: attestation, claimedID: credential.id)
        }
        let now = dependencies.clock.now()
        let credentialID = Base64URL.encode(created.id)
        let name = request.name ?? "Passkey"
        let identity = VerifiedIdentity(provider: .passkey, subject: credentialID, email: nil, emailVerified: false,
                                        isPrivateEmail: false, name: nil, audience: ceremony.party.id)
        let transports = credential.response.transports.map { $0.prefix(8).joined(separator: ",") }
        let handle = challenge.userHandle ?? ""
        let writtenID = Mutex<String?>(nil)
        let linked: LinkResponse
        do {
            linked = try await Linking(dependencies).link(identity, caller: caller, client: client) { connection, identityRecord in
                writtenID.withLock { $0 = identityRecord.id }
                try await PasskeyStore(connection).insert(PasskeyRecord(
                    identityID: identityRecord.id, userID: identityRecord.userID, credentialID: credentialID, userHandle: handle,
                    publicKey: Base64URL.encode(created.publicKey), algorithm: created.algorithm, signCount: Int64(created.signCount),
                    name: name, aaguid: created.aaguid.hexString, transports: transports,
                    backupEligible: created.backupEligible, backedUp: created.backedUp, createdAt: now))
            }
        } catch let error as LanyardError where error.code == .providerConflict {
            // The same credential registered twice: the authenticator's `excludeCredentials` should have stopped it.
            throw LanyardError.invalidPasskey("malformed", "This passkey is already registered")
        }
        let passkey = Passkey(id: .init(writtenID.withLock { $0 } ?? ""), name: name, createdAt: now, lastUsedAt: nil,
                              backedUp: created.backedUp)
        guard let user = linked.user else { throw LanyardError.unauthorized("This account no longer exists") }
        return PasskeyRegistered(passkey: passkey, user: user, linkedProviders: linked.linkedProviders)
    }

    // MARK: sign-in

    /// `POST /v1/auth/passkeys/signin/options`: a discoverable sign-in's challenge.
    public func signInOptions() async throws -> PublicKeyCredentialRequestOptionsJSON {
        let ceremony = try ceremony()
        let challenge = try await issueChallenge(PasskeyChallengeRecord(
            purpose: "signin", userID: nil, sessionID: nil, userHandle: nil,
            expiresAt: dependencies.clock.now().addingTimeInterval(Self.challengeTTL)))
        return PublicKeyCredentialRequestOptionsJSON(challenge: challenge, rpId: ceremony.party.id,
                                                     userVerification: dependencies.passkeys.userVerification,
                                                     timeout: Int(Self.challengeTTL * 1000))
    }

    /// `POST /v1/auth/passkeys/signin`: a session (a guest's bearer merges or is signed in over, as with other
    /// providers), or a re-authentication of the caller with their own passkey.
    public func signIn(_ request: PasskeySignInRequest, caller: Caller?, client: ClientInfo) async throws -> IssuedSession {
        let identity = try await prove(request.credential, client: client)
        switch request.intent ?? .signin {
        case .signin:
            return try await SignIn(dependencies).signIn(identity, name: nil, guest: caller, client: client)
        case .reauthenticate:
            guard let caller else { throw LanyardError.unauthorized("Sign in first: intent reauthenticate acts on the signed-in account") }
            return try await Reauthentication(dependencies).reauthenticate(identity, caller: caller, client: client)
        }
    }

    /// Verifies an assertion end to end and records its counter: the passkey identity it proves. Also a merge's
    /// proof of the other account (reference section 15).
    public func prove(_ credential: AuthenticationResponseJSON, client: ClientInfo) async throws -> VerifiedIdentity {
        let ceremony = try ceremony()
        let clientDataBytes = try Self.bytes(credential.response.clientDataJSON, "clientDataJSON")
        let clientData = try Self.refusing { () throws(PasskeyRefusal) in
            try PasskeyCeremony.clientData(clientDataBytes, expecting: "webauthn.get")
        }
        _ = try await takeChallenge(clientData.challenge, purpose: "signin")
        try Self.refusing { () throws(PasskeyRefusal) in try ceremony.check(origin: clientData) }
        let dependencies = self.dependencies
        let stored = try await dependencies.database.read { connection in
            try await PasskeyStore(connection).find(credentialID: credential.id)
        }
        guard let stored, credential.rawId == credential.id else {
            throw LanyardError.invalidPasskey("unknown_credential", "No account has this passkey; it may have been removed")
        }
        if let handle = credential.response.userHandle, !handle.isEmpty, handle != stored.userHandle {
            throw LanyardError.invalidPasskey("unknown_credential", "The passkey's user handle is not the one it was registered with")
        }
        let authenticatorData = try Self.bytes(credential.response.authenticatorData, "authenticatorData")
        let signature = try Self.bytes(credential.response.signature, "signature")
        let publicKey = Base64URL.decode(stored.publicKey) ?? []
        let now = dependencies.clock.now()
        let assertion: PasskeyCeremony.Assertion
        do {
            assertion = try ceremony.authenticate(authenticatorData: authenticatorData, clientDataJSON: clientDataBytes,
                                                  signature: signature, storedKey: publicKey,
                                                  storedCount: UInt32(clamping: stored.signCount))
        } catch let refusal {
            if refusal.reason == .counter { try await suspectClone(stored, presented: nil, client: client, at: now) }
            throw LanyardError.invalidPasskey(refusal.reason.rawValue, refusal.message)
        }
        let recorded = try await dependencies.database.transaction { connection in
            try await PasskeyStore(connection).recordUse(identityID: stored.identityID, readCount: stored.signCount,
                                                         signCount: Int64(assertion.signCount), backedUp: assertion.backedUp, at: now)
        }
        if !recorded, assertion.signCount != 0 {
            // Another sign-in with this passkey recorded a counter since it was read: one of the two is a replay.
            try await suspectClone(stored, presented: assertion.signCount, client: client, at: now)
            throw LanyardError.invalidPasskey("counter", "The signature counter did not increase: the passkey may have been cloned")
        }
        return VerifiedIdentity(provider: .passkey, subject: stored.credentialID, email: nil, emailVerified: false,
                                isPrivateEmail: false, name: nil, audience: ceremony.party.id)
    }

    private func suspectClone(_ passkey: PasskeyRecord, presented: UInt32?, client: ClientInfo, at now: Date) async throws {
        try await dependencies.database.transaction { connection in
            try await dependencies.audit(connection, at: now, clientIP: client.ip)
                .write(.passkeyCloneSuspected, userID: passkey.userID,
                       details: ["passkey_id": passkey.identityID, "stored_count": String(passkey.signCount)])
        }
    }

    // MARK: the account's passkeys

    /// `GET /v1/users/me/passkeys` (and the admin API's view of a user's).
    public func list(userID: String) async throws -> [Passkey] {
        try await dependencies.database.read { connection in
            try await PasskeyStore(connection).list(userID: userID)
        }.map(Self.view)
    }

    /// `PATCH /v1/users/me/passkeys/{id}`.
    public func rename(id: String, to name: String, caller: Caller, client: ClientInfo) async throws -> Passkey {
        let dependencies = self.dependencies
        return try await dependencies.database.transaction { connection in
            let store = PasskeyStore(connection)
            guard try await store.rename(identityID: id, userID: caller.userID, to: name),
                  let renamed = try await store.list(userID: caller.userID).first(where: { $0.identityID == id })
            else { throw LanyardError.notFound("This account has no passkey \(id)") }
            try await dependencies.audit(connection, at: dependencies.clock.now(), clientIP: client.ip)
                .write(.passkeyRenamed, userID: caller.userID, sessionID: caller.sessionID, details: ["passkey_id": id])
            return Self.view(renamed)
        }
    }

    /// `DELETE /v1/users/me/passkeys/{id}` (recent sign-in; never the account's last way in), and an operator's
    /// removal (`actor` set: no recency, audited with the operator).
    public func remove(id: String, userID: String, caller: Caller?, actor: String?, client: ClientInfo) async throws -> LinkResponse {
        try await Linking(dependencies).unlink(identityID: id, userID: userID, caller: caller, actor: actor, client: client,
                                               onlyProvider: .passkey)
    }

    static func view(_ record: PasskeyRecord) -> Passkey {
        Passkey(id: .init(record.identityID), name: record.name, createdAt: record.createdAt, lastUsedAt: record.lastUsedAt,
                backedUp: record.backedUp)
    }

    // MARK: challenges

    private func issueChallenge(_ record: PasskeyChallengeRecord) async throws -> String {
        let challenge = Base64URL.encode(dependencies.random.bytes(32))
        let now = dependencies.clock.now()
        try await dependencies.database.transaction { connection in
            let store = PasskeyStore(connection)
            try await store.deleteExpiredChallenges(before: now)
            try await store.insertChallenge(hash: Self.challengeHash(challenge), record)
        }
        return challenge
    }

    /// The challenge, taken so no other ceremony can use it: unknown, used and expired are one refusal.
    private func takeChallenge(_ challenge: String, purpose: String) async throws -> PasskeyChallengeRecord {
        let now = dependencies.clock.now()
        let taken = try await dependencies.database.transaction { connection in
            try await PasskeyStore(connection).takeChallenge(hash: Self.challengeHash(challenge), purpose: purpose)
        }
        guard let taken, taken.expiresAt > now else {
            throw LanyardError.invalidPasskey("challenge", "This challenge is unknown, used or expired; ask for new options")
        }
        return taken
    }

    static func challengeHash(_ challenge: String) -> String {
        Array(SHA256.hash(data: Array(challenge.utf8))).hexString
    }

    static func bytes(_ base64url: String, _ field: String) throws -> [UInt8] {
        guard base64url.utf8.count <= 32 * 1024, let bytes = Base64URL.decode(base64url) else {
            throw LanyardError.invalidPasskey("malformed", "\(field) is not base64url")
        }
        return bytes
    }

    static func refusing<T>(_ body: () throws(PasskeyRefusal) -> T) throws -> T {
        do { return try body() } catch { throw LanyardError.invalidPasskey(error.reason.rawValue, error.message) }
    }
}
