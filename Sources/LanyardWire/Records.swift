import Foundation

/// One record of a collection (reference sections 7 and 14): `GET`/`PUT /v1/data/{collection}/{id}`, a group's
/// records, and each record of a page of changes. `Value` is the app's type; the server writes it as `JSONText`.
///
/// ```swift
/// let note = try WireCoding.decoder().decode(DataRecord<Note>.self, from: data)
/// ```
public struct DataRecord<Value: Codable & Sendable>: Sendable, Codable {
    /// The record's id in its collection.
    public var id: String
    /// Its collection.
    public var collection: String?
    /// Grows by one with each write; `If-Match` names it.
    public var version: Int
    /// When it was last written.
    public var updatedAt: Date
    /// A tombstone (in changes only).
    public var deleted: Bool?
    /// The app's value; absent for a tombstone.
    public var data: Value?
    /// A group record's group, author and last writer (reference section 14); absent for the account's own records.
    public var groupID: String?
    public var createdBy: String?
    public var updatedBy: String?

    /// A record.
    ///
    /// ```swift
    /// let record = DataRecord(id: "r1", collection: "notes", version: 1, updatedAt: .now, data: JSONText(#"{}"#))
    /// ```
    public init(id: String, collection: String?, version: Int, updatedAt: Date, deleted: Bool? = nil, data: Value?,
                groupID: String? = nil, createdBy: String? = nil, updatedBy: String? = nil) {
        (self.id, self.collection, self.version, self.updatedAt, self.deleted) = (id, collection, version, updatedAt, deleted)
        (self.data, self.groupID, self.createdBy, self.updatedBy) = (data, groupID, createdBy, updatedBy)
    }

    enum CodingKeys: String, CodingKey {
        case id, collection, version, deleted, data
        case updatedAt = "updated_at", groupID = "group_id", createdBy = "created_by", updatedBy = "updated_by"
    }

    /// `data` always (`null` for a tombstone); `deleted` only when true; a group record's `group_id`, `created_by`
    /// and `updated_by`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(collection, forKey: .collection)
        try container.encode(version, forKey: .version)
        try container.encode(updatedAt, forKey: .updatedAt)
        if deleted == true { try container.encode(true, forKey: .deleted) }
        try container.encode(data, forKey: .data)
        if let groupID {
            try container.encode(groupID, forKey: .groupID)
            try container.encode(createdBy, forKey: .createdBy)
            try container.encode(updatedBy, forKey: .updatedBy)
        }
    }
}

/// A page of `GET /v1/data/{collection}?since=…` (and of a group's or a shared collection's).
///
/// ```swift
/// let page = try WireCoding.decoder().decode(DataChanges<Note>.self, from: data)
/// if page.hasMore { /* ask again from page.nextCursor */ }
/// ```
public struct DataChanges<Value: Codable & Sendable>: Sendable, Codable {
    /// The records written since the cursor, oldest first.
    public var records: [DataRecord<Value>]
    /// Where the next page starts.
    public var nextCursor: String?
    /// Whether another page follows.
    public var hasMore: Bool

    /// A page.
    public init(records: [DataRecord<Value>], nextCursor: String?, hasMore: Bool) {
        (self.records, self.nextCursor, self.hasMore) = (records, nextCursor, hasMore)
    }

    enum CodingKeys: String, CodingKey {
        case records
        case nextCursor = "next_cursor", hasMore = "has_more"
    }

    /// `next_cursor` always, `null` at the end of an empty collection.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(records, forKey: .records)
        try container.encode(nextCursor, forKey: .nextCursor)
        try container.encode(hasMore, forKey: .hasMore)
    }
}

/// One change of an account's feed (reference section 13): `GET /v1/changes`, and the `data` of a stream's
/// `change` event. `groupID` is `nil` for the account's own records; `sharedBy` names the member who shares the
/// collection with that group.
///
/// ```swift
/// let change = try WireCoding.decoder().decode(ChangeRecord<Note>.self, from: Data(event.data.utf8))
/// ```
public struct ChangeRecord<Value: Codable & Sendable>: Sendable, Codable {
    public var collection: String
    public var id: String
    /// The change's place in its collection: the `next_cursor` of that collection's own changes (`GET
    /// /v1/data/{collection}?since=`, or the group's, or the shared collection's) just after it. A client that reads
    /// a collection's changes by page and then live from the feed knows by it which it has seen.
    public var collectionCursor: String?
    public var version: Int
    public var updatedAt: Date
    public var deleted: Bool
    /// The record's value; `nil` for a deletion.
    public var data: Value?
    public var groupID: String?
    public var sharedBy: String?
    /// A group record's author and last writer.
    public var createdBy: String?
    public var updatedBy: String?

    /// A change.
    public init(collection: String, id: String, collectionCursor: String? = nil, version: Int, updatedAt: Date,
                deleted: Bool, data: Value?, groupID: String? = nil, sharedBy: String? = nil, createdBy: String? = nil,
                updatedBy: String? = nil) {
        (self.collection, self.id, self.version, self.updatedAt, self.deleted) = (collection, id, version, updatedAt, deleted)
        self.collectionCursor = collectionCursor
        (self.data, self.groupID, self.sharedBy) = (data, groupID, sharedBy)
        (self.createdBy, self.updatedBy) = (createdBy, updatedBy)
    }

    enum CodingKeys: String, CodingKey {
        case collection, id, version, deleted, data
        case updatedAt = "updated_at", groupID = "group_id", sharedBy = "shared_by"
        case createdBy = "created_by", updatedBy = "updated_by", collectionCursor = "collection_cursor"
    }

    /// `data`, `group_id` and `shared_by` always (`null` where none); a group record's authors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(collection, forKey: .collection)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(collectionCursor, forKey: .collectionCursor)
        try container.encode(version, forKey: .version)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(deleted, forKey: .deleted)
        try container.encode(data, forKey: .data)
        try container.encode(groupID, forKey: .groupID)
        try container.encode(sharedBy, forKey: .sharedBy)
        if groupID != nil, sharedBy == nil {
            try container.encode(createdBy, forKey: .createdBy)
            try container.encode(updatedBy, forKey: .updatedBy)
        }
    }
}

/// A page of `GET /v1/changes`: the account's feed after a cursor.
///
/// ```swift
/// let page = try WireCoding.decoder().decode(ChangeFeedPage<JSONText>.self, from: data)
/// ```
public struct ChangeFeedPage<Value: Codable & Sendable>: Sendable, Codable {
    public var changes: [ChangeRecord<Value>]
    /// Where the next page starts (also when this one is empty: the same cursor).
    public var nextCursor: String
    public var hasMore: Bool
    /// Groups the cursor had read from that the account is no longer in: drop their records.
    public var removedGroups: [String]

    /// A page.
    public init(changes: [ChangeRecord<Value>], nextCursor: String, hasMore: Bool, removedGroups: [String] = []) {
        (self.changes, self.nextCursor, self.hasMore, self.removedGroups) = (changes, nextCursor, hasMore, removedGroups)
    }

    enum CodingKeys: String, CodingKey {
        case changes, nextCursor = "next_cursor", hasMore = "has_more", removedGroups = "removed_groups"
    }
}
