import Foundation

/// One change of the account's feed, as `LanyardClient.changes(since:)` delivers it: a record written or deleted
/// in any of the account's collections.
///
/// ```swift
/// for try await change in client.changes() {
///     if change.isDeleted { store.remove(change.collection, change.id) }
///     else if change.collection == "reminders", let reminder = try change.value(as: Reminder.self) {
///         store.upsert(change.id, reminder)
///     }
/// }
/// ```
public struct LiveChange: Sendable, Equatable {
    /// What happened: a record written or deleted, or a source of records gone from the feed.
    public enum Kind: Sendable, Equatable {
        /// A record written or deleted (`isDeleted`).
        case record
        /// The account left `groupID` (or was removed, or the group was dissolved): drop its records; nothing of
        /// it follows.
        case groupRemoved
        /// `sharedBy` stopped sharing `collection` with `groupID`: drop those records.
        case shareRemoved
        /// The account may no longer read `collection` of `groupID` (a policy or its role changed): drop those
        /// records; nothing of the collection follows.
        case accessRemoved
    }

    /// A record change, or a group or shared collection gone.
    public var kind: Kind = .record
    /// The record's collection.
    public var collection: String
    /// The record's id.
    public var id: String
    /// The version this change made.
    public var version: Int
    /// When it was written.
    public var updatedAt: Date
    /// A deletion (the record is a tombstone).
    public var isDeleted: Bool
    /// The group the record belongs to; nil for the account's own records.
    public var groupID: LanyardGroup.ID?
    /// For a collection another member shares with a group: that member; nil otherwise.
    public var sharedBy: User.ID?
    /// The change's place in its collection's own changes (what `LanyardCollection.changes(since:)` takes).
    public var collectionCursor: String?
    /// The place of this change in the feed: pass it to `changes(since:)` to resume after it.
    public var cursor: String
    /// The record's JSON object; nil for a deletion.
    public var data: Data?

    /// The record decoded as `type`; nil for a deletion.
    ///
    /// ```swift
    /// let reminder = try change.value(as: Reminder.self)
    /// ```
    public func value<Record: Decodable>(as type: Record.Type) throws -> Record? {
        guard let data else { return nil }
        return try WireCoding.decoder().decode(Record.self, from: data)
    }

    /// A group, a shared collection or read access gone (`group_removed`, `share_removed`, `access_removed` events).
    init?(removal event: ServerSentEvent) {
        guard let cursor = event.id,
              let removal = try? WireCoding.decoder().decode(StreamRemoval.self, from: Data(event.data.utf8)) else { return nil }
        switch StreamEventName(rawValue: event.name) {
        case .groupRemoved: kind = .groupRemoved
        case .shareRemoved: kind = .shareRemoved
        case .accessRemoved: kind = .accessRemoved
        default: return nil
        }
        (collection, id, version, updatedAt, isDeleted) = (removal.collection ?? "", "", 0, Date(), true)
        (groupID, sharedBy, self.cursor, data) = (LanyardGroup.ID(removal.groupID), removal.sharedBy.map { User.ID($0) },
                                                  cursor, nil)
    }

    /// The change an event of the stream carries (a `ChangeRecord`), or nil when it is not one.
    init?(event: ServerSentEvent) {
        guard StreamEventName(rawValue: event.name) == .change, let cursor = event.id,
              let change = try? WireCoding.decoder().decode(ChangeRecord<JSONText>.self, from: Data(event.data.utf8))
        else { return nil }
        collection = change.collection
        id = change.id
        version = change.version
        updatedAt = change.updatedAt
        isDeleted = change.deleted
        groupID = change.groupID.map { LanyardGroup.ID($0) }
        sharedBy = change.sharedBy.map { User.ID($0) }
        collectionCursor = change.collectionCursor
        self.cursor = cursor
        data = change.data.map { Data($0.text.utf8) }
    }
}
