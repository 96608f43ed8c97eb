import Foundation
import LanyardWire
import LanyardStore

/// The one record mover of merges, with the one tie rule: the absorbed account's records join the survivor's, those
/// only it has in one statement, the clashes one by one. On a clash `on_conflict` picks the winner (`newer`: the
/// later `updated_at`, the survivor's on a tie); the winner takes a version above both, so an edit made against either
/// old version fails its `If-Match`; the loser is kept with the merge for 30 days and named in the audit log.
struct MergeRecords {
    let connection: any DatabaseConnection
    let audit: AuditLog

    func move(_ plan: MergePlan, _ report: inout MergeResult, _ undo: inout MergeUndo) async throws {
        let records = RecordStore(connection)
        let merges = MergeStore(connection)
        for incoming in try await records.shared(from: plan.from, into: plan.into) {
            guard let existing = try await records.find(ownerID: plan.into, collection: incoming.collection,
                                                        recordID: incoming.recordID) else { continue }
            let (current, other) = plan.currentIsInto ? (existing, incoming) : (incoming, existing)
            let currentWins = MergeRules.currentWins(plan.onConflict, current: current.updatedAt,
                                                     other: other.updatedAt, survivorIsCurrent: plan.currentIsInto)
            let (winner, loser) = currentWins ? (current, other) : (other, current)
            let version = max(existing.version, incoming.version) + 1
            try await merges.insertLoser(mergeID: plan.mergeID, MergeLoserRow(
                collection: loser.collection, recordID: loser.recordID, accountID: loser.ownerID,
                version: loser.version, updatedAt: loser.updatedAt, deleted: loser.deleted, data: loser.data))
            try await audit.write(.mergeRecordReplaced, userID: plan.into, details: [
                "collection": loser.collection, "id": loser.recordID, "from_account": loser.ownerID,
                "kept": winner.ownerID == plan.into ? "into" : "from", "merge_id": plan.mergeID,
                "discarded_updated_at": String(loser.updatedAt.unixMilliseconds), "discarded_data": loser.data ?? "null"])
            try await records.upsert(ownerID: plan.into, collection: incoming.collection, recordID: incoming.recordID,
                                     version: version, updatedAt: winner.updatedAt, data: winner.data)
            report.conflicts.append(.init(collection: incoming.collection, id: incoming.recordID,
                                          winner: currentWins ? .current : .other))
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
}
