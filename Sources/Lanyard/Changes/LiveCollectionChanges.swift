import Foundation

extension LanyardCollection {
    /// This collection's changes, live: `LanyardClient.changes(since:)` for one collection, typed. It keeps its own
    /// place in the feed (per account, in the client's storage), so the next launch resumes where it left off.
    ///
    /// ```swift
    /// let reminders = client.collection("reminders", of: Reminder.self)
    /// for try await change in reminders.changes() {
    ///     if let reminder = change.value { list.upsert(change.id, reminder) } else { list.remove(change.id) }
    /// }
    /// ```
    public func changes() -> LiveCollectionChanges<Record> {
        let name = self.name
        return LiveCollectionChanges(changes: LiveChanges(client: client, since: nil, scope: name) {
            $0.kind == .record && $0.collection == name && $0.groupID == nil
        })
    }
}

/// A collection's live changes (`LanyardCollection.changes()`): an `AsyncSequence` of typed `Change`s with `isLive`.
///
/// ```swift
/// let changes = reminders.changes()
/// for try await change in changes where changes.isLive { notify(change.id) }
/// ```
public struct LiveCollectionChanges<Record: Codable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Change<Record>

    let changes: LiveChanges
    /// A change that ends the sequence (the group of a group collection removed); none for the account's own.
    var ends: @Sendable (LiveChange) -> Bool = { _ in false }

    /// Whether the feed has caught up and is delivering changes as they happen.
    ///
    /// ```swift
    /// spinner.isHidden = changes.isLive
    /// ```
    public var isLive: Bool { changes.isLive }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: changes.makeAsyncIterator(), ends: ends)
    }

    /// Decodes each change of the collection as `Record`.
    public struct Iterator: AsyncIteratorProtocol {
        var base: LiveChanges.Iterator
        let ends: @Sendable (LiveChange) -> Bool

        public mutating func next() async throws -> Change<Record>? {
            guard let change = try await base.next(), !ends(change) else { return nil }
            return Change(id: change.id, version: change.version, updatedAt: change.updatedAt,
                          value: try change.value(as: Record.self))
        }
    }
}
