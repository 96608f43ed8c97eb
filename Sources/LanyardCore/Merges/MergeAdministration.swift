import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

/// Operators' merges (reference section 15): `POST /v1/admin/merges` (no proof; audited with actor `admin`),
/// `GET /v1/admin/merges?user_id=`, and reverting one within 30 days (`lanyard merges list|revert`, the console).
public struct MergeAdministration: Sendable {
    /// How long a merge can be reverted.
    public static let revertWindow: TimeInterval = 30 * 86_400

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// Merges `from` into `into` as an operator: the same engine as a person's merge (newer wins a clash), without a
    /// proof, and allowed where an account is disabled (audited with actor `admin`).
    public func merge(into: String, from: String, client: ClientInfo) async throws -> MergeResult {
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let plan = MergePlan(mergeID: dependencies.random.newID(at: now), into: into, from: from, kind: .admin,
                             actor: "admin", currentIsInto: true, at: now)
        let report = try await dependencies.database.transactionRetryingConflicts { connection in
            try await MergeEngine(dependencies: dependencies, connection: connection,
                                  audit: dependencies.audit(connection, at: now, clientIP: client.ip)).run(plan).0
        }
        dependencies.signals.recordsChanged([into], written: [])
        dependencies.signals.accessChanged([from, into])
        return report
    }

    /// Merges an account took part in, newest first.
    public func list(userID: String) async throws -> MergeList {
        let rows = try await dependencies.database.read { try await MergeStore($0).list(userID: userID, limit: 100) }
        return MergeList(merges: rows.map { merge in
            MergeSummary(mergeID: merge.id, into: merge.intoID, from: merge.fromID, kind: merge.kind, actor: merge.actor,
                         createdAt: merge.createdAt, revertedAt: merge.revertedAt,
                         report: MergeResult(stored: merge.report) ?? MergeResult(mergeID: merge.id, into: User.ID(merge.intoID),
                                                                                  from: User.ID(merge.fromID)))
        })
    }

    /// Reverts a merge within 30 days: the absorbed account comes back with the identities the merge moved, and the
    /// records it moved that nobody changed since (changed ones stay with the survivor); the versions that lost a
    /// clash return. Refused (`changed_since`) when a moved identity left the survivor since. Group memberships stay
    /// with the survivor.
    public func revert(mergeID: String, client: ClientInfo) async throws -> RevertResult {
        let (dependencies, now) = (dependencies, dependencies.clock.now())
        let report = try await dependencies.database.transactionRetryingConflicts { connection -> RevertResult in
            guard let merge = try await MergeStore(connection).findForUpdate(id: mergeID) else {
                throw LanyardError.notFound("No such merge")
            }
            guard merge.revertedAt == nil else {
                throw LanyardError.mergeConflict("already_reverted", "This merge was already reverted")
            }
            guard now.timeIntervalSince(merge.createdAt) <= Self.revertWindow, let undo = MergeUndo(json: merge.undo) else {
                throw LanyardError.mergeConflict("too_old", "A merge can be reverted for 30 days")
            }
            let users = UserStore(connection)
            for id in [merge.intoID, merge.fromID].sorted() { _ = try await users.findForUpdate(id: id) }
            guard try await users.find(id: merge.fromID)?.mergedInto == merge.intoID else {
                throw Self.changedSince("The merged account changed since")
            }
            let identities = IdentityStore(connection)
            for id in undo.identities where try await identities.find(id: id)?.userID != merge.intoID {
                throw Self.changedSince("A sign-in method the merge moved was unlinked or moved since")
            }
            for id in undo.identities { try await identities.move(identityID: id, to: merge.fromID) }
            var report = RevertResult(mergeID: mergeID, into: merge.intoID, from: merge.fromID)
            try await Self.returnRecords(merge, undo, connection, &report, at: now)
            try await users.unmerge(id: merge.fromID, at: now)
            try await MergeStore(connection).markReverted(id: mergeID, at: now)
            try await dependencies.audit(connection, at: now, clientIP: client.ip).write(
                .accountUnmerged, userID: merge.fromID,
                details: ["from": merge.fromID, "to": merge.intoID, "merge_id": mergeID, "actor": "admin"])
            report.identitiesReturned = undo.identities.count
            return report
        }
        dependencies.signals.recordsChanged([report.into, report.from], written: [])
        dependencies.signals.accessChanged([report.into])
        return report
    }

    /// Each moved record the survivor still has at the merge's version goes back; where both had it, each gets its
    /// own version back (the survivor's from the losers when it had lost). The survivor's devices learn of a record
    /// that left by its tombstone.
    private static func returnRecords(_ merge: MergeRow, _ undo: MergeUndo, _ connection: any DatabaseConnection,
                                      _ report: inout RevertResult, at now: Date) async throws {
        let records = RecordStore(connection)
        let losers = Dictionary(try await MergeStore(connection).losers(mergeID: merge.id).map {
            ("\($0.collection)/\($0.recordID)", $0)
        }, uniquingKeysWith: { first, _ in first })
        for moved in undo.records {
            guard let current = try await records.find(ownerID: merge.intoID, collection: moved.collection,
                                                       recordID: moved.id), current.version == moved.versionAfter else {
                report.recordsKept += 1
                continue
            }
            let loser = losers["\(moved.collection)/\(moved.id)"]
            // The absorbed account's own version: the one that won, or the one kept as a loser.
            let absorbed = (!moved.clash || moved.absorbedWon) ? (current.updatedAt, current.data) : (loser?.updatedAt ?? current.updatedAt, loser?.data)
            try await records.upsert(ownerID: merge.fromID, collection: moved.collection, recordID: moved.id,
                                     version: current.version + 1, updatedAt: absorbed.0, data: absorbed.1)
            if !moved.clash {
                try await records.upsert(ownerID: merge.intoID, collection: moved.collection, recordID: moved.id,
                                         version: current.version + 1, updatedAt: now, data: nil)
            } else if moved.absorbedWon, let loser {
                try await records.upsert(ownerID: merge.intoID, collection: moved.collection, recordID: moved.id,
                                         version: current.version + 1, updatedAt: loser.updatedAt, data: loser.data)
            }
            report.recordsReturned += 1
        }
    }

    static func changedSince(_ message: String) -> LanyardError {
        LanyardError.mergeConflict("changed_since", message)
    }
}
