import Foundation

/// The admin API's reads across accounts: search with keyset paging, the audit log by filter, counts for stats.
public struct AdminStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// What a search matches and where a page starts.
    public struct UserFilter: Sendable {
        /// An account id, a provider subject (exact) or part of an email or display name (any case).
        public var query: String?
        public var anonymous: Bool?
        public var disabled: Bool?
        public var provider: String?
        /// An exact legacy id, of any source.
        public var legacyID: String?
        /// The accounts an import batch created (`imp_…`).
        public var importBatch: String?
        /// The last account of the previous page; accounts come newest first.
        public var after: (createdAt: Date, id: String)?
        public var limit: Int

        public init(query: String? = nil, anonymous: Bool? = nil, disabled: Bool? = nil, provider: String? = nil,
                    after: (createdAt: Date, id: String)? = nil, limit: Int) {
            (self.query, self.anonymous, self.disabled, self.provider, self.after, self.limit) =
                (query, anonymous, disabled, provider, after, limit)
        }
    }

    /// Accounts (not merged away) matching `filter`, newest first, ties by id: a page never repeats or skips one.
    public func searchUsers(_ filter: UserFilter) async throws -> [UserRecord] {
        var clauses = ["u.merged_into IS NULL"]
        var binds: [SQLValue] = []
        func bind(_ value: SQLValue) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        if let query = filter.query, !query.isEmpty {
            let exact = bind(.text(query))
            let pattern = bind(.text("%" + Self.escapedForLike(query.lowercased()) + "%"))
            clauses.append("""
                (u.id = \(exact) OR lower(coalesce(u.display_name, '')) LIKE \(pattern) ESCAPE '\\' OR EXISTS (
                    SELECT 1 FROM identities i WHERE i.user_id = u.id
                    AND (i.provider_user_id = \(exact) OR lower(coalesce(i.email, '')) LIKE \(pattern) ESCAPE '\\')))
                """)
        }
        if let anonymous = filter.anonymous { clauses.append("u.is_anonymous = \(bind(.bool(anonymous)))") }
        if let disabled = filter.disabled { clauses.append(disabled ? "u.disabled_at IS NOT NULL" : "u.disabled_at IS NULL") }
        if let provider = filter.provider {
            clauses.append("EXISTS (SELECT 1 FROM identities p WHERE p.user_id = u.id AND p.provider = \(bind(.text(provider))))")
        }
        if let legacyID = filter.legacyID { clauses.append("u.legacy_id = \(bind(.text(legacyID)))") }
        if let batch = filter.importBatch { clauses.append("u.import_batch = \(bind(.text(batch)))") }
        if let after = filter.after {
            let createdAt = bind(.date(after.createdAt)), id = bind(.text(after.id))
            clauses.append("(u.created_at < \(createdAt) OR (u.created_at = \(createdAt) AND u.id < \(id)))")
        }
        let sql = "SELECT u.* FROM users u WHERE \(clauses.joined(separator: " AND ")) "
            + "ORDER BY u.created_at DESC, u.id DESC LIMIT \(bind(.integer(Int64(filter.limit))))"
        return try await connection.query(sql, binds).map(UserRecord.init(row:))
    }

    /// Identities of several accounts, oldest link first within each.
    public func identities(userIDs: [String]) async throws -> [String: [IdentityRecord]] {
        guard !userIDs.isEmpty else { return [:] }
        let placeholders = userIDs.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let rows = try await connection.query(
            "SELECT * FROM identities WHERE user_id IN (\(placeholders)) ORDER BY user_id, link_position",
            userIDs.map(SQLValue.text))
        return Dictionary(grouping: try rows.map(IdentityRecord.init(row:)), by: \.userID)
    }

    /// Audit entries matching the filters, newest first, before entry `before` (an id) when given.
    public func auditEntries(userID: String?, event: String?, before: Int64?, limit: Int) async throws -> [(id: Int64, entry: AuditEntry)] {
        var clauses: [String] = []
        var binds: [SQLValue] = []
        if let userID { binds.append(.text(userID)); clauses.append("user_id = $\(binds.count)") }
        if let event { binds.append(.text(event)); clauses.append("event = $\(binds.count)") }
        if let before { binds.append(.integer(before)); clauses.append("id < $\(binds.count)") }
        binds.append(.integer(Int64(limit)))
        let filter = clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
        return try await connection.query("SELECT * FROM audit_log \(filter) ORDER BY id DESC LIMIT $\(binds.count)", binds)
            .map { (try $0.integer("id"), try AuditEntry(row: $0)) }
    }

    /// Accounts (not merged away), guests among them, disabled ones.
    public func accountCounts() async throws -> (accounts: Int, guests: Int, disabled: Int) {
        let row = try await connection.first("""
            SELECT count(*) AS accounts,
                   CAST(coalesce(sum(CASE WHEN is_anonymous = 1 THEN 1 ELSE 0 END), 0) AS BIGINT) AS guests,
                   CAST(coalesce(sum(CASE WHEN disabled_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS BIGINT) AS disabled
            FROM users WHERE merged_into IS NULL
            """)
        return (Int(try row?.integer("accounts") ?? 0), Int(try row?.integer("guests") ?? 0),
                Int(try row?.integer("disabled") ?? 0))
    }

    /// Accounts active since `date`.
    public func activeAccounts(since date: Date) async throws -> Int {
        Int(try await connection.first("SELECT count(*) AS n FROM users WHERE merged_into IS NULL AND last_active_at >= $1",
                                       [.date(date)])?.integer("n") ?? 0)
    }

    /// Counts of `event` per UTC day (days since 1970) since `date`, split by the `provider` in its details when
    /// `byProvider` (the details are JSON objects written by `AuditLog`).
    public func dailyCounts(event: String, since date: Date, byProvider: Bool) async throws -> [(day: Int64, provider: String?, count: Int)] {
        let provider = switch connection.dialect {
        case .sqlite: "json_extract(details, '$.provider')"
        case .postgres: "(details::json ->> 'provider')"
        }
        let groupExtra = byProvider ? ", \(provider)" : ""
        let rows = try await connection.query("""
            SELECT at / 86400000 AS day\(byProvider ? ", \(provider) AS provider" : ""), count(*) AS n
            FROM audit_log WHERE event = $1 AND at >= $2
            GROUP BY at / 86400000\(groupExtra) ORDER BY day
            """, [.text(event), .date(date)])
        return try rows.map { (try $0.integer("day"), try $0.optionalString("provider"), Int(try $0.integer("n"))) }
    }

    static func escapedForLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
