/// Reads a presented refresh token (by its storage key) with its session and account: every refresh's first
/// read, made outside any transaction and unlocked. On PostgreSQL it is shared with the reads of concurrent
/// refreshes (`BatchedRead`); SQLite reads it alone, in-process.
public struct RefreshTargetReader: Sendable {
    private let targets: BatchedRead<RefreshTarget>

    public init(database: any Database) {
        targets = BatchedRead(database: database) { connection, keys in
            try await RefreshTokenStore(connection).findForRefresh(tokenKeys: keys)
        }
    }

    public func find(tokenKey: String) async throws -> RefreshTarget? {
        try await targets.read(tokenKey)
    }
}
