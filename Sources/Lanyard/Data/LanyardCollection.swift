import Foundation

extension LanyardClient {
    /// The signed-in account's records in collection `name` (`[a-z][a-z0-9_-]{0,63}`), as values of `Record`,
    /// which must encode to a JSON object.
    ///
    /// ```swift
    /// struct Reminder: Codable, Sendable { var title: String; var done = false }
    /// let reminders = client.collection("reminders", of: Reminder.self)
    /// try await reminders.put(Reminder(title: "Buy milk"), id: "r1")
    /// ```
    public nonisolated func collection<Record: Codable & Sendable>(_ name: String, of type: Record.Type)
        -> LanyardCollection<Record> {
        LanyardCollection(client: self, name: name, scope: .personal)
    }
}

/// Whose records a collection holds (reference sections 7 and 14).
///
/// ```swift
/// switch shopping.scope { case .group(let id): print("the group \(id)") default: break }
/// ```
public enum CollectionScope: Sendable, Hashable {
    /// The signed-in account's own records.
    case personal
    /// A group's records, under the collection's policy.
    case group(LanyardGroup.ID)
    /// A collection `member` shares with the group, read-only.
    case shared(group: LanyardGroup.ID, member: User.ID)

    /// Where its records are, under `/v1`.
    func path(_ name: String) -> String {
        switch self {
        case .personal: "v1/data/\(name)"
        case .group(let group): "v1/groups/\(group)/data/\(name)"
        case .shared(let group, let member): "v1/groups/\(group)/members/\(member)/data/\(name)"
        }
    }

    /// A short name for the client's storage keys.
    var key: String {
        switch self {
        case .personal: "p"
        case .group(let group): "g.\(group)"
        case .shared(let group, let member): "s.\(group).\(member)"
        }
    }

    /// Whether a change of the account's feed concerns `collection` of this scope: one of its records, or the end
    /// of its reading (the group left, read access taken away, the collection no longer shared).
    func concerns(_ change: LiveChange, collection: String) -> Bool {
        switch (self, change.kind) {
        case (.personal, .record): change.groupID == nil && change.collection == collection
        case (.personal, _): false
        case (.group(let group), .groupRemoved), (.shared(let group, _), .groupRemoved): change.groupID == group
        case (.group(let group), .record), (.group(let group), .accessRemoved):
            change.groupID == group && change.sharedBy == nil && change.collection == collection
        case (.shared(let group, let member), .record), (.shared(let group, let member), .shareRemoved):
            change.groupID == group && change.sharedBy == member && change.collection == collection
        case (.group, .shareRemoved), (.shared, .accessRemoved): false
        }
    }
}

/// Typed access to one collection of synced records, whoever's they are (`scope`: the account's own, a group's, or
/// one a member shares with a group): versions for safe concurrent edits, tombstones so other devices learn of
/// deletions, its changes page by page, and live.
///
/// ```swift
/// let reminders = client.collection("reminders", of: Reminder.self)
/// let saved = try await reminders.put(Reminder(title: "Call Ada"), id: "r1")
/// try await reminders.put(Reminder(title: "Call Ada", done: true), id: "r1", ifVersion: saved.version)
/// for change in try await reminders.pullChanges() { apply(change) }
/// ```
public struct LanyardCollection<Record: Codable & Sendable>: Sendable {
    let client: LanyardClient
    /// The collection's name.
    public let name: String
    /// Whose records it holds.
    public let scope: CollectionScope

    /// Creates or replaces record `id`. With `ifVersion`, only when the server's record is still at that
    /// version (else `.versionConflict`); `ifVersion: 0` is not special, use `nil` to write unconditionally. A group's
    /// policy that does not allow it is `.insufficientRole`; a shared collection is read-only (`.forbidden`).
    ///
    /// ```swift
    /// let saved = try await reminders.put(reminder, id: reminder.id)
    /// print(saved.version)
    /// ```
    @discardableResult
    public func put(_ value: Record, id: String, ifVersion: Int? = nil) async throws -> StoredRecord<Record> {
        try refuseWritesWhenShared()
        let request = try APIRequest("PUT", path(id), json: DataRecordBody(data: value), headers: Self.ifMatch(ifVersion))
        return try StoredRecord(try await client.sendAuthorized(request, as: DataRecord<Record>.self))
    }

    /// Record `id`, or nil when there is none (or it was deleted).
    ///
    /// ```swift
    /// if let reminder = try await reminders.get("r1") { print(reminder.value.title) }
    /// ```
    public func get(_ id: String) async throws -> StoredRecord<Record>? {
        do {
            return try StoredRecord(try await client.sendAuthorized(APIRequest("GET", path(id)), as: DataRecord<Record>.self))
        } catch LanyardError.notFound {
            return nil
        }
    }

    /// Deletes record `id`, leaving a tombstone that other devices see in their changes. Throws `.notFound`
    /// when there is no such record.
    ///
    /// ```swift
    /// try await reminders.delete("r1")
    /// ```
    public func delete(_ id: String, ifVersion: Int? = nil) async throws {
        try refuseWritesWhenShared()
        try await client.sendAuthorized(APIRequest("DELETE", path(id), headers: Self.ifMatch(ifVersion)))
    }

