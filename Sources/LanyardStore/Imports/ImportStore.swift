import Foundation

/// The id another system knew an account by (reference section 24): unique per source, by the partial index
/// `users_legacy_id`.
public struct LegacyAccountID: Sendable, Hashable {
    /// `firebase`, `supabase`, `clerk`, `auth0`, or an operator's name.
    public var source: String
    public var id: String

    public init(source: String, id: String) {
        (self.source, self.id) = (source, id)
    }
}

/// An import batch: one run of `lanyard import` or `POST /v1/admin/imports` that wrote something.
public struct ImportBatchRecord: Sendable, Equatable {
    public var id: String
    public var source: String
    /// The format read (`firebase-auth-export`, `supabase-database`, `jsonl`, …).
    public var format: String
    /// Where the lines came from: a file's name, `database`, `admin-api`.
    public var origin: String
    /// `cli` or `admin`.
    public var actor: String
    public var startedAt: Date
    public var finishedAt: Date?
    public var accountsCreated: Int
    /// The report's JSON text (`ImportReport`).
    public var report: String
    public var undoneAt: Date?
    public var accountsRemoved: Int?

    public init(id: String, source: String, format: String, origin: String, actor: String, startedAt: Date,
                finishedAt: Date? = nil, accountsCreated: Int = 0, report: String = "{}") {
        (self.id, self.source, self.format, self.origin, self.actor) = (id, source, format, origin, actor)
        (self.startedAt, self.finishedAt, self.accountsCreated, self.report) = (startedAt, finishedAt, accountsCreated, report)
    }

    init(row: SQLRow) throws {
        id = try row.string("id")
        source = try row.string("source")
        format = try row.string("format")
        origin = try row.string("origin")
        actor = try row.string("actor")
        startedAt = try row.date("started_at")
        finishedAt = try row.optionalDate("finished_at")
        accountsCreated = Int(try row.integer("accounts_created"))
        report = try row.string("report")
        undoneAt = try row.optionalDate("undone_at")
        accountsRemoved = try row.optionalInteger("accounts_removed").map(Int.init)
    }
}

