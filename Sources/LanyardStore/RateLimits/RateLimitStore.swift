import Foundation

/// The `rate_limits` table: fixed-window hit counters shared by every instance.
public struct RateLimitStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Counts one hit in the bucket's window and returns the window's total, this hit included.
    public func hit(bucket: String, windowStart: Date) async throws -> Int {
        let row = try await connection.first("""
            INSERT INTO rate_limits (bucket, window_start, hits) VALUES ($1, $2, 1)
            ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limits.hits + 1
            RETURNING hits
            """, [.text(bucket), .date(windowStart)])
        return Int(try row?.integer("hits") ?? 1)
    }

    /// The bucket's count in the window, without counting a hit.
    public func hits(bucket: String, windowStart: Date) async throws -> Int {
        Int(try await connection.first("SELECT hits FROM rate_limits WHERE bucket = $1 AND window_start = $2",
                                       [.text(bucket), .date(windowStart)])?.integer("hits") ?? 0)
    }

    public func deleteWindows(before cutoff: Date) async throws {
        try await connection.query("DELETE FROM rate_limits WHERE window_start < $1", [.date(cutoff)])
    }
}
