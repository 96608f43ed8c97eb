import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

/// Why sessions were ended, as stored in `sessions.revoked_reason`, where a rule reads it back.
public enum SessionEndReason {
    public static let accountDisabled = "account_disabled"
    public static let admin = "admin"
}

/// What an operator may do to accounts (reference section 11): find them, look at one, change its name, disable
/// or enable it, end its sessions, delete it. Every change is audited with actor `admin`.
public struct AccountAdministration: Sendable {
    public static let maximumPageSize = 200

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// A search, newest first; `cursor` is a previous page's `next_cursor`.
    public struct Search: Sendable {
        public var query: String?
        public var anonymous: Bool?
        public var disabled: Bool?
        public var provider: String?
        /// An exact legacy id (reference section 24), of any source.
        public var legacyID: String?
        /// The accounts an import batch created, still here (reference section 24).
        public var importBatch: String?
        public var cursor: String?
        public var limit: Int?

        public init(query: String? = nil, anonymous: Bool? = nil, disabled: Bool? = nil, provider: String? = nil,
                    legacyID: String? = nil, importBatch: String? = nil, cursor: String? = nil, limit: Int? = nil) {
            (self.query, self.anonymous, self.disabled, self.provider, self.cursor, self.limit) =
                (query, anonymous, disabled, provider, cursor, limit)
            (self.legacyID, self.importBatch) = (legacyID, importBatch)
        }
    }

    public func users(_ search: Search) async throws -> AdminPage<AdminUserSummary> {
        let limit = try Self.pageSize(search.limit, default: 50)
        var filter = AdminStore.UserFilter(query: search.query?.trimmingCharacters(in: .whitespaces),
                                           anonymous: search.anonymous, disabled: search.disabled,
                                           provider: search.provider, limit: limit + 1)
        filter.legacyID = search.legacyID
        filter.importBatch = search.importBatch
        if let cursor = search.cursor { filter.after = try UserCursor.decode(cursor) }
        let filterToRun = filter
        let (users, identities) = try await dependencies.database.read { connection in
            let store = AdminStore(connection)
            let users = try await store.searchUsers(filterToRun)
            return (users, try await store.identities(userIDs: users.map(\.id)))
        }
        let page = users.prefix(limit)
        let next = users.count > limit ? page.last.map { UserCursor.encode(createdAt: $0.createdAt, id: $0.id) } : nil
        return AdminPage(items: page.map { AdminUserSummary($0, identities: identities[$0.id] ?? []) },
                         nextCursor: next, itemsKey: "users")
    }

    public func user(id: String) async throws -> AdminUserDetails {
        let now = dependencies.clock.now()
        return try await dependencies.database.read { connection in
            guard let (user, identities) = try await UserStore(connection).findWithIdentities(id: id),
                  user.mergedInto == nil else { throw LanyardError.notFound("No such account") }
            let sessions = try await SessionStore(connection).listActive(userID: id, at: now)
            let audit = try await AdminStore(connection).auditEntries(userID: id, event: nil, before: nil, limit: 50)
            return AdminUserDetails(user: AdminUserSummary(user, identities: identities),
                                    identities: identities.enumerated().map { AdminIdentity($1, primary: $0 == 0) }, sessions: sessions.map(AdminSession.init),
                                    audit: audit.map { AdminAuditEvent(id: $0.id, $0.entry) })
        }
    }

    /// Sets the display name (when `displayName` is given: nil or blank clears it) and disables or enables the
    /// account. Disabling ends every session of the account in the same transaction.
    public func update(id: String, displayName: String??, disabled: Bool?, client: ClientInfo) async throws -> AdminUserDetails {
        let name = displayName.map { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }
        if let name = name ?? nil, name.count > Profile.maximumDisplayNameLength {
            throw LanyardError.invalidRequest(field: "display_name",
                                              "display_name is longer than \(Profile.maximumDisplayNameLength) characters")
        }
        let dependencies = self.dependencies
        try await dependencies.database.transactionRetryingConflicts { connection in
            let now = dependencies.clock.now()
            let users = UserStore(connection)
            let audit = dependencies.audit(connection, at: now, clientIP: client.ip)
            guard let user = try await users.findForUpdate(id: id), user.mergedInto == nil else {
                throw LanyardError.notFound("No such account")
            }
            if let name {
                let stored = name?.isEmpty == true ? nil : name
                try await users.setDisplayName(id: id, to: stored, at: now)
                try await audit.write(.userUpdated, userID: id, details: ["actor": "admin", "field": "display_name"])
            }
            if let disabled, disabled != (user.disabledAt != nil) {
                try await users.setDisabled(id: id, at: disabled ? now : nil, now: now)
                if disabled {
                    try await SessionStore(connection).revokeAll(userID: id, reason: SessionEndReason.accountDisabled, at: now)
                }
                try await audit.write(disabled ? .userDisabled : .userEnabled, userID: id, details: ["actor": "admin"])
            }
        }
        if disabled == true { dependencies.signals.accessChanged([id]) }
        return try await user(id: id)
    }

