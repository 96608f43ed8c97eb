import Foundation

extension LanyardCollection {
    /// This collection's changes, live: first those since this device last watched it (read page by page from the
    /// collection itself, so a collection watched for the first time reads only its own records), then as they
    /// happen, from the client's one live connection (shared with every other watcher). The collection's place is
    /// kept in the client's storage per account, so the next launch resumes where it left off; a change never comes
    /// twice. A group's collection ends when the account leaves the group or may no longer read it; a shared one when
    /// it is no longer shared.
    ///
    /// ```swift
    /// let reminders = client.collection("reminders", of: Reminder.self)
    /// for try await change in reminders.changes() {
    ///     if let reminder = change.value { list.upsert(change.id, reminder) } else { list.remove(change.id) }
    /// }
    /// ```
    public func changes() -> LiveCollectionChanges<Record> {
        LiveCollectionChanges(collection: self)
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

    let collection: LanyardCollection<Record>
    private let caughtUp = LiveState()

    init(collection: LanyardCollection<Record>) {
        self.collection = collection
    }

    /// Whether the collection has caught up and its changes arrive as they happen.
    ///
    /// ```swift
    /// spinner.isHidden = changes.isLive
    /// ```
    public var isLive: Bool { caughtUp.isLive && collection.client.liveFeed.isLive }

    public func makeAsyncIterator() -> Iterator {
        Iterator(collection: collection, caughtUp: caughtUp)
    }

    /// Catches up from the collection's own place, then takes its changes from the shared connection, passing over
    /// those at or before that place (the catch-up may have read them already).
    public struct Iterator: AsyncIteratorProtocol {
        let collection: LanyardCollection<Record>
        let caughtUp: LiveState
        private var live: AsyncThrowingStream<LiveChange, any Error>.AsyncIterator?
        private var pending: [Change<Record>] = []
        /// Where the catch-up's page left the collection, stored once the page is delivered.
        private var pendingCursor: String?
        /// Where the next catch-up page starts, and whether there is one.
        private var catchUpCursor: String?
        private var moreToRead = false
        /// The collection's place: changes at or before it were delivered.
        private var position: Int64 = 0
        private var account: User.ID?
        private var ended = false

        init(collection: LanyardCollection<Record>, caughtUp: LiveState) {
            (self.collection, self.caughtUp) = (collection, caughtUp)
        }

        public mutating func next() async throws -> Change<Record>? {
            while !ended {
                try Task.checkCancellation()
                if !pending.isEmpty {
                    let change = pending.removeFirst()
                    if pending.isEmpty, let pendingCursor { store(pendingCursor) }
                    return change
                }
                if live == nil {
                    try watch()
                    catchUpCursor = storedCursor()
                    moreToRead = true
                }
                if moreToRead {
                    try await readPage()
                    continue
                }
                do {
                    guard let change = try await live?.next() else { return nil }
                    if let delivered = try take(change) { return delivered }
                } catch LanyardError.network {
                    // This watcher fell behind the shared connection (or it dropped): catch up again from its place.
                    live = nil
                }
            }
            return nil
        }

        /// Watches the shared connection before reading the collection, so nothing committed meanwhile is missed.
        private mutating func watch() throws {
            caughtUp.isLive = false
            guard let user = collection.client.user?.id else { throw LanyardError.notSignedIn }
            account = user
            position = storedCursor().flatMap { Int64($0) } ?? 0
            let (scope, name) = (collection.scope, collection.name)
            live = collection.client.liveFeed.watch { scope.concerns($0, collection: name) }.makeAsyncIterator()
        }

        /// One page of the collection's own changes after the catch-up's place; caught up after the last.
        private mutating func readPage() async throws {
            let page = try await collection.page(after: catchUpCursor, pageSize: 500)
            catchUpCursor = page.cursor
            moreToRead = page.hasMore
            if page.changes.isEmpty {
                if let cursor = page.cursor { store(cursor) }
            } else {
                pending = page.changes
                pendingCursor = page.cursor
            }
            if !moreToRead { caughtUp.isLive = true }
        }

        /// A change of the shared connection, as this collection's: nil when it was read already or is not a record.
        private mutating func take(_ change: LiveChange) throws -> Change<Record>? {
            if collection.client.user?.id != account {
                // The client now holds another account (a guest merged into it): start again from its place.
                live = nil
                return nil
            }
            switch change.kind {
            case .record:
                guard let text = change.collectionCursor, let place = Int64(text) else { return nil }
                guard place > position else { return nil }
                position = place
                store(text)
                return Change(id: change.id, version: change.version, updatedAt: change.updatedAt,
                              value: try change.value(as: Record.self))
            case .groupRemoved, .accessRemoved, .shareRemoved:
                ended = true
                live = nil
                return nil
            }
        }

        private var storageKey: String? {
            account.map { "live.\($0).\(collection.scope.key).\(collection.name)" }
        }

        private func storedCursor() -> String? {
            guard let storageKey else { return nil }
            return (try? collection.client.storage.data(forKey: storageKey))
                .flatMap { $0.map { String(decoding: $0, as: UTF8.self) } }
        }

        private mutating func store(_ cursor: String) {
            position = Swift.max(position, Int64(cursor) ?? position)
            if let storageKey { try? collection.client.storage.setData(Data(cursor.utf8), forKey: storageKey) }
        }
    }
}
