/// Reads a session with its account and identities: the read behind every `GET /v1/users/me`, the most
/// frequent authenticated request, and every bearer check. Batched on PostgreSQL (`BatchedRead`).
public struct SessionAccountReader: Sendable {
    private let database: any Database
    private let sessions: BatchedRead<SessionWithAccount>

    public init(database: any Database) {
        self.database = database
        sessions = BatchedRead(database: database) { connection, ids in
            try await UserStore(connection).findWithIdentities(sessionIDs: ids)
        }
    }

    /// The session with what every authenticated request needs of its account. On PostgreSQL this is the
    /// batched read of `find`, and the account with its identities comes along (a query of its own would cost
    /// a round trip); SQLite reads only what is needed.
    public func findWithOwner(sessionID: String) async throws -> SessionOwner? {
        if sessions.isBatched {
            return try await sessions.read(sessionID).map { found in
                SessionOwner(session: found.session, ownerIsAnonymous: found.user.isAnonymous,
                             ownerMergedInto: found.user.mergedInto, account: found)
            }
        }
        return try await database.read { connection in try await SessionStore(connection).findWithOwner(id: sessionID) }
    }

    public func find(sessionID: String) async throws -> SessionWithAccount? {
        try await sessions.read(sessionID)
    }
}
