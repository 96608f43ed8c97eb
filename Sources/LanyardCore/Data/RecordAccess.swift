import LanyardStore

/// Whose records an operation touches and what the caller may do with them: the rules that differ between an
/// account's own store and a group's, while versions, tombstones, cursors and limits stay in `RecordOperations`.
protocol RecordAccess: Sendable {
    var table: RecordTable { get }
    var ownerID: String { get }
    /// The account writing, recorded as a group record's `created_by`/`updated_by`; `nil` for personal records.
    var author: String? { get }
    /// The group a record view names; `nil` for personal records.
    var groupID: String? { get }
    /// Inside the write's transaction: locks the owner's row (so sequences never repeat) and refuses a caller who
    /// may not write.
    func lockForWrite(_ connection: any DatabaseConnection, collection: String) async throws -> WritePermit
    /// Refuses a caller who may not read the collection.
    func checkRead(_ connection: any DatabaseConnection, collection: String) async throws
    /// After the commit: wakes the live readers of the written record (reference section 13).
    func committed(_ row: RecordRow, readers: [String], signals: any AccountSignals)
}

/// What a write may do, as the owner's lock found it.
struct WritePermit: Sendable {
    /// Runs on the record as it stands before the write (`nil`: a new record): a group's `author` policy.
    var check: @Sendable (RecordRow?) throws -> Void = { _ in }
    /// The accounts whose feeds show the record, woken after the commit.
    var readers: [String]
}

/// An account's own records: written under the account row's lock, readable only by the account.
struct PersonalRecords: RecordAccess {
    let caller: Caller

    var table: RecordTable { .personal }
    var ownerID: String { caller.userID }
    var author: String? { nil }
    var groupID: String? { nil }

    func lockForWrite(_ connection: any DatabaseConnection, collection: String) async throws -> WritePermit {
        try await DataRecords.lockOwner(caller, connection)
        return WritePermit(readers: [caller.userID])
    }

    func checkRead(_ connection: any DatabaseConnection, collection: String) async throws {}

    func committed(_ row: RecordRow, readers: [String], signals: any AccountSignals) {
        signals.recordsChanged(readers, written: [FeedChange(row)])
    }
}
