import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

/// `lanyard import` and `POST /v1/admin/imports` (reference section 24): writes the people a reader read as
/// accounts, keyed by (provider, subject) and by legacy id, never by email. A record whose legacy id an account
/// carries already changes nothing (a second run of a file is a no-op); a record whose identity another account
/// holds, or whose legacy id or kept id is taken, is reported and left out whole: never merged. Each run that
/// creates accounts is a batch that `ImportUndo` can take back.
public struct Importer: Sendable {
    let dependencies: CoreDependencies

    /// Records per transaction: large enough that 100,000 people import in minutes, small enough that a
    /// transaction holds SQLite's writer (and sign-ins waiting for it) for well under a second.
    public static let chunkSize = 250
    /// Conflicts listed in a report; `conflict_counts` counts them all.
    public static let listedConflicts = 1000

    /// Records per transaction in this importer: `chunkSize`, or fewer where a test wants several chunks cheaply.
    let recordsPerChunk: Int

    public init(_ dependencies: CoreDependencies, recordsPerChunk: Int = Importer.chunkSize) {
        self.dependencies = dependencies
        self.recordsPerChunk = max(1, recordsPerChunk)
    }

    /// What the run is, for its batch row.
    public struct Run: Sendable {
        /// A file's name, `database` or `admin-api`.
        public var origin: String
        /// `cli` or `admin`.
        public var actor: String
        public var dryRun: Bool

        public init(origin: String, actor: String, dryRun: Bool) {
            (self.origin, self.actor, self.dryRun) = (origin, actor, dryRun)
        }
    }

    public func run(_ file: ImportFile, _ run: Run, client: ClientInfo,
                    progress: @Sendable (ImportReport) async -> Void = { _ in }) async throws -> ImportReport {
        let started = dependencies.clock.now()
        let batchID = "imp_" + dependencies.random.newID(at: started).replacingOccurrences(of: "-", with: "")
        var report = ImportReport(dryRun: run.dryRun, source: file.source, format: file.format)
        report.warnings = file.warnings
        report.read = file.records.count + file.skipped.count
        var tally = Tally()
        for conflict in file.skipped { tally.add(conflict, to: &report) }
        report.skipped = file.skipped.count
        if !run.dryRun {
            try await dependencies.database.transaction { connection in
                try await ImportStore(connection).insertBatch(ImportBatchRecord(
                    id: batchID, source: file.source, format: file.format, origin: String(run.origin.prefix(200)),
                    actor: run.actor, startedAt: started))
            }
        }
        // Claimed by earlier records of this run: a second claim is a conflict, as it would be against the database.
        var claimed = Claims()
        for chunk in stride(from: 0, to: file.records.count, by: recordsPerChunk) {
            let records = Array(file.records[chunk..<min(chunk + recordsPerChunk, file.records.count)])
            for outcome in try await writeSettling(records, source: file.source, batchID: batchID, run: run, claimed: claimed,
                                                   at: started, client: client) {
                claimed = outcome.claimed
                for conflict in outcome.conflicts { tally.add(conflict, to: &report) }
                report.created += outcome.created
                report.unchanged += outcome.unchanged
                report.skipped += outcome.skipped
                report.guests += outcome.guests
                report.disabled += outcome.disabled
                report.passwordUsers += outcome.passwordUsers
                report.passwordUsersWithoutEmail += outcome.passwordUsersWithoutEmail
                report.identities.merge(outcome.identities, uniquingKeysWith: +)
            }
            await progress(report)
        }
        guard !run.dryRun else { return report }
        let created = report.created
        if created > 0 { report.batchID = batchID }
        let finishedReport = report
        try await dependencies.database.transaction { connection in
            let store = ImportStore(connection)
            if created > 0 {
                try await store.finishBatch(id: batchID, at: self.dependencies.clock.now(), accountsCreated: created,
                                            report: Self.json(finishedReport))
            } else {
                // A run that made nothing (a file imported again) leaves no batch to undo.
                try await connection.query("DELETE FROM import_batches WHERE id = $1 AND undone_at IS NULL", [.text(batchID)])
            }
        }
        return report
    }