    /// Ends every session of the account.
    public func signOut(id: String, client: ClientInfo) async throws -> Int {
        let dependencies = self.dependencies
        let ended = try await dependencies.database.transaction { connection in
            let now = dependencies.clock.now()
            guard try await UserStore(connection).find(id: id) != nil else { throw LanyardError.notFound("No such account") }
            let ended = try await SessionStore(connection).revokeAll(userID: id, reason: SessionEndReason.admin, at: now)
            try await dependencies.audit(connection, at: now, clientIP: client.ip)
                .write(.signOut, userID: id, details: ["actor": "admin", "scope": "global", "sessions": String(ended.count)])
            return ended.count
        }
        dependencies.signals.accessChanged([id])
        return ended
    }

    /// Ends one session of the account.
    public func revokeSession(userID: String, sessionID: String, client: ClientInfo) async throws {
        let dependencies = self.dependencies
        try await dependencies.database.transaction { connection in
            let now = dependencies.clock.now()
            let sessions = SessionStore(connection)
            guard let session = try await sessions.find(id: sessionID), session.userID == userID,
                  try await sessions.revoke(id: sessionID, reason: SessionEndReason.admin, at: now) else {
                throw LanyardError.notFound("No such active session")
            }
            try await dependencies.audit(connection, at: now, clientIP: client.ip)
                .write(.sessionRevoked, userID: userID, sessionID: sessionID, details: ["actor": "admin"])
        }
        dependencies.signals.accessChanged([userID])
    }

    /// The audit log, newest first; `before` is a previous page's `next_cursor`.
    public func audit(userID: String?, type: String?, before: String?, limit: Int?) async throws -> AdminPage<AdminAuditEvent> {
        let limit = try Self.pageSize(limit, default: 100)
        var beforeID: Int64?
        if let before {
            guard let id = Int64(before), id > 0 else {
                throw LanyardError.invalidRequest(field: "before", "before must be a next_cursor from an earlier page")
            }
            beforeID = id
        }
        let start = beforeID
        let entries = try await dependencies.database.read { connection in
            try await AdminStore(connection).auditEntries(userID: userID, event: type, before: start, limit: limit + 1)
        }
        let page = entries.prefix(limit)
        return AdminPage(items: page.map { AdminAuditEvent(id: $0.id, $0.entry) },
                         nextCursor: entries.count > limit ? page.last.map { String($0.id) } : nil, itemsKey: "events")
    }

    static func pageSize(_ limit: Int?, default: Int) throws -> Int {
        guard let limit else { return `default` }
        guard (1...maximumPageSize).contains(limit) else {
            throw LanyardError.invalidRequest(field: "limit", "limit must be from 1 to \(maximumPageSize)")
        }
        return limit
    }
}

/// A page boundary in the account list: the last account's creation time and id, opaque to clients.
enum UserCursor {
    static func encode(createdAt: Date, id: String) -> String {
        Base64URL.encode(Array("\(createdAt.unixMilliseconds):\(id)".utf8))
    }

    static func decode(_ cursor: String) throws -> (createdAt: Date, id: String) {
        guard let bytes = Base64URL.decode(cursor), let text = String(bytes: bytes, encoding: .utf8),
              let colon = text.firstIndex(of: ":"), let milliseconds = Int64(text[..<colon]) else {
            throw LanyardError.invalidRequest(field: "cursor", "cursor must be a next_cursor from an earlier page")
        }
        return (Date(unixMilliseconds: milliseconds), String(text[text.index(after: colon)...]))
    }
}
