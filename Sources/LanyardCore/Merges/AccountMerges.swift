import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport

/// Merging two full accounts one person made by mistake (reference section 15), with proof of both: the session
/// proves one, an ID token carrying this session's single-use challenge nonce proves the other. One transaction
/// moves identities, records (clashes settled by `on_conflict`, the losers kept 30 days), profile gaps, metadata
/// and group memberships, ends the absorbed account's sessions and leaves its row as a tombstone pointing at the
/// survivor. The survivor's id never changes.
public struct AccountMerges: Sendable {
    /// How long the versions that lost a clash are kept.
    public static let loserRetention: TimeInterval = 30 * 86_400

    static let anonymousRefusal = LanyardError.mergeConflict(
        "anonymous", "A guest's data joins an account when the guest signs in with it; merging is for two signed-in accounts")

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public struct Request: Sendable {
        public var provider: String
        public var idToken: String
        public var keep: MergeKeep
        public var onConflict: MergeConflictRule
        public var release: [String]
        public var dryRun: Bool
        public var idempotencyKey: String?

        public init(provider: String, idToken: String, keep: MergeKeep = .current, onConflict: MergeConflictRule = .newer,
                    release: [String] = [], dryRun: Bool = false, idempotencyKey: String? = nil) {
            (self.provider, self.idToken, self.keep, self.onConflict) = (provider, idToken, keep, onConflict)
            (self.release, self.dryRun, self.idempotencyKey) = (release, dryRun, idempotencyKey)
        }
    }

    /// A dry run's report, thrown out of its transaction so that nothing it did is kept.
    private struct DryRun: Error {
        let report: MergeReport
    }

