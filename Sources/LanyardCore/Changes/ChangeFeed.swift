import Foundation
import LanyardStore
import LanyardWire
import LanyardSupport

/// Where a change of an account's feed comes from (reference sections 13 and 14): the account's own records, a
/// group it belongs to, or a collection another member shares with one of its groups. Each source keeps its own
/// sequence (the account's, the group's, the sharing member's), so joining a group brings the group's records in
/// from their beginning.
public enum FeedSource: Hashable, Sendable {
    case personal
    case group(String)
    case share(group: String, member: String, collection: String)

    var groupID: String? {
        switch self {
        case .personal: nil
        case .group(let id), .share(let id, _, _): id
        }
    }
}

/// A place in an account's change feed, as apps hold it: the last sequence seen in each source. Its text is the
/// personal sequence in decimal (`"42"`, what the feed issued before groups), followed by one `~` entry per group
/// or shared collection that had changes: `~g.<group>.<seq>` and `~s.<group>.<member>.<collection>.<seq>`. A
/// source the cursor does not name starts at its beginning. Opaque to apps; text that does not parse, or that is
/// past a source's end (a feed this server never issued), is refused as `resync_required`.
public struct FeedCursor: Sendable, Equatable {
    public static let start = FeedCursor(positions: [:])
    /// The longest cursor text accepted (20 groups with shares fit many times over).
    static let maximumLength = 16 * 1024

    public private(set) var positions: [FeedSource: Int64]

    init(positions: [FeedSource: Int64]) {
        self.positions = positions.filter { $0.value > 0 }
    }

    public init(sequence: Int64) {
        self.init(positions: [.personal: sequence])
    }

    /// The account's own sequence.
    public var sequence: Int64 { self[.personal] }

    public subscript(source: FeedSource) -> Int64 { positions[source] ?? 0 }

    public func advanced(_ source: FeedSource, to sequence: Int64) -> FeedCursor {
        var copy = self
        copy.positions[source] = sequence
        return copy
    }

    /// Without the group and the collections shared with it.
    public func removing(group: String) -> FeedCursor {
        FeedCursor(positions: positions.filter { $0.key.groupID != group })
    }

    public func removing(_ source: FeedSource) -> FeedCursor {
        var copy = self
        copy.positions[source] = nil
        return copy
    }

    /// The groups the cursor has read from.
    public var groups: Set<String> { Set(positions.keys.compactMap(\.groupID)) }

    /// `nil` for text no feed issued.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumLength else { return nil }
        let entries = text.split(separator: "~", omittingEmptySubsequences: false)
        guard let personal = Self.sequence(entries[0]) else { return nil }
        var positions: [FeedSource: Int64] = [.personal: personal]
        for entry in entries.dropFirst() {
            let fields = entry.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            switch (fields.first, fields.count) {
            case ("g", 3):
                guard Self.isID(fields[1]), let sequence = Self.sequence(fields[2]) else { return nil }
                positions[.group(fields[1])] = sequence
            case ("s", 5):
                guard Self.isID(fields[1]), Self.isID(fields[2]), DataRecords.isValidCollection(fields[3]),
                      let sequence = Self.sequence(fields[4]) else { return nil }
                positions[.share(group: fields[1], member: fields[2], collection: fields[3])] = sequence
            default: return nil
            }
        }
        self.init(positions: positions)
    }

    public var text: String {
        var text = String(sequence)
        for (source, sequence) in positions.sorted(by: { Self.order($0.key) < Self.order($1.key) }) {
            switch source {
            case .personal: continue
            case .group(let id): text += "~g.\(id).\(sequence)"
            case .share(let group, let member, let collection): text += "~s.\(group).\(member).\(collection).\(sequence)"
            }
        }
        return text
    }

    private static func order(_ source: FeedSource) -> String {
        switch source {
        case .personal: ""
        case .group(let id): "g." + id
        case .share(let group, let member, let collection): "s.\(group).\(member).\(collection)"
        }
    }

    private static func sequence(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }

    /// Account and group ids: `[A-Za-z0-9_-]`, never the separators.
    private static func isID(_ text: String) -> Bool { DataRecords.isValidRecordID(text) }
}

/// One change of the feed (reference section 13): the record as its store shows it, with the source it came from
/// and its place there. Its answer is the wire type `ChangeRecord` (`group_id` and `shared_by` null for the account's
/// own records).
public struct FeedChange: JSONWritable, Sendable {
    public let record: DataRecord<JSONText>
    public let source: FeedSource
    public let sequence: Int64
    /// The record's place in its collection's own changes (`change_seq`).
    public let collectionSequence: Int64

    init(_ row: RecordRow, source: FeedSource = .personal) {
        record = DataRecord(row)
        self.source = source
        sequence = row.feedSequence
        collectionSequence = row.changeSequence
    }

