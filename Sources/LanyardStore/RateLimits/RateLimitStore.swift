import Foundation

/// The `rate_limits` table: fixed-window hit counters shared by every instance.
public struct RateLimitStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Counts one hit in the bucket's window and returns the window's total, this hit included.
    ///
    /// Every attempt from one client address updates the same row, so the row's lock is what attempts queue on.
    /// On PostgreSQL the count is one statement that commits by itself (`Database.autocommit`), without waiting
    /// for the disk (`synchronous_commit` off for it alone): the lock is held only while PostgreSQL runs it. A
    /// crash may forget the last fraction of a second of counts, and nothing else. With limits on it made
    /// PostgreSQL's new sign-ins 827 → 1,356 a second, repeat sign-ins 1,014 → 1,779 and refreshes 861 → 1,468
    /// (paired, 3 rounds, c=64, fsync on; BENCHMARKS.md, "What PostgreSQL's machinery buys"), against a
    /// transaction of its own that held the lock from the `INSERT`'s reply to the end of its `COMMIT`.
    public static func hit(bucket: String, windowStart: Date, in database: any Database) async throws -> Int {
        try await database.autocommit { connection in
            let row = try await connection.first(connection.dialect == .postgres ? hitOnPostgres : hitOnSQLite,
                                                 [.text(bucket), .date(windowStart)])
            return Int(try row?.integer("hits") ?? 1)
        }
    }

    /// The hit's statement with `row` as the row it inserts (`$1`, `$2`, 1) when the window has none yet.
    private static func hitStatement(row: String) -> String {
        """
        INSERT INTO rate_limits (bucket, window_start, hits) \(row)
        ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limits.hits + 1
        RETURNING hits
        """
    }

    /// `synchronous_commit` off for this statement's transaction alone, set where the row is chosen.
    private static let hitOnPostgres =
        hitStatement(row: "SELECT $1, $2, 1 WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL")
    private static let hitOnSQLite = hitStatement(row: "VALUES ($1, $2, 1)")

    /// The bucket's count in the window, without counting a hit.
    public func hits(bucket: String, windowStart: Date) async throws -> Int {
        Int(try await connection.first("SELECT hits FROM rate_limits WHERE bucket = $1 AND window_start = $2",
                                       [.text(bucket), .date(windowStart)])?.integer("hits") ?? 0)
    }

    public func deleteWindows(before cutoff: Date) async throws {
        try await connection.query("DELETE FROM rate_limits WHERE window_start < $1", [.date(cutoff)])
    }
}
