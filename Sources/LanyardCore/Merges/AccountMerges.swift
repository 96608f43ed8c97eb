import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport
import LanyardWire

/// Merging two full accounts one person made by mistake (reference section 15), with proof of both: the session
/// proves one, an ID token carrying this session's single-use challenge nonce proves the other. One transaction
/// moves identities, records (clashes settled by `on_conflict`, the losers kept 30 days), profile gaps, metadata
/// and group memberships, ends the absorbed account's sessions and leaves its row as a tombstone pointing at the
/// survivor. The survivor's id never changes.
public struct AccountMerges: Sendable {
    /// How long the versions that lost a clash are kept.
    public static let loserRetention: TimeInterval = 30 * 86_400

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public struct Request: Sendable {
        /// The other account's identity.
        public var proof: IdentityProof
        public var keep: MergeKeep
        public var onConflict: MergeConflictRule
        public var release: [String]
        public var dryRun: Bool
        public var idempotencyKey: String?

        public init(proof: IdentityProof, keep: MergeKeep = .current, onConflict: MergeConflictRule = .newer,
                    release: [String] = [], dryRun: Bool = false, idempotencyKey: String? = nil) {
            (self.proof, self.keep, self.onConflict) = (proof, keep, onConflict)
            (self.release, self.dryRun, self.idempotencyKey) = (release, dryRun, idempotencyKey)
        }

        /// The body, hashed: what an `Idempotency-Key` sent again must come with.
        var hash: String {
            Hashing.sha256Hex([IdentityProofs.text(proof), keep.rawValue, onConflict.rawValue,
                               release.map { $0.lowercased() }.sorted().joined(separator: ","), String(dryRun)]
                .joined(separator: "\n"))
        }
    }

    /// A dry run's report, thrown out of its transaction so that nothing it did is kept.
    private struct DryRun: Error {
        let report: MergeResult
    }

    /// `POST /v1/users/me/merge`. `caller` may be the account an earlier request merged away (its answer was lost):
    /// that request, sent again by the same session with the same body within a day, answers the same merge (also
    /// when two copies race); anything else of a merged account is `ACCOUNT_MERGED`.
    public func merge(_ request: Request, caller: Caller, client: ClientInfo) async throws -> MergeResult {
        let keys = MergeRequestKeys(requestedBy: caller.userID, sessionID: caller.sessionID,
                                    idempotencyKey: request.idempotencyKey,
                                    proofKey: Hashing.sha256Hex("merge-proof:" + IdentityProofs.fingerprint(request.proof)),
                                    requestHash: request.hash)
        if !request.dryRun, let earlier = try await answerAgainIfAsked(keys, request: request, caller: caller, client: client) {
            return earlier
        }
        do {
            return try await mergeAnew(request, keys: keys, caller: caller, client: client)
        } catch let error as LanyardError where !request.dryRun && Self.mayHaveLostARace(error) {
            // A copy of this request that committed first spent the challenge or merged the accounts: its answer.
            if let earlier = try await answerAgainIfAsked(keys, request: request, caller: caller, client: client) {
                return earlier
            }
            throw error
        }
    }

    /// The other account's identity: an ID token carrying one of this session's open challenge nonces (a token
    /// without it, or with another, is `nonce_mismatch`), an email flow's code (single-use, bound to the device's
    /// flow secret), or a passkey's assertion (its challenge taken as it is checked). Verified by `IdentityProofs`
    /// like every proof; what the merge must spend in its transaction comes back with it.
    private func prove(_ proof: IdentityProof, caller: Caller, client: ClientInfo,
                       at now: Date) async throws -> (VerifiedIdentity, ProofSpending) {
        switch proof {
        case .idToken(let provider, let idToken, _):
            _ = try dependencies.signInMethods.idTokenProvider(named: provider.rawValue)
            let open = try await dependencies.database.read { connection in
                try await MergeStore(connection).openChallenges(sessionID: caller.sessionID, at: now)
            }
            guard let challenge = Self.challenge(matching: idToken, among: open) else {
                throw LanyardError.invalidProviderToken(reason: "nonce_mismatch")
            }
            let proven = try await IdentityProofs(dependencies).verify(
                .idToken(provider: provider, idToken: idToken, nonce: challenge.nonce), client: client)
            return (proven, .challenge(challenge.id))
        case .emailCode(let flowID, _, _):
            return (try await IdentityProofs(dependencies).verify(proof, client: client), .emailFlow(flowID))
        case .passkey, .legacySession:
            return (try await IdentityProofs(dependencies).verify(proof, client: client), .nothing)
        }
    }

    /// What a merge's proof uses up when the merge commits: this session's challenge, or the email flow.
    enum ProofSpending: Sendable {
        case challenge(String)
        case emailFlow(String)
        /// A passkey's challenge, taken when the assertion was checked.
        case nothing