    /// `POST /v1/users/me/merge`. `caller` may be the account an earlier request merged away (its answer was lost):
    /// the same key or proof then answers that merge again; anything else is `ACCOUNT_MERGED`.
    public func merge(_ request: Request, caller: Caller, client: ClientInfo) async throws -> MergeReport {
        let proofKey = Hashing.sha256Hex("merge-proof:" + request.idToken)
        if !request.dryRun, let earlier = try await dependencies.database.read({ connection in
            try await MergeStore(connection).find(requestedBy: caller.userID, idempotencyKey: request.idempotencyKey,
                                                  proofKey: proofKey)
        }) {
            return try await answerAgain(earlier, request: request, caller: caller, client: client)
        }
        if caller.mergedInto != nil { throw try await Authenticator(dependencies).endedByMerge(caller) }
        guard !caller.isAnonymous else { throw Self.anonymousRefusal }
        try await dependencies.rateLimiter.check(.link, key: caller.userID)
        guard let provider = Provider(rawValue: request.provider) else {
            throw LanyardError.unsupportedProvider(request.provider)
        }
        let now = dependencies.clock.now()
        let open = try await dependencies.database.read { connection in
            try await MergeStore(connection).openChallenges(sessionID: caller.sessionID, at: now)
        }
        guard let challenge = Self.challenge(matching: request.idToken, among: open) else {
            throw LanyardError.invalidProviderToken(reason: "nonce_mismatch")
        }
        // A token without this nonce, or with another, is refused (`nonce_mismatch`).
        let proof = try await dependencies.providerTokens.verify(request.idToken, provider: provider, nonce: challenge.nonce)
        let other = try await dependencies.database.read { connection in
            try await IdentityStore(connection).findWithOwner(provider: provider.rawValue, providerUserID: proof.subject)
        }
        guard let other else {
            throw LanyardError.notFound("No account signs in with this \(provider.displayName) account; link it instead")
        }
        guard other.owner.id != caller.userID else {
            throw LanyardError.mergeConflict("same_account", "Both sign-ins are of this same account")
        }
        let (into, from) = request.keep == .current ? (caller.userID, other.owner.id) : (other.owner.id, caller.userID)
        let plan = Plan(mergeID: dependencies.random.newID(at: now), into: into, from: from, request: request,
                        currentIsInto: request.keep == .current, actor: caller.userID, at: now)
        let dependencies = self.dependencies
        let (report, opened): (MergeReport, OpenedSession?)
        do {
            (report, opened) = try await dependencies.database.transactionRetryingConflicts { connection in
                if !request.dryRun {
                    // The challenge is spent in the merge's own transaction: used once, whatever races it.
                    guard try await MergeStore(connection).openChallenge(id: challenge.id, at: now) != nil else {
                        throw LanyardError.invalidProviderToken(reason: "nonce_mismatch")
                    }
                    try await MergeStore(connection).useChallenge(id: challenge.id, at: now)
                }
                let audit = dependencies.audit(connection, at: now, clientIP: client.ip)
                let (report, undo) = try await Self.carryOut(plan, connection, audit)
                if request.dryRun { throw DryRun(report: report) }
                try await MergeStore(connection).insertMerge(
                    id: plan.mergeID, into: into, from: from, kind: "full", actor: caller.userID,
                    requestedBy: caller.userID, idempotencyKey: request.idempotencyKey, proofKey: proofKey, at: now,
                    report: report.stored, undo: undo.json)
                // Kept the other account: this device signs in to it, in the same transaction.
                let opened = request.keep == .other
                    ? try await SessionIssuer(dependencies: dependencies).open(userID: into, method: provider.rawValue,
                                                                              client: client, connection: connection, now: now)
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
        if let opened { answered.session = try await SessionIssuer(dependencies: dependencies).respond(opened, isNewUser: false) }
        return answered
    }

    /// The open challenge whose nonce the token carries (as it is, or as its SHA-256, as Apple's do), read from the
    /// token before it is verified only to choose which nonce to verify it with.
    static func challenge(matching token: String, among open: [MergeChallengeRow]) -> MergeChallengeRow? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
              let claims = JSONParser.parseObject(payload), let nonce = claims["nonce"]?.stringValue else { return nil }
        return open.first { $0.nonce == nonce || Hashing.sha256Hex($0.nonce) == nonce }
    }

    /// The merge an earlier request made, answered again: its stored report, and a session of the survivor for a
    /// device that kept the other account (its own session ended with the merge).
    private func answerAgain(_ earlier: MergeRow, request: Request, caller: Caller, client: ClientInfo) async throws -> MergeReport {
        var report = MergeReport(mergeID: earlier.id, into: earlier.intoID, from: earlier.fromID)
        report.replayed = JSONParser.parseObject(Array(earlier.report.utf8))
        if caller.userID == earlier.fromID {
            let dependencies = self.dependencies
            let now = dependencies.clock.now()
            let opened = try await dependencies.database.transaction { connection in
                try await SessionIssuer(dependencies: dependencies).open(userID: earlier.intoID, method: request.provider,
                                                                        client: client, connection: connection, now: now)
            }
            report.session = try await SessionIssuer(dependencies: dependencies).respond(opened, isNewUser: false)
        }
        return report
    }

    /// Everything a merge decides, before it runs.
    struct Plan: Sendable {
        let mergeID: String
        let into: String
        let from: String
        let request: Request
        /// Whether the session's own account survives (`keep: current`).
        let currentIsInto: Bool
        let actor: String
        let at: Date
    }

    /// The merge, inside its transaction: both accounts locked in id order (so A into B and B into A racing end in
    /// one merge: the second finds its account merged), then every move.
    static func carryOut(_ plan: Plan, _ connection: any DatabaseConnection,
                         _ audit: AuditLog) async throws -> (MergeReport, MergeUndo) {
        let users = UserStore(connection)
        var locked: [String: UserRecord] = [:]
        for id in [plan.into, plan.from].sorted() {
            guard let user = try await users.findForUpdate(id: id) else { throw LanyardError.notFound("No such account") }
            if let into = user.mergedInto {
                throw LanyardError.mergeConflict("already_merged", "That account was already merged into another",
                                                 details: ["merged_into": .string(into)])
            }
            if user.isAnonymous { throw anonymousRefusal }
            locked[id] = user
        }
        var report = MergeReport(mergeID: plan.mergeID, into: plan.into, from: plan.from)
        report.dryRun = plan.request.dryRun
        var undo = MergeUndo()
        try await moveIdentities(plan, connection, &report, &undo)
        try await moveRecords(plan, connection, &report, &undo)
        report.groups = try await GroupMemberStore(connection).memberships(userID: plan.from).map(\.groupID)
        for step: any MergeStep in [ProfileMergeStep(), UserMetadataMergeStep(), GroupsMergeStep(), SessionsMergeStep()] {
            try await step.move(from: plan.from, into: plan.into, connection: connection, audit: audit, now: plan.at)
        }
        try await users.markMerged(id: plan.from, into: plan.into, at: plan.at, kind: "full")
        try await audit.write(.accountMerged, userID: plan.into, details: [
            "from": plan.from, "to": plan.into, "kind": "full", "merge_id": plan.mergeID, "actor": plan.actor])
        return (report, undo)
    }

    /// The absorbed account's identities join the survivor's, after its own (its primary stays primary); one of a
    /// provider the survivor also has is refused, or detached when the request releases that provider (an Apple one
    /// owes its token revocation).
    private static func moveIdentities(_ plan: Plan, _ connection: any DatabaseConnection,
                                       _ report: inout MergeReport, _ undo: inout MergeUndo) async throws {
        let identities = IdentityStore(connection)
        let survivor = try await identities.list(userID: plan.into).map(\.provider)
        let absorbed = try await identities.list(userID: plan.from)
        let release = Set(plan.request.release.map { $0.lowercased() })
        let collisions = MergeRules.collisions(survivor: survivor, absorbed: absorbed.map(\.provider), release: release)
        guard collisions.isEmpty else {
            throw LanyardError.mergeConflict(
                "provider_collision", "Both accounts have a different \(collisions.joined(separator: " and ")) account; "
                    + "release one to merge", details: ["providers": .array(collisions.map(JSONValue.string))])
        }
        let released = MergeRules.released(survivor: survivor, absorbed: absorbed.map(\.provider), release: release)
        for identity in absorbed {
            if released.contains(identity.provider) {
                if identity.provider == Provider.apple.rawValue {
                    try await AppleTokenStore(connection).scheduleRevocation(userID: plan.from, at: plan.at)
                }
                try await identities.delete(id: identity.id)
                report.identitiesReleased.append(identity.provider)
            } else {
                try await identities.move(identityID: identity.id, to: plan.into)
                report.identitiesMoved.append(identity.provider)
                undo.identities.append(identity.id)
            }
        }
    }

    /// The absorbed account's records join the survivor's: those only it has in one statement, the clashes one by
    /// one. On a clash the rule's winner takes a version above both (so an edit made against either old version
    /// fails its `If-Match`), and the loser is kept with the merge.
    private static func moveRecords(_ plan: Plan, _ connection: any DatabaseConnection,
                                    _ report: inout MergeReport, _ undo: inout MergeUndo) async throws {
        let records = RecordStore(connection)
        let merges = MergeStore(connection)
        for incoming in try await records.shared(from: plan.from, into: plan.into) {
            guard let existing = try await records.find(ownerID: plan.into, collection: incoming.collection,
                                                        recordID: incoming.recordID) else { continue }
            let (current, other) = plan.currentIsInto ? (existing, incoming) : (incoming, existing)
            let currentWins = MergeRules.currentWins(plan.request.onConflict, current: current.updatedAt,
                                                     other: other.updatedAt, survivorIsCurrent: plan.currentIsInto)
            let (winner, loser) = currentWins ? (current, other) : (other, current)
            let version = max(existing.version, incoming.version) + 1
            try await merges.insertLoser(mergeID: plan.mergeID, MergeLoserRow(
                collection: loser.collection, recordID: loser.recordID, accountID: loser.ownerID,
                version: loser.version, updatedAt: loser.updatedAt, deleted: loser.deleted, data: loser.data))
            try await records.upsert(ownerID: plan.into, collection: incoming.collection, recordID: incoming.recordID,
                                     version: version, updatedAt: winner.updatedAt, data: winner.data)
            report.conflicts.append(.init(collection: incoming.collection, id: incoming.recordID,
                                          winner: currentWins ? "current" : "other"))
            undo.records.append(.init(collection: incoming.collection, id: incoming.recordID, versionAfter: version,
                                      clash: true, absorbedWon: winner.ownerID == plan.from))
        }
        for copied in try await records.copyAbsent(from: plan.from, into: plan.into) {
            undo.records.append(.init(collection: copied.collection, id: copied.recordID, versionAfter: copied.version,
                                      clash: false, absorbedWon: true))
        }
        report.recordsMoved = undo.records.count
        try await records.deleteAll(ownerID: plan.from)
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
            return MergeDetails(report: merge.report, createdAt: merge.createdAt, revertedAt: merge.revertedAt,
                                losers: try await store.losers(mergeID: mergeID))
        }
    }
}
