import Foundation

public struct UserRecord: Sendable, Equatable {
    public var id: String
    public var createdAt: Date
    public var updatedAt: Date
    public var lastActiveAt: Date
    public var isAnonymous: Bool
    public var displayName: String?
    public var mergedInto: String?
    public var mergedAt: Date?
    /// Set while an operator has disabled the account (reference section 11).
    public var disabledAt: Date?
    /// How the account was merged away (`guest` or `full`), when it was.
    public var mergeKind: String?
    /// The account's memberships as the access token's `groups` claim reads them: `<group>:<role>` joined by
    /// commas, oldest first; `nil` without any (`GroupMemberStore` keeps it).
    public var groupClaims: String?
    /// The id another system knew this account by, and that system's name (reference section 24).
    public var legacy: LegacyAccountID?
    /// The import batch that made this account, if one did.
    public var importBatch: String?

    public init(id: String, createdAt: Date, isAnonymous: Bool, displayName: String? = nil) {
        self.id = id
        self.createdAt = createdAt
        self.updatedAt = createdAt
        self.lastActiveAt = createdAt
        self.isAnonymous = isAnonymous
        self.displayName = displayName
    }

    init(row: SQLRow) throws {
        id = try row.string("id")
        createdAt = try row.date("created_at")
        updatedAt = try row.date("updated_at")
        lastActiveAt = try row.date("last_active_at")
        isAnonymous = try row.bool("is_anonymous")
        displayName = try row.optionalString("display_name")
        mergedInto = try row.optionalString("merged_into")
        mergedAt = try row.optionalDate("merged_at")
        disabledAt = try row.optionalDate("disabled_at")
        groupClaims = try row.optionalString("group_claims")
        mergeKind = try row.optionalString("merge_kind")
        if let source = try row.optionalString("legacy_source"), let id = try row.optionalString("legacy_id") {
            legacy = LegacyAccountID(source: source, id: id)
        }
        importBatch = try row.optionalString("import_batch")
    }
}

/// A session with its account and the account's identities (oldest link first).
public struct SessionWithAccount: Sendable {
    public var session: SessionRecord
    public var user: UserRecord
    public var identities: [IdentityRecord]
    /// The place after the account's last identity in its order, as read (`IdentityStore.link(_:at:)`).
    public var nextLinkPosition: Int64
}