        func spend(on connection: any DatabaseConnection, at now: Date) async throws {
            switch self {
            case .challenge(let id):
                guard try await MergeStore(connection).openChallenge(id: id, at: now) != nil else {
                    throw LanyardError.invalidProviderToken(reason: "nonce_mismatch")
                }
                try await MergeStore(connection).useChallenge(id: id, at: now)
            case .emailFlow(let id):
                guard try await EmailFlowStore(connection).markUsed(id: id, at: now, maxWrongCodes: EmailFlowRules.maxWrongCodes) else {
                    throw LanyardError.invalidCode(reason: "used", attemptsLeft: 0)
                }
            case .nothing:
                break
            }
        }
    }

    /// What a copy of the same request racing this one may leave it with.
    private static func mayHaveLostARace(_ error: LanyardError) -> Bool {
        switch error.details["reason"]?.stringValue {
        case "nonce_mismatch", "same_account", "already_merged", "session_ended": true
        case "used": error.code == .invalidCode
        case "challenge": error.code == .invalidPasskey
        default: error.code == .accountMerged
        }
    }

    private func mergeAnew(_ request: Request, keys: MergeRequestKeys, caller: Caller,
                           client: ClientInfo) async throws -> MergeResult {
        if caller.mergedInto != nil { throw try await Authenticator(dependencies).endedByMerge(caller) }
        guard !caller.isAnonymous else { throw MergeDecision.anonymousRefusal }
        // The challenge is good only while the sign-in that asked for it is recent.
        try Authenticator(dependencies).requireRecentSignIn(caller)
        try await dependencies.rateLimiter.check(.link, key: caller.userID)
        let provider = request.proof.provider
        let now = dependencies.clock.now()
        let (proof, spend) = try await prove(request.proof, caller: caller, client: client, at: now)
        let other = try await dependencies.database.read { connection in
            try await IdentityStore(connection).findWithOwner(provider: provider.rawValue, providerUserID: proof.subject)
        }
        guard let other else {
            throw LanyardError.notFound("No account signs in with this \(dependencies.signInMethods.displayName(provider)) account; link it instead")
        }
        let (into, from) = request.keep == .current ? (caller.userID, other.owner.id) : (other.owner.id, caller.userID)
        let plan = MergePlan(mergeID: dependencies.random.newID(at: now), into: into, from: from, kind: .full,
                             actor: caller.userID, currentIsInto: request.keep == .current, onConflict: request.onConflict,
                             release: Set(request.release.map { $0.lowercased() }), dryRun: request.dryRun, at: now,
                             request: keys)
        let dependencies = self.dependencies
        let (report, opened): (MergeResult, OpenedSession?)
        do {
            (report, opened) = try await dependencies.database.transactionRetryingConflicts { connection in
                if !request.dryRun {
                    // The proof is spent in the merge's own transaction: used once, whatever races it.
                    try await spend.spend(on: connection, at: now)
                }
                let audit = dependencies.audit(connection, at: now, clientIP: client.ip)
                let (report, _) = try await MergeEngine(dependencies: dependencies, connection: connection, audit: audit).run(plan)
                if request.dryRun { throw DryRun(report: report) }
                // Kept the other account: this device signs in to it, in the same transaction.
                let opened = request.keep == .other
                    ? try await Self.openSurvivorSession(plan, method: provider.rawValue, client: client,
                                                         dependencies: dependencies, connection: connection, audit: audit)
                    : nil
                if dependencies.pausePoints.contains(.mergeBeforeCommit) {
                    // Sends the held writes first: the pause is inside the transaction, after all of them.
                    try await connection.query("SELECT 1")
                    await dependencies.pausePoints.reach(.mergeBeforeCommit)
                }
                return (report, opened)
            }
        } catch let dry as DryRun {
            return dry.report
        }
        await dependencies.pausePoints.reach(.mergeAfterCommit)
        dependencies.signals.recordsChanged([into], written: [])
        dependencies.signals.accessChanged([from, into])
        var answered = report
        if let opened {
            answered.session = try await SessionIssuer(dependencies: dependencies).respond(opened, isNewUser: false).answer
        }
        return answered
    }

    /// A session of the survivor for the device whose account a merge absorbed, audited with the merge.
    private static func openSurvivorSession(_ plan: MergePlan, method: String, client: ClientInfo,
                                            dependencies: CoreDependencies, connection: any DatabaseConnection,
                                            audit: AuditLog) async throws -> OpenedSession {
        let opened = try await SessionIssuer(dependencies: dependencies).open(userID: plan.into, method: method,
                                                                             client: client, connection: connection,
                                                                             now: plan.at)
        try await MergeStore(connection).setOpenedSession(mergeID: plan.mergeID, sessionID: opened.sessionID)
        try await audit.write(.signIn, userID: plan.into, sessionID: opened.sessionID,
                              details: ["provider": method, "merge_id": plan.mergeID, "actor": plan.actor])
        return opened
    }