    /// The change as the API shows it.
    public var wire: ChangeRecord<JSONText> {
        let (group, sharer): (String?, String?) = switch source {
        case .personal: (nil, nil)
        case .group(let id): (id, nil)
        case .share(let group, let member, _): (group, member)
        }
        return ChangeRecord(collection: record.collection ?? "", id: record.id,
                            collectionCursor: String(collectionSequence), version: record.version,
                            updatedAt: record.updatedAt, deleted: record.deleted == true, data: record.data,
                            groupID: group, sharedBy: sharer, createdBy: record.createdBy, updatedBy: record.updatedBy)
    }

    public func write(to writer: inout JSONWriter) {
        wire.write(to: &writer)
    }
}

/// A change with the cursor just after it: a stream's event id.
public struct FeedEntry: Sendable {
    public let change: FeedChange
    public let cursor: FeedCursor

    public init(change: FeedChange, cursor: FeedCursor) {
        (self.change, self.cursor) = (change, cursor)
    }
}

/// The sources an account's feed reads: its groups, and the collections other members share with them; and in
/// each group, the collections whose policy the account's role may not read (reference section 14): none of their
/// changes reach it.
public struct FeedSources: Sendable, Equatable {
    public static let none = FeedSources(groups: [], shares: [])

    public let groups: [String]
    public let shares: [FeedSource]
    /// By group: collections the account may not read there now.
    public let unreadable: [String: Set<String>]

    public init(groups: [String], shares: [FeedSource], unreadable: [String: Set<String>] = [:]) {
        (self.groups, self.shares) = (groups.sorted(), shares)
        self.unreadable = unreadable.filter { !$0.value.isEmpty }
    }

    /// Whether `change` is one the account may read.
    public func mayRead(_ change: FeedChange) -> Bool {
        guard case .group(let id) = change.source, let hidden = unreadable[id] else { return true }
        return !hidden.contains(change.record.collection ?? "")
    }

    /// Collections of groups in both that `self` may not read and `before` could: read access taken away.
    public func accessRemoved(since before: FeedSources) -> [(group: String, collection: String)] {
        groups.filter(before.groups.contains).flatMap { group in
            (unreadable[group] ?? []).subtracting(before.unreadable[group] ?? []).sorted().map { (group, $0) }
        }
    }

    var all: [FeedSource] { [.personal] + groups.map(FeedSource.group) + shares }

    /// The accounts whose own writes this feed shows (members sharing a collection with one of its groups).
    public var sharingAccounts: [String] {
        Array(Set(shares.compactMap { if case .share(_, let member, _) = $0 { member } else { nil } }))
    }

    public func contains(_ source: FeedSource) -> Bool {
        switch source {
        case .personal: true
        case .group(let id): groups.contains(id)
        case .share: shares.contains(source)
        }
    }
}

/// `GET /v1/changes`: the entries read, each with the cursor after it. Its answer is the wire type `ChangeFeedPage`.
public struct FeedPage: JSONWritable, Sendable {
    public let entries: [FeedEntry]
    public let nextCursor: FeedCursor
    public let hasMore: Bool
    /// Groups the cursor had read from that the account is no longer in: the app drops their records. The cursor
    /// no longer names them.
    public let removedGroups: [String]

    public init(entries: [FeedEntry], nextCursor: FeedCursor, hasMore: Bool, removedGroups: [String] = []) {
        (self.entries, self.nextCursor, self.hasMore, self.removedGroups) = (entries, nextCursor, hasMore, removedGroups)
    }

    public var changes: [FeedChange] { entries.map(\.change) }

    public func write(to writer: inout JSONWriter) {
        ChangeFeedPage(changes: entries.map(\.change.wire), nextCursor: nextCursor.text, hasMore: hasMore,
                       removedGroups: removedGroups).write(to: &writer)
    }
}

/// Reads an account's change feed: every committed change to records it can read (its own, its groups', the
/// collections shared with its groups), none twice. Within a source changes come in commit order; sources are
/// interleaved by time. The feed is the truth; streams and long-polls are only faster ways to read it.
public struct ChangeFeed: Sendable {
    public static let defaultPageSize = 100
    public static let maximumPageSize = 500

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// What `since=now` asks for: the feed's end as it is, so a reader that has everything it needs (a client whose
    /// collections catch up on their own) starts with what happens next.
    public static let now = "now"

    /// The place after every change the account's feed holds now.
    public func end(userID: String) async throws -> FeedCursor {
        try await dependencies.database.read { connection in
            let sources = try await Self.sources(userID: userID, connection)
            var cursor = FeedCursor.start
            for source in sources.all {
                let (store, owner, _) = Self.location(of: source, userID: userID)
                cursor = cursor.advanced(source, to: try await RecordStore(connection, store).lastFeedSequence(ownerID: owner))
            }
            return cursor
        }
    }

