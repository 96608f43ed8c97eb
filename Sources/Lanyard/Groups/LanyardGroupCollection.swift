import Foundation

extension LanyardGroups {
    /// One of a group's collections, typed: the same API as the account's own collections, with each record's
    /// author. Who may read and write it is the collection's policy (`setPolicy(_:for:in:)`).
    ///
    /// ```swift
    /// struct Item: Codable, Sendable { var name: String; var done = false }
    /// let shopping = client.groups.collection("shopping", of: Item.self, in: family.id)
    /// try await shopping.put(Item(name: "Milk"), id: "milk")
    /// ```
    public func collection<Record: Codable & Sendable>(_ name: String, of type: Record.Type,
                                                       in groupID: String) -> LanyardGroupCollection<Record> {
        LanyardGroupCollection(client: client, groupID: groupID, name: name)
    }

    /// A collection another member shares with the group, read-only.
    ///
    /// ```swift
    /// let places = client.groups.sharedCollection("locations", of: Place.self, by: child.userID, in: family.id)
    /// let latest = try await places.get("now")
    /// ```
    public func sharedCollection<Record: Codable & Sendable>(_ name: String, of type: Record.Type, by userID: String,
                                                             in groupID: String) -> LanyardSharedCollection<Record> {
        LanyardSharedCollection(client: client, groupID: groupID, userID: userID, name: name)
    }
}

/// A group's collection (reference section 14): versions, tombstones and cursors as for the account's own records,
/// and live changes from every member.
///
/// ```swift
/// let shopping = client.groups.collection("shopping", of: Item.self, in: family.id)
/// for try await change in shopping.changes() { list.apply(change) }
/// ```
public struct LanyardGroupCollection<Record: Codable & Sendable>: Sendable {
    let client: LanyardClient
    /// The group.
    public let groupID: String
    /// The collection's name.
    public let name: String

    /// Creates or replaces record `id`, only at `ifVersion` when given (else `.versionConflict`); a role or policy
    /// that does not allow it is `.insufficientRole`.
    ///
    /// ```swift
    /// let saved = try await shopping.put(Item(name: "Eggs"), id: "eggs")
    /// print(saved.createdBy == client.user?.id)
    /// ```
    @discardableResult
    public func put(_ value: Record, id: String, ifVersion: Int? = nil) async throws -> StoredRecord<Record> {
        let request = try APIRequest("PUT", path(id), json: DataRecordBody(data: value),
                                     headers: ifVersion.map { ["If-Match": "\"\($0)\""] } ?? [:])
        return try StoredRecord(try await client.sendAuthorized(request, as: DataRecord<Record>.self))
    }

    /// Record `id`, or nil when there is none (or it was deleted).
    ///
    /// ```swift
    /// let milk = try await shopping.get("milk")
    /// ```
    public func get(_ id: String) async throws -> StoredRecord<Record>? {
        try await RecordReads.get(client, path(id))
    }

    /// Deletes record `id`, leaving a tombstone the other members see.
    ///
    /// ```swift
    /// try await shopping.delete("milk")
    /// ```
    public func delete(_ id: String, ifVersion: Int? = nil) async throws {
        try await client.sendAuthorized(APIRequest("DELETE", path(id), headers: ifVersion.map { ["If-Match": "\"\($0)\""] } ?? [:]))
    }

    /// Every change after `cursor` (nil: from the start), oldest first, to the end, with the cursor to pass next.
    ///
    /// ```swift
    /// let batch = try await shopping.changes(since: nil)
    /// ```
    public func changes(since cursor: String?, pageSize: Int = 500) async throws -> ChangeBatch<Record> {
        try await RecordReads.changes(client, "v1/groups/\(groupID)/data/\(name)", since: cursor, pageSize: pageSize)
    }

    /// This collection's changes, live, from every member; the sequence ends when the account leaves the group (or
    /// is removed, or the group is dissolved), or may no longer read this collection.
    ///
    /// ```swift
    /// for try await change in shopping.changes() {
    ///     if let item = change.value { list.upsert(change.id, item) } else { list.remove(change.id) }
    /// }
    /// ```
    public func changes() -> LiveCollectionChanges<Record> {
        let (group, name) = (groupID, self.name)
        var changes = LiveCollectionChanges<Record>(changes: LiveChanges(client: client, since: nil, scope: "g.\(group).\(name)") {
            ($0.kind == .record && $0.groupID == group && $0.sharedBy == nil && $0.collection == name)
                || ($0.kind == .groupRemoved && $0.groupID == group)
                || ($0.kind == .accessRemoved && $0.groupID == group && $0.collection == name)
        })
        changes.ends = { $0.kind == .groupRemoved || $0.kind == .accessRemoved }
        return changes
    }

    private func path(_ id: String) -> String { "v1/groups/\(groupID)/data/\(name)/\(id)" }
}

/// A collection another member shares with a group: read-only, gone (`.notFound`) once unshared.
///
/// ```swift
/// let places = client.groups.sharedCollection("locations", of: Place.self, by: childID, in: family.id)
/// for change in try await places.changes(since: nil).changes { map.show(change.value) }
/// ```
public struct LanyardSharedCollection<Record: Codable & Sendable>: Sendable {
    let client: LanyardClient
    public let groupID: String
    /// The member sharing it.
    public let userID: String
    public let name: String

    /// Record `id`, or nil when there is none.
    ///
    /// ```swift
    /// let now = try await places.get("now")
    /// ```
    public func get(_ id: String) async throws -> StoredRecord<Record>? {
        try await RecordReads.get(client, "v1/groups/\(groupID)/members/\(userID)/data/\(name)/\(id)")
    }

    /// Every change after `cursor`, oldest first, to the end.
    ///
    /// ```swift
    /// let batch = try await places.changes(since: savedCursor)
    /// ```
    public func changes(since cursor: String?, pageSize: Int = 500) async throws -> ChangeBatch<Record> {
        try await RecordReads.changes(client, "v1/groups/\(groupID)/members/\(userID)/data/\(name)", since: cursor,
                                           pageSize: pageSize)
    }
}

/// The reads every kind of collection has in common: a record by path, and a collection's changes page by page.
enum RecordReads {
    static func get<Record: Codable & Sendable>(_ client: LanyardClient, _ path: String) async throws -> StoredRecord<Record>? {
        do {
            return try StoredRecord(try await client.sendAuthorized(APIRequest("GET", path), as: DataRecord<Record>.self))
        } catch LanyardError.notFound {
            return nil
        }
    }

    static func changes<Record: Codable & Sendable>(_ client: LanyardClient, _ path: String, since cursor: String?,
                                                    pageSize: Int) async throws -> ChangeBatch<Record> {
        var changes: [Change<Record>] = []
        var cursor = cursor
        while true {
            var query = [URLQueryItem(name: "limit", value: String(pageSize))]
            if let cursor { query.append(URLQueryItem(name: "since", value: cursor)) }
            let page = try await client.sendAuthorized(APIRequest("GET", path, query: query), as: DataChanges<Record>.self)
            changes += page.records.map { Change($0) }
            cursor = page.nextCursor ?? cursor
            if !page.hasMore { return ChangeBatch(changes: changes, cursor: cursor) }
        }
    }
}