/// Legacy ids on `users` and the `import_batches` table.
public struct ImportStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// The account (merged away or not) that carries `legacy`.
    public func findAccount(_ legacy: LegacyAccountID) async throws -> UserRecord? {
        try await connection.first("SELECT * FROM users WHERE legacy_source = $1 AND legacy_id = $2 AND legacy_id IS NOT NULL",
                                   [.text(legacy.source), .text(legacy.id)]).map(UserRecord.init(row:))
    }

    /// The legacy id of an account, if it has one.
    public func legacyID(userID: String) async throws -> LegacyAccountID? {
        guard let row = try await connection.first("SELECT legacy_source, legacy_id FROM users WHERE id = $1", [.text(userID)]),
              let source = try row.optionalString("legacy_source"), let id = try row.optionalString("legacy_id") else { return nil }
        return LegacyAccountID(source: source, id: id)
    }

    /// Which of `ids` (of one source) accounts carry already, with those accounts' ids.
    public func accounts(source: String, legacyIDs ids: [String]) async throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        let placeholders = ids.indices.map { "$\($0 + 2)" }.joined(separator: ", ")
        let rows = try await connection.query(
            "SELECT id, legacy_id FROM users WHERE legacy_source = $1 AND legacy_id IN (\(placeholders)) AND legacy_id IS NOT NULL",
            [.text(source)] + ids.map(SQLValue.text))
        return Dictionary(try rows.map { (try $0.string("legacy_id"), try $0.string("id")) }, uniquingKeysWith: { first, _ in first })
    }

    /// Which of `ids` are account ids already.
    public func existingAccountIDs(_ ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let placeholders = ids.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return Set(try await connection.query("SELECT id FROM users WHERE id IN (\(placeholders))", ids.map(SQLValue.text))
            .map { try $0.string("id") })
    }

    /// Identities of `provider` among `subjects`, with the legacy id of the account that holds each.
    public func identityOwners(provider: String, subjects: [String]) async throws -> [String: (userID: String, legacy: LegacyAccountID?)] {
        guard !subjects.isEmpty else { return [:] }
        let placeholders = subjects.indices.map { "$\($0 + 2)" }.joined(separator: ", ")
        let rows = try await connection.query("""
            SELECT i.provider_user_id, u.id, u.legacy_source, u.legacy_id FROM identities i JOIN users u ON u.id = i.user_id
            WHERE i.provider = $1 AND i.provider_user_id IN (\(placeholders))
            """, [.text(provider)] + subjects.map(SQLValue.text))
        var owners: [String: (userID: String, legacy: LegacyAccountID?)] = [:]
        for row in rows {
            let legacy = try row.optionalString("legacy_source").flatMap { source in
                try row.optionalString("legacy_id").map { LegacyAccountID(source: source, id: $0) }
            }
            owners[try row.string("provider_user_id")] = (try row.string("id"), legacy)
        }
        return owners
    }

    /// A new account carrying a legacy id (and the batch that made it, when an import did).
    public func insertAccount(_ user: UserRecord) async throws {
        try await connection.enqueueWrite("""
            INSERT INTO users (id, created_at, updated_at, last_active_at, is_anonymous, display_name, disabled_at,
                               legacy_source, legacy_id, import_batch)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """, [.text(user.id), .date(user.createdAt), .date(user.updatedAt), .date(user.lastActiveAt),
                  .bool(user.isAnonymous), .optionalText(user.displayName), .optionalDate(user.disabledAt),
                  .optionalText(user.legacy?.source), .optionalText(user.legacy?.id), .optionalText(user.importBatch)])
    }

    /// Gives an account without a legacy id of this source `legacy`.
    /// - Throws: `StoreError.uniqueViolation` when another account carries it already.
    public func setLegacy(_ legacy: LegacyAccountID, userID: String, at date: Date) async throws -> Bool {
        try await connection.first("""
            UPDATE users SET legacy_source = $2, legacy_id = $3, updated_at = $4 WHERE id = $1 AND legacy_id IS NULL
            RETURNING id
            """, [.text(userID), .text(legacy.source), .text(legacy.id), .date(date)]) != nil
    }

    /// Whether anyone has ever signed into the account (a session, ended or not: they are kept after they end).
    public func hasSessions(userID: String) async throws -> Bool {
        try await connection.first("SELECT 1 AS one FROM sessions WHERE user_id = $1 LIMIT 1", [.text(userID)]) != nil
    }

    /// The place after the account's last identity in its order.
    public func nextLinkPosition(userID: String) async throws -> Int64 {
        try await connection.first("SELECT COALESCE(MAX(link_position), 0) + 1 AS next FROM identities WHERE user_id = $1",
                                   [.text(userID)])?.integer("next") ?? 1
    }

    public func insertBatch(_ batch: ImportBatchRecord) async throws {
        try await connection.query("""
            INSERT INTO import_batches (id, source, format, origin, actor, started_at, finished_at, accounts_created, report)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """, [.text(batch.id), .text(batch.source), .text(batch.format), .text(batch.origin), .text(batch.actor),
                  .date(batch.startedAt), .optionalDate(batch.finishedAt), .integer(Int64(batch.accountsCreated)),
                  .text(batch.report)])
    }

    public func finishBatch(id: String, at date: Date, accountsCreated: Int, report: String) async throws {
        try await connection.query("""
            UPDATE import_batches SET finished_at = $2, accounts_created = $3, report = $4 WHERE id = $1
            """, [.text(id), .date(date), .integer(Int64(accountsCreated)), .text(report)])
    }

    public func batch(id: String) async throws -> ImportBatchRecord? {
        try await connection.first("SELECT * FROM import_batches WHERE id = $1", [.text(id)]).map(ImportBatchRecord.init(row:))
    }

    /// Batches, newest first.
    public func batches(limit: Int) async throws -> [ImportBatchRecord] {
        try await connection.query("SELECT * FROM import_batches ORDER BY started_at DESC, id DESC LIMIT $1",
                                   [.integer(Int64(limit))]).map(ImportBatchRecord.init(row:))
    }

    /// The batch's accounts still here, each with whether anyone has signed into it (a session: imported accounts
    /// start with none, and sessions are kept after they end) or merged it since.
    public func batchAccounts(batchID: String) async throws -> [(id: String, used: Bool)] {
        try await connection.query("""
            SELECT u.id, CASE WHEN u.merged_into IS NOT NULL OR EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id)
                              OR EXISTS (SELECT 1 FROM users m WHERE m.merged_into = u.id) THEN 1 ELSE 0 END AS used
            FROM users u WHERE u.import_batch = $1 ORDER BY u.id
            """, [.text(batchID)]).map { (try $0.string("id"), try $0.integer("used") != 0) }
    }

    /// Holds the batch's row until the transaction ends, so an undo cannot begin meanwhile; `false` once an undo has
    /// begun (the import's next chunk must not write accounts the undo has already listed).
    public func holdOpenBatch(id: String) async throws -> Bool {
        try await connection.first("UPDATE import_batches SET started_at = started_at WHERE id = $1 AND undone_at IS NULL RETURNING id",
                                   [.text(id)]) != nil
    }

    /// Counts accounts a chunk of the running import created, so a batch shows them before it finishes.
    public func addCreated(id: String, count: Int) async throws {
        try await connection.query("UPDATE import_batches SET accounts_created = accounts_created + $2 WHERE id = $1",
                                   [.text(id), .integer(Int64(count))])
    }

    /// Marks an undo begun (`undone_at`), after any chunk of a running import that holds the row has committed.
    public func beginUndo(id: String, at date: Date) async throws {
        try await connection.query("UPDATE import_batches SET undone_at = COALESCE(undone_at, $2) WHERE id = $1",
                                   [.text(id), .date(date)])
    }

    /// Marks an undo finished, adding what it removed to `accounts_removed` (undos racing, or one run again after
    /// it stopped part way, each add their own).
    public func markUndone(id: String, at date: Date, removed: Int) async throws {
        try await connection.query("""
            UPDATE import_batches SET undone_at = COALESCE(undone_at, $2),
                accounts_removed = COALESCE(accounts_removed, 0) + $3 WHERE id = $1
            """, [.text(id), .date(date), .integer(Int64(removed))])
    }

    /// Accounts carrying a legacy id, and those of them signed into since (any session), per source: the console's
    /// counts of who has crossed.
    public func legacyCounts() async throws -> [(source: String, accounts: Int, crossed: Int)] {
        try await connection.query("""
            SELECT u.legacy_source AS source, count(*) AS accounts,
                   CAST(coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id) THEN 1 ELSE 0 END), 0) AS BIGINT) AS crossed
            FROM users u WHERE u.legacy_id IS NOT NULL AND u.merged_into IS NULL
            GROUP BY u.legacy_source ORDER BY u.legacy_source
            """).map { (try $0.string("source"), Int(try $0.integer("accounts")), Int(try $0.integer("crossed"))) }
    }
}