    /// Every change after `cursor` (nil: from the start), oldest first, fetched page by page to the end, with
    /// the cursor to pass next time.
    ///
    /// ```swift
    /// let batch = try await reminders.changes(since: savedCursor)
    /// batch.changes.forEach(apply)
    /// savedCursor = batch.cursor
    /// ```
    public func changes(since cursor: String?, pageSize: Int = 500) async throws -> ChangeBatch<Record> {
        var changes: [Change<Record>] = []
        var cursor = cursor
        while true {
            let page = try await self.page(after: cursor, pageSize: pageSize)
            changes += page.changes
            cursor = page.cursor ?? cursor
            if !page.hasMore { return ChangeBatch(changes: changes, cursor: cursor) }
        }
    }

    /// One page of changes after `cursor`.
    func page(after cursor: String?, pageSize: Int) async throws -> (changes: [Change<Record>], cursor: String?, hasMore: Bool) {
        var query = [URLQueryItem(name: "limit", value: String(pageSize))]
        if let cursor { query.append(URLQueryItem(name: "since", value: cursor)) }
        let page = try await client.sendAuthorized(APIRequest("GET", scope.path(name), query: query),
                                                   as: DataChanges<Record>.self)
        return (page.records.map { Change($0) }, page.nextCursor ?? cursor, page.hasMore)
    }

    /// The changes since the last `pullChanges()` on this device, for this account; the client keeps the cursor
    /// in its storage, so it survives restarts.
    ///
    /// ```swift
    /// for change in try await reminders.pullChanges() {
    ///     if let reminder = change.value { upsert(change.id, reminder) } else { remove(change.id) }
    /// }
    /// ```
    public func pullChanges(pageSize: Int = 500) async throws -> [Change<Record>] {
        guard let userID = client.user?.id else { throw LanyardError.notSignedIn }
        let key = "cursor.\(userID)." + (scope == .personal ? name : "\(scope.key).\(name)")
        let saved = try client.storage.data(forKey: key).map { String(decoding: $0, as: UTF8.self) }
        let batch = try await changes(since: saved, pageSize: pageSize)
        if let cursor = batch.cursor { try client.storage.setData(Data(cursor.utf8), forKey: key) }
        return batch.changes
    }

    private func path(_ id: String) -> String { scope.path(name) + "/\(id)" }

    private func refuseWritesWhenShared() throws {
        if case .shared = scope { throw LanyardError.forbidden }
    }

    private static func ifMatch(_ version: Int?) -> [String: String] {
        version.map { ["If-Match": "\"\($0)\""] } ?? [:]
    }
}

/// A record as the server stored it.
///
/// ```swift
/// let saved = try await reminders.put(reminder, id: "r1")
/// print(saved.id, saved.version, saved.updatedAt, saved.value)
/// ```
public struct StoredRecord<Record: Sendable>: Sendable {
    /// The record's id in its collection.
    public var id: String
    /// Its version, for `put(_:id:ifVersion:)`.
    public var version: Int
    /// When it was last written.
    public var updatedAt: Date
    /// The record.
    public var value: Record
    /// A group record's author and last writer; nil for the account's own records.
    public var createdBy: User.ID?
    public var updatedBy: User.ID?
}

extension StoredRecord where Record: Codable {
    init(_ payload: DataRecord<Record>) throws {
        guard let value = payload.data else { throw LanyardError.invalidResponse(status: 200) }
        self.init(id: payload.id, version: payload.version, updatedAt: payload.updatedAt, value: value,
                  createdBy: payload.createdBy.map { User.ID($0) }, updatedBy: payload.updatedBy.map { User.ID($0) })
    }
}

/// One change from the feed: a record written (`value`) or deleted (`value == nil`).
///
/// ```swift
/// if change.isDeleted { remove(change.id) } else { upsert(change.id, change.value!) }
/// ```
public struct Change<Record: Sendable>: Sendable {
    /// The record's id.
    public var id: String
    /// The version this change made.
    public var version: Int
    /// When.
    public var updatedAt: Date
    /// The record, or nil for a deletion.
    public var value: Record?
    /// A deletion.
    public var isDeleted: Bool { value == nil }
}

extension Change where Record: Codable {
    init(_ payload: DataRecord<Record>) {
        id = payload.id
        version = payload.version
        updatedAt = payload.updatedAt
        value = payload.deleted == true ? nil : payload.data
    }
}

/// The changes of `changes(since:)` and the cursor that follows them.
///
/// ```swift
/// let batch = try await reminders.changes(since: nil)
/// ```
public struct ChangeBatch<Record: Sendable>: Sendable {
    /// The changes, oldest first.
    public var changes: [Change<Record>]
    /// Pass it next time to get only newer changes; nil when the collection has never changed.
    public var cursor: String?
}