    static func json(_ report: ImportReport) -> String {
        (try? WireCoding.encoder().encode(report)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Identities and legacy ids this run has given out so far.
    struct Claims: Sendable {
        var identities: [String: String] = [:]
        var legacyIDs: Set<LegacyAccountID> = []
        var accountIDs: Set<String> = []
    }

    /// Adds conflicts to a report, listing the first `listedConflicts`.
    struct Tally {
        mutating func add(_ conflict: ImportConflict, to report: inout ImportReport) {
            report.conflictCounts[conflict.kind, default: 0] += 1
            if report.conflicts.count < Importer.listedConflicts { report.conflicts.append(conflict) }
        }
    }

    struct ChunkOutcome: Sendable {
        var claimed: Claims
        var conflicts: [ImportConflict] = []
        var created = 0, unchanged = 0, skipped = 0, guests = 0, disabled = 0, passwordUsers = 0
        var passwordUsersWithoutEmail = 0
        var identities: [String: Int] = [:]
    }

    /// A chunk whose transaction keeps meeting sign-ins or bridge crossings of its people (each retry reads again, and
    /// new ones commit meanwhile, as on switching day with the bridge live) is written in halves, down to single
    /// records, whose second read settles them (what a racer committed is then read as taken or unchanged).
    private func writeSettling(_ records: [ImportRecord], source: String, batchID: String, run: Run, claimed: Claims,
                               at now: Date, client: ClientInfo) async throws -> [ChunkOutcome] {
        do {
            return [try await write(records, source: source, batchID: batchID, run: run, claimed: claimed, at: now, client: client)]
        } catch let error as StoreError where error.isConflict && records.count > 1 {
            let half = records.count / 2
            let first = try await writeSettling(Array(records[..<half]), source: source, batchID: batchID, run: run,
                                                claimed: claimed, at: now, client: client)
            return first + (try await writeSettling(Array(records[half...]), source: source, batchID: batchID, run: run,
                                                    claimed: first.last?.claimed ?? claimed, at: now, client: client))
        }
    }

    /// One transaction: reads what the chunk's records would collide with, decides each record, writes the new
    /// accounts. A constraint conflict (a sign-in took an identity meanwhile) runs it again, reading again.
    private func write(_ records: [ImportRecord], source: String, batchID: String, run: Run, claimed: Claims, at now: Date,
                       client: ClientInfo) async throws -> ChunkOutcome {
        let dependencies = self.dependencies
        let work: @Sendable (any DatabaseConnection) async throws -> ChunkOutcome = { connection in
            let store = ImportStore(connection)
            // Held to the commit: an undo of this batch waits for this chunk, and once begun, stops the run here.
            if !run.dryRun, try await !store.holdOpenBatch(id: batchID) {
                var stopped = LanyardError(.invalidRequest, """
                    This import's batch was undone while it ran: it stopped, and the undo takes back every account it \
                    wrote; run the import again to bring them in
                    """, details: ["field": "batch", "reason": "batch_undone"])
                stopped.statusOverride = 409
                throw stopped
            }
            var outcome = ChunkOutcome(claimed: claimed)
            var owners: [String: (userID: String, legacy: LegacyAccountID?)] = [:]
            let identities = records.flatMap(\.identities)
            for (provider, group) in Dictionary(grouping: identities, by: \.provider) {
                for (subject, owner) in try await store.identityOwners(provider: provider, subjects: group.map(\.subject)) {
                    owners[provider + ":" + subject] = owner
                }
            }
            let takenIDs = try await store.existingAccountIDs(records.compactMap(\.keptID))
            // Read last: each statement sees what was committed when it ran (PostgreSQL's read committed), so an
            // account a racing run or bridge crossing committed with a record's legacy id, seen holding an identity
            // or an id above, is seen here too, and the record is unchanged, as run one after the other.
            var existingLegacy: [LegacyAccountID: String] = [:]
            for (recordSource, group) in Dictionary(grouping: records, by: { $0.legacySource ?? source }) {
                for (legacyID, accountID) in try await store.accounts(source: recordSource, legacyIDs: group.map(\.legacyID)) {
                    existingLegacy[LegacyAccountID(source: recordSource, id: legacyID)] = accountID
                }
            }
            let audit = dependencies.audit(connection, at: now, clientIP: client.ip)
            for record in records {
                let legacy = LegacyAccountID(source: record.legacySource ?? source, id: record.legacyID)
                func conflict(_ kind: String, provider: String? = nil, accountID: String? = nil, _ message: String) {
                    outcome.conflicts.append(ImportConflict(kind: kind, line: record.line, legacyID: record.legacyID,
                                                            provider: provider, accountID: accountID, message: message,
                                                            lineSkipped: true))
                    outcome.skipped += 1
                }
                if existingLegacy[legacy] != nil {
                    outcome.unchanged += 1
                    continue
                }
                if outcome.claimed.legacyIDs.contains(legacy) {
                    conflict("duplicate_legacy_id", "a second record with legacy id \(record.legacyID): left out")
                    continue
                }
                if let taken = record.identities.first(where: { owners[$0.provider + ":" + $0.subject] != nil
                    || outcome.claimed.identities[$0.provider + ":" + $0.subject] != nil }) {
                    let key = taken.provider + ":" + taken.subject
                    let holder = owners[key]?.userID ?? outcome.claimed.identities[key]
                    conflict("identity_in_use", provider: taken.provider, accountID: holder, """
                        this \(taken.provider) identity is already on another account: reported, not merged
                        """)
                    continue
                }
                if let kept = record.keptID, takenIDs.contains(kept) || outcome.claimed.accountIDs.contains(kept) {
                    conflict("id_in_use", accountID: kept, "another account has the id \(kept) already")
                    continue
                }
                outcome.conflicts.append(contentsOf: record.leftOut)
                var metadata: String?
                if let object = record.metadata {
                    metadata = try? UserMetadata.encoded(object)
                    if metadata == nil {
                        outcome.conflicts.append(ImportConflict(kind: "metadata_too_large", line: record.line,
                                                                legacyID: record.legacyID, message: """
                                                                    metadata over \(UserMetadata.maximumBytes / 1024) KiB: left out
                                                                    """, lineSkipped: false))
                    }
                }
                outcome.claimed.legacyIDs.insert(legacy)
                let accountID = record.keptID ?? dependencies.random.newID(at: now)
                if record.keptID != nil { outcome.claimed.accountIDs.insert(accountID) }
                for identity in record.identities { outcome.claimed.identities[identity.provider + ":" + identity.subject] = accountID }
                // No identity left to sign in with (a password user whose email was never verified): a guest that
                // keeps its legacy id, so the bridge still brings the person across.
                let anonymous = record.anonymous || record.identities.isEmpty
                outcome.created += 1
                if anonymous { outcome.guests += 1 }
                if record.disabled { outcome.disabled += 1 }
                if record.passwordUser {
                    outcome.passwordUsers += 1
                    if !record.identities.contains(where: { $0.provider == "email" }) { outcome.passwordUsersWithoutEmail += 1 }
                }
                for identity in record.identities { outcome.identities[identity.provider, default: 0] += 1 }
                guard !run.dryRun else { continue }
                try await Self.create(record, id: accountID, legacy: legacy, anonymous: anonymous, metadata: metadata, batchID: batchID,
                                      actor: run.actor, at: now, connection: connection, audit: audit, random: dependencies.random)
            }
            if !run.dryRun && outcome.created > 0 { try await store.addCreated(id: batchID, count: outcome.created) }
            return outcome
        }
        return run.dryRun ? try await dependencies.database.read(work)
            : try await dependencies.database.transactionRetryingConflicts(work)
    }

    private static func create(_ record: ImportRecord, id: String, legacy: LegacyAccountID, anonymous: Bool, metadata: String?,
                               batchID: String, actor: String,
                               at now: Date, connection: any DatabaseConnection, audit: AuditLog,
                               random: any RandomSource) async throws {
        let createdAt = record.createdAt.map { min($0, now) } ?? now
        var user = UserRecord(id: id, createdAt: createdAt, isAnonymous: anonymous, displayName: record.displayName)
        // Active as of the import: an idle-guest purge must not remove people who have not crossed yet.
        user.lastActiveAt = now
        user.updatedAt = now
        user.disabledAt = record.disabled ? now : nil
        user.legacy = legacy
        user.importBatch = batchID
        try await ImportStore(connection).insertAccount(user)
        for (position, identity) in record.identities.enumerated() {
            try await IdentityStore(connection).insert(IdentityRecord(
                id: random.newID(at: now), userID: id, provider: identity.provider, providerUserID: identity.subject,
                email: identity.email, emailVerified: identity.emailVerified, isPrivateEmail: identity.isPrivateEmail,
                linkedAt: createdAt, lastSignInAt: record.lastSignInAt.map { min($0, now) }), at: Int64(position + 1))
        }
        if let metadata {
            try await UserMetadataStore(connection).save(userID: id, data: metadata, at: now)
        }
        var details = ["legacy_id": legacy.id, "legacy_source": legacy.source, "import_batch": batchID, "actor": actor]
        details["provider"] = record.identities.first?.provider
        try await audit.write(.userCreated, userID: id, details: details)
    }
}
