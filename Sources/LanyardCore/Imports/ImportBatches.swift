import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

/// Import batches for operators (reference section 24): the list with its counts, and `undo`, which removes exactly
/// the accounts a batch created that nobody has signed into since; with `force`, those too.
public struct ImportBatches: Sendable {
    let dependencies: CoreDependencies

    /// Accounts removed per transaction.
    static let chunkSize = 500

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// Batches, newest first, and per source how many accounts carry a legacy id and how many have crossed.
    public func list(limit: Int = 100) async throws -> ImportBatchList {
        try await dependencies.database.read { connection in
            let store = ImportStore(connection)
            var batches: [ImportBatch] = []
            for record in try await store.batches(limit: limit) {
                let accounts = try await store.batchAccounts(batchID: record.id)
                batches.append(ImportBatch(record, signedIn: accounts.filter(\.used).count))
            }
            let sources = try await store.legacyCounts().map {
                LegacySourceCount(source: $0.source, accounts: $0.accounts, signedIn: $0.crossed)
            }
            return ImportBatchList(batches: batches, sources: sources)
        }
    }

    public func batch(id: String) async throws -> ImportBatch {
        try await dependencies.database.read { connection in
            let store = ImportStore(connection)
            guard let record = try await store.batch(id: id) else { throw LanyardError.notFound("No such import batch") }
            return ImportBatch(record, signedIn: try await store.batchAccounts(batchID: id).filter(\.used).count)
        }
    }

    /// Removes the batch's accounts. Without `force`, refused (`409`, nothing removed) when someone has signed into
    /// one of them since: that person's account is in use. An account signed into while the undo runs is kept (the
    /// removal re-checks each account in the statement that deletes it). An import still running stops at its next
    /// chunk, and every account it wrote is taken back; an undo that stopped part way can be run again.
    public func undo(batchID: String, force: Bool, actor: String, client: ClientInfo) async throws -> ImportUndoResult {
        let dependencies = self.dependencies
        let seen = try await dependencies.database.read { connection in
            let store = ImportStore(connection)
            guard let batch = try await store.batch(id: batchID) else { throw LanyardError.notFound("No such import batch") }
            guard batch.accountsRemoved == nil else {
                throw LanyardError.invalidRequest(field: "batch", "This batch was undone already")
            }
            return try await store.batchAccounts(batchID: batchID)
        }
        let usedBefore = seen.filter(\.used).count
        if usedBefore > 0 && !force {
            var refusal = LanyardError(.invalidRequest, """
                Someone has signed into \(usedBefore) of this batch's accounts since the import; undo with force to \
                remove them too
                """, details: ["field": "force", "reason": "signed_in_since", "accounts_signed_in": .number(Double(usedBefore))])
            refusal.statusOverride = 409
            throw refusal
        }
        // From here a running import writes nothing more; what it wrote before is listed below.
        let accounts = try await dependencies.database.transaction { connection in
            try await ImportStore(connection).beginUndo(id: batchID, at: dependencies.clock.now())
            return try await ImportStore(connection).batchAccounts(batchID: batchID)
        }
        // Without force, accounts signed into since the check above are kept, as the removal keeps them.
        let used = force ? accounts.filter(\.used).map(\.id) : []
        var removed = 0
        var kept = force ? 0 : accounts.filter(\.used).count
        let unused = accounts.filter { !$0.used }.map(\.id)
        for start in stride(from: 0, to: unused.count, by: Self.chunkSize) {
            let chunk = Array(unused[start..<min(start + Self.chunkSize, unused.count)])
            let (present, gone) = try await dependencies.database.transactionRetryingConflicts { connection in
                let now = dependencies.clock.now()
                let (present, ids) = try await Self.removeUnused(chunk, batchID: batchID, connection: connection)
                let audit = dependencies.audit(connection, at: now, clientIP: client.ip)
                for id in ids {
                    try await audit.write(.userDeleted, userID: id, details: ["actor": actor, "import_batch": batchID])
                }
                return (present, ids.count)
            }
            removed += gone
            kept += present - gone
        }
        if force {
            for id in used {
                do {
                    try await AccountDeletion(dependencies).deleteByAdmin(userID: id, client: client)
                    removed += 1
                } catch let error as LanyardError where error.code == .notFound {
                    continue
                }
            }
        }
        let total = removed
        try await dependencies.database.transaction { connection in
            try await ImportStore(connection).markUndone(id: batchID, at: dependencies.clock.now(), removed: total)
        }
        return ImportUndoResult(batchID: batchID, removed: removed, keptSignedIn: force ? 0 : kept)
    }

    /// Deletes those of `ids` still unused, in the statement that checks it; answers how many were still here and
    /// the ids deleted (an undo running beside this one may have removed some already: neither kept nor ours).
    private static func removeUnused(_ ids: [String], batchID: String,
                                     connection: any DatabaseConnection) async throws -> (present: Int, deleted: [String]) {
        let placeholders = ids.indices.map { "$\($0 + 2)" }.joined(separator: ", ")
        // Locked first, in a statement of its own: a sign-in opening a session on one of them commits before, and
        // the delete's own snapshot (read committed: taken by each statement) sees that session; one that comes
        // later waits for the undo and finds the account gone.
        let present = try await connection.query("SELECT id FROM users WHERE import_batch = $1 AND id IN (\(placeholders))"
                                                 + connection.dialect.forUpdate, [.text(batchID)] + ids.map(SQLValue.text)).count
        let deleted = try await connection.query("""
            DELETE FROM users WHERE import_batch = $1 AND id IN (\(placeholders)) AND merged_into IS NULL
            AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = users.id)
            AND NOT EXISTS (SELECT 1 FROM users m WHERE m.merged_into = users.id)
            RETURNING id
            """, [.text(batchID)] + ids.map(SQLValue.text)).map { try $0.string("id") }
        return (present, deleted)
    }
}

extension ImportBatch {
    init(_ record: ImportBatchRecord, signedIn: Int) {
        let report = try? WireCoding.decoder().decode(ImportReport.self, from: Data(record.report.utf8))
        self.init(id: record.id, source: record.source, format: record.format, origin: record.origin, actor: record.actor,
                  startedAt: record.startedAt, finishedAt: record.finishedAt, accountsCreated: record.accountsCreated,
                  accountsSignedIn: signedIn, undoneAt: record.undoneAt, accountsRemoved: record.accountsRemoved,
                  report: report)
    }
}