/// The `users` table.
public struct UserStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    public func insert(_ user: UserRecord) async throws {
        try await connection.enqueueWrite("""
            INSERT INTO users (id, created_at, updated_at, last_active_at, is_anonymous, display_name)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [.text(user.id), .date(user.createdAt), .date(user.updatedAt), .date(user.lastActiveAt),
                  .bool(user.isAnonymous), .optionalText(user.displayName)])
    }

    public func find(id: String) async throws -> UserRecord? {
        try await connection.first("SELECT * FROM users WHERE id = $1", [.text(id)]).map(UserRecord.init(row:))
    }

    /// The account and its identities (oldest link first) in one query: this runs on most requests.
    public func findWithIdentities(id: String) async throws -> (UserRecord, [IdentityRecord])? {
        try await findWithIdentities(id: id, lock: "")
    }

    /// The account and its identities, the account locked until the transaction ends (links, unlinks, merges
    /// and deletions of one account queue up).
    /// The account locked, then its identities. Two statements on purpose: one `SELECT … JOIN … FOR UPDATE OF u`
    /// that waited for the lock would answer the identities as they were when it began (PostgreSQL's read
    /// committed), so two racing unlinks could each see the other's identity and remove the last way in.
    public func findWithIdentitiesForUpdate(id: String) async throws -> (UserRecord, [IdentityRecord])? {
        guard let user = try await findForUpdate(id: id) else { return nil }
        return (user, try await IdentityStore(connection).list(userID: id))
    }

    /// What linking decides from, in one query: the account, its identities, and the identity with this
    /// provider and subject if there is one (on any account). Nothing is locked: `IdentityStore.link` checks
    /// that the account is still live when it writes, and the unique constraints refuse an identity or a
    /// provider taken meanwhile (the link is retried and reads again). On PostgreSQL the read therefore needs
    /// no `BEGIN`, and a link is this read and one statement.
    public func findForLink(id: String, provider: String,
                            providerUserID: String) async throws -> (UserRecord, owned: [IdentityRecord], existing: IdentityRecord?)? {
        let rows = try await connection.query(Self.userForLink, [.text(id), .text(provider), .text(providerUserID)])
        guard let first = rows.first else { return nil }
        let identities = try Self.identities(in: rows)
        return (try UserRecord(row: first), identities.filter { $0.userID == id },
                identities.first { $0.provider == provider && $0.providerUserID == providerUserID })
    }

    private func findWithIdentities(id: String, lock: String) async throws -> (UserRecord, [IdentityRecord])? {
        let rows = try await connection.query(Self.userWithIdentities + lock, [.text(id)])
        guard let first = rows.first else { return nil }
        return (try UserRecord(row: first), try Self.identities(in: rows))
    }

    /// Sessions (up to `BatchedKeys.maximum`), each with its account and the account's identities, in one
    /// query: `GET /v1/users/me` and every bearer check, batched on PostgreSQL. Sessions not found are left out.
    public func findWithIdentities(sessionIDs: [String]) async throws -> [String: SessionWithAccount] {
        let column = SessionRecord.columnPrefix + "id"
        return try await BatchedKeys.rows(Self.sessionsWithUsersAndIdentities, keys: sessionIDs, column: column,
                                          on: connection).mapValues { rows in
            SessionWithAccount(session: try SessionRecord(row: rows[0], prefix: SessionRecord.columnPrefix),
                               user: try UserRecord(row: rows[0]), identities: try Self.identities(in: rows),
                               nextLinkPosition: try rows.compactMap { try $0.optionalInteger("identity_link_position") }
                                   .max().map { $0 + 1 } ?? 1)
        }
    }

    private static let sessionsWithUsersAndIdentities = BatchedKeys.Statements(orderBy: "identity_link_position") { id in
        """
        SELECT u.*, \(SessionRecord.prefixedColumns(table: "s")), \(identityColumns), i.link_position AS identity_link_position
        FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN identities i ON i.user_id = u.id
        WHERE s.id = \(id)
        """
    }

    static let identityColumns = """
        i.id AS identity_id, i.user_id AS identity_user_id, i.provider AS identity_provider,
        i.provider_user_id AS identity_provider_user_id,
        i.email AS identity_email, i.email_verified AS identity_email_verified,
        i.is_private_email AS identity_is_private_email, i.linked_at AS identity_linked_at,
        i.last_sign_in_at AS identity_last_sign_in_at
        """

    private static let userWithIdentities = """
        SELECT u.*, \(identityColumns)
        FROM users u LEFT JOIN identities i ON i.user_id = u.id
        WHERE u.id = $1 ORDER BY i.link_position
        """

    private static let userForLink = """
        SELECT u.*, \(identityColumns)
        FROM users u LEFT JOIN identities i ON i.user_id = u.id OR (i.provider = $2 AND i.provider_user_id = $3)
        WHERE u.id = $1 ORDER BY i.link_position
        """

    private static let sessionWithUserAndIdentities = """
        SELECT u.*, \(SessionRecord.prefixedColumns(table: "s")), \(identityColumns)
        FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN identities i ON i.user_id = u.id
        WHERE s.id = $1 ORDER BY i.link_position
        """

    /// The identities of rows from a `LEFT JOIN identities` selecting `identityColumns` (none: one row of nulls).
    static func identities(in rows: [SQLRow]) throws -> [IdentityRecord] {
        try rows.compactMap { row -> IdentityRecord? in
            guard let identityID = try row.optionalString("identity_id") else { return nil }
            return IdentityRecord(
                id: identityID, userID: try row.string("identity_user_id"), provider: try row.string("identity_provider"),
                providerUserID: try row.string("identity_provider_user_id"), email: try row.optionalString("identity_email"),
                emailVerified: try row.bool("identity_email_verified"),
                isPrivateEmail: try row.bool("identity_is_private_email"), linkedAt: try row.date("identity_linked_at"),
                lastSignInAt: try row.optionalDate("identity_last_sign_in_at"))
        }
    }

    /// Reads the account and locks it until the transaction ends (merges and deletions of one account queue up).
    public func findForUpdate(id: String) async throws -> UserRecord? {
        try await connection.first("SELECT * FROM users WHERE id = $1\(connection.dialect.forUpdate)", [.text(id)])
            .map(UserRecord.init(row:))
    }

    /// Records activity, at most once a minute per account: idleness is counted in days, and a write per
    /// request would serialize every request of one account on its row.
    /// `last_active_at` is kept to the minute: written only when it is older than this.
    public static let activityResolution: TimeInterval = 60

    /// Whether an account last active at `lastActiveAt` needs `markActive` at `date`.
    public static func activityIsStale(_ lastActiveAt: Date, at date: Date) -> Bool {
        date.timeIntervalSince(lastActiveAt) >= activityResolution
    }

    public func markActive(id: String, at date: Date) async throws {
        try await connection.enqueueWrite("UPDATE users SET last_active_at = $2 WHERE id = $1 AND last_active_at <= $3",
                                          [.text(id), .date(date), .date(date.addingTimeInterval(-Self.activityResolution))])
    }

    public func setDisplayName(id: String, to name: String?, at date: Date) async throws {
        try await connection.query("UPDATE users SET display_name = $2, updated_at = $3 WHERE id = $1",
                                   [.text(id), .optionalText(name), .date(date)])
    }

    /// Fills the name only when the account has none (Apple sends the name on the first authorization only).
    public func setDisplayNameIfEmpty(id: String, to name: String, at date: Date) async throws {
        try await connection.enqueueWrite("""
            UPDATE users SET display_name = $2, updated_at = $3 WHERE id = $1 AND display_name IS NULL
            """, [.text(id), .text(name), .date(date)])
    }

    /// Disables (a date) or enables (nil) the account.
    public func setDisabled(id: String, at disabledAt: Date?, now: Date) async throws {
        try await connection.query("UPDATE users SET disabled_at = $2, updated_at = $3 WHERE id = $1",
                                   [.text(id), disabledAt.map(SQLValue.date) ?? .null, .date(now)])
    }

    public func setAnonymous(id: String, _ isAnonymous: Bool, at date: Date) async throws {
        try await connection.enqueueWrite("UPDATE users SET is_anonymous = $2, updated_at = $3 WHERE id = $1",
                                          [.text(id), .bool(isAnonymous), .date(date)])
    }

    /// `kind`: `guest` or `full` (reference section 15); a full merge's tokens get `ACCOUNT_MERGED`.
    public func markMerged(id: String, into target: String, at date: Date, kind: String = "guest") async throws {
        try await connection.query("""
            UPDATE users SET merged_into = $2, merged_at = $3, updated_at = $3, merge_kind = $4 WHERE id = $1
            """, [.text(id), .text(target), .date(date), .text(kind)])
    }

    /// Brings back an account a full merge absorbed (its revert).
    public func unmerge(id: String, at date: Date) async throws {
        try await connection.query("""
            UPDATE users SET merged_into = NULL, merged_at = NULL, merge_kind = NULL, updated_at = $2 WHERE id = $1
            """, [.text(id), .date(date)])
    }

    public func delete(id: String) async throws {
        try await connection.query("DELETE FROM users WHERE id = $1", [.text(id)])
    }

    /// Deletes up to `limit` anonymous accounts not active since `cutoff` (merged ones included: they hold
    /// nothing any more). The conditions are checked again at deletion, so an account upgraded meanwhile stays.
    public func deleteIdleAnonymous(before cutoff: Date, limit: Int) async throws -> [String] {
        try await connection.query("""
            DELETE FROM users
            WHERE id IN (SELECT id FROM users WHERE is_anonymous = 1 AND last_active_at < $1
                         ORDER BY last_active_at LIMIT $2)
              AND is_anonymous = 1 AND last_active_at < $1
            RETURNING id
            """, [.date(cutoff), .integer(Int64(limit))]).map { try $0.string("id") }
    }
}
