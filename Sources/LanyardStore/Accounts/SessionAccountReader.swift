/// Reads a session with its account and identities: the read behind every `GET /v1/users/me`, the most
/// frequent authenticated request. On PostgreSQL, reads that arrive while others are on their way are sent
/// together (`ReadBatcher`): a round trip costs far more than the rows. SQLite reads in-process, so waiting
/// for company would only add latency, and each read is sent alone.
public struct SessionAccountReader: Sendable {
    private let database: any Database
    private let batcher: ReadBatcher<String, SessionWithAccount>?

    /// Batches sent at once, each on a connection of its own: two keep PostgreSQL busy and the batches full
    /// (1, 4 and 8 were measured too, BENCHMARKS.md step 33).
    static let batchesInFlight = 2

    public init(database: any Database) {
        self.database = database
        switch database.dialect {
        case .sqlite:
            batcher = nil
        case .postgres:
            batcher = ReadBatcher(maximumBatch: UserStore.sessionsPerRead, maximumInFlight: Self.batchesInFlight) { ids in
                try await database.read { connection in try await UserStore(connection).findWithIdentities(sessionIDs: ids) }
            }
        }
    }

    /// The session with what every authenticated request needs of its account. On PostgreSQL this is the
    /// batched read of `find` (the identities ride along unused: a separate query would cost a round trip).
    public func findWithOwner(sessionID: String) async throws -> (session: SessionRecord, ownerIsAnonymous: Bool,
                                                                  ownerMergedInto: String?)? {
        if let batcher {
            return try await batcher.read(sessionID).map { ($0.session, $0.user.isAnonymous, $0.user.mergedInto) }
        }
        return try await database.read { connection in try await SessionStore(connection).findWithOwner(id: sessionID) }
    }

    public func find(sessionID: String) async throws -> SessionWithAccount? {
        if let batcher { return try await batcher.read(sessionID) }
        return try await database.read { connection in
            try await UserStore(connection).findWithIdentities(sessionIDs: [sessionID])[sessionID]
        }
    }
}