    /// `since` as an app sent it: absent or empty is the beginning; anything else must be a cursor this feed issued.
    public static func cursor(_ text: String?) throws -> FeedCursor {
        guard let text, !text.isEmpty else { return .start }
        guard let cursor = FeedCursor(text) else { throw LanyardError.resyncRequired }
        return cursor
    }

    public static func pageSize(_ limit: Int?) throws -> Int {
        let size = limit ?? defaultPageSize
        guard (1...maximumPageSize).contains(size) else {
            throw LanyardError.invalidRequest(field: "limit", "limit must be from 1 to \(maximumPageSize)")
        }
        return size
    }

    /// The account's groups and the collections shared with them, now.
    public func sources(userID: String) async throws -> FeedSources {
        try await dependencies.database.read { try await Self.sources(userID: userID, $0) }
    }

    static func sources(userID: String, _ connection: any DatabaseConnection) async throws -> FeedSources {
        let store = GroupShareStore(connection)
        let visible = try await store.feedSources(userID: userID)
        var unreadable: [String: Set<String>] = [:]
        if !visible.groups.isEmpty {
            for policy in try await store.readPolicies(userID: userID) {
                guard let read = GroupRole(rawValue: policy.read), let role = GroupRole(rawValue: policy.role),
                      !GroupPolicy(read: read).mayRead(role) else { continue }
                unreadable[policy.groupID, default: []].insert(policy.collection)
            }
        }
        return FeedSources(groups: visible.groups, shares: visible.shares.map {
            FeedSource.share(group: $0.groupID, member: $0.userID, collection: $0.collection)
        }, unreadable: unreadable)
    }

    /// The changes after `cursor`, at most `limit`, from `sources` (read now when not given). A cursor past a
    /// source's end was not issued by this feed: `resync_required`. Groups the cursor names that are no longer
    /// among the sources are dropped from it and named in `removedGroups`.
    public func page(userID: String, after cursor: FeedCursor, limit: Int, sources known: FeedSources? = nil) async throws -> FeedPage {
        let read = try await dependencies.database.read { connection -> (FeedSources, [[FeedChange]])? in
            let sources = if let known { known } else { try await Self.sources(userID: userID, connection) }
            var lists: [[FeedChange]] = []
            for source in sources.all {
                let after = cursor[source]
                let (store, owner, collection) = Self.location(of: source, userID: userID)
                let hidden: Set<String> = if case .group(let id) = source { sources.unreadable[id] ?? [] } else { [] }
                let rows = try await RecordStore(connection, store).feed(ownerID: owner, collection: collection,
                                                                         excluding: hidden, after: after, limit: limit + 1)
                if rows.isEmpty, after > 0, try await RecordStore(connection, store).lastFeedSequence(ownerID: owner) < after {
                    return nil
                }
                lists.append(rows.map { FeedChange($0, source: source) })
            }
            return (sources, lists)
        }
        guard let (sources, lists) = read else { throw LanyardError.resyncRequired }
        var start = cursor
        let removed = cursor.groups.subtracting(sources.groups).sorted()
        for group in removed { start = start.removing(group: group) }
        for source in cursor.positions.keys where !sources.contains(source) { start = start.removing(source) }
        return Self.interleave(lists, after: start, limit: limit, removedGroups: removed)
    }

    /// Each source's changes in their order, interleaved oldest first by time, at most `limit`.
    static func interleave(_ lists: [[FeedChange]], after cursor: FeedCursor, limit: Int, removedGroups: [String]) -> FeedPage {
        var heads = Array(repeating: 0, count: lists.count)
        var entries: [FeedEntry] = []
        var position = cursor
        while entries.count < limit {
            var next: Int?
            for (index, list) in lists.enumerated() where heads[index] < list.count {
                if let best = next, lists[best][heads[best]].record.updatedAt <= list[heads[index]].record.updatedAt { continue }
                next = index
            }
            guard let index = next else { break }
            let change = lists[index][heads[index]]
            heads[index] += 1
            position = position.advanced(change.source, to: change.sequence)
            entries.append(FeedEntry(change: change, cursor: position))
        }
        let remaining = zip(lists, heads).contains { $0.count > $1 }
        return FeedPage(entries: entries, nextCursor: position, hasMore: remaining, removedGroups: removedGroups)
    }

    /// The table, owner and collection filter a source's changes are read from.
    static func location(of source: FeedSource, userID: String) -> (RecordTable, String, String?) {
        switch source {
        case .personal: (.personal, userID, nil)
        case .group(let id): (.group, id, nil)
        case .share(_, let member, let collection): (.personal, member, collection)
        }
    }
}