    /// The open challenge whose nonce the token carries (as it is, or as its SHA-256, as Apple's do), read from the
    /// token before it is verified only to choose which nonce to verify it with.
    static func challenge(matching token: String, among open: [MergeChallengeRow]) -> MergeChallengeRow? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
              let claims = JSONParser.parseObject(payload), let nonce = claims["nonce"]?.stringValue else { return nil }
        return open.first { $0.nonce == nonce || Hashing.sha256Hex($0.nonce) == nonce }
    }

    /// The merge an earlier request of this account made with the same key or proof, answered again when
    /// `MergeDecision.replay` allows: its stored report, and for the device whose account it absorbed (`keep:
    /// other`), a new session of the survivor while the one the merge opened for it stands. `nil` when there is
    /// none to answer (none, or older than a day).
    private func answerAgainIfAsked(_ keys: MergeRequestKeys, request: Request, caller: Caller,
                                    client: ClientInfo) async throws -> MergeResult? {
        let dependencies = self.dependencies
        let now = dependencies.clock.now()
        guard let earlier = try await dependencies.database.read({ connection in
            try await MergeStore(connection).find(requestedBy: keys.requestedBy, idempotencyKey: keys.idempotencyKey,
                                                  proofKey: keys.proofKey)
        }) else { return nil }
        let facts = MergeDecision.Earlier(createdAt: earlier.createdAt, revertedAt: earlier.revertedAt,
                                          foundByKey: keys.idempotencyKey != nil && earlier.idempotencyKey == keys.idempotencyKey,
                                          requestHash: earlier.requestHash)
        guard try MergeDecision.replay(facts, requestHash: keys.requestHash, at: now) == .answer else { return nil }
        var report = MergeResult(stored: earlier.report) ?? MergeResult(mergeID: earlier.id, into: User.ID(earlier.intoID),
                                                                         from: User.ID(earlier.fromID))
        guard caller.userID == earlier.fromID, let openedSession = earlier.openedSession else { return report }
        // Only the device that asked gets the survivor's session again, and only while the one the merge opened for
        // it stands (a sign-out of the survivor everywhere ends that).
        guard earlier.requestedSession == caller.sessionID else { return report }
        let opened = try await dependencies.database.transaction { connection -> OpenedSession in
            guard let session = try await SessionStore(connection).find(id: openedSession), session.isActive(at: now) else {
                throw LanyardError.sessionEnded
            }
            let plan = MergePlan(mergeID: earlier.id, into: earlier.intoID, from: earlier.fromID, kind: .full,
                                 actor: caller.userID, currentIsInto: false, at: now)
            return try await Self.openSurvivorSession(plan, method: request.proof.provider.rawValue, client: client,
                                                      dependencies: dependencies, connection: connection,
                                                      audit: dependencies.audit(connection, at: now, clientIP: client.ip))
        }
        report.session = try await SessionIssuer(dependencies: dependencies).respond(opened, isNewUser: false).answer
        return report
    }

    /// Forgets what merges keep for a while: the versions that lost a clash after 30 days, and challenges a day after
    /// they expired. Run periodically by the server.
    public func forgetExpired() async throws {
        let now = dependencies.clock.now()
        try await dependencies.database.transaction { connection in
            let merges = MergeStore(connection)
            try await merges.purgeLosers(before: now.addingTimeInterval(-Self.loserRetention))
            try await merges.purgeChallenges(expiredBefore: now.addingTimeInterval(-86_400))
        }
    }

    /// `GET /v1/users/me/merges/{merge_id}`: a merge the caller's account took part in.
    public func details(mergeID: String, caller: Caller) async throws -> MergeDetails {
        try await dependencies.database.read { connection in
            let store = MergeStore(connection)
            guard let merge = try await store.find(id: mergeID),
                  merge.intoID == caller.userID || merge.fromID == caller.userID else {
                throw LanyardError.notFound("No such merge")
            }
            // Reverted, the two accounts are two again (perhaps two people): each sees only its own versions.
            let losers = try await store.losers(mergeID: mergeID)
                .filter { merge.revertedAt == nil || $0.accountID == caller.userID }
            return MergeDetails(report: MergeResult(stored: merge.report) ?? MergeResult(mergeID: merge.id, into: User.ID(merge.intoID),
                                                                                         from: User.ID(merge.fromID)),
                                createdAt: merge.createdAt, revertedAt: merge.revertedAt, losingVersions: losers.map {
                LosingVersion(collection: $0.collection, id: $0.recordID, accountID: $0.accountID, version: Int($0.version),
                              updatedAt: $0.updatedAt, deleted: $0.deleted, data: $0.data)
            })
        }
    }
}
