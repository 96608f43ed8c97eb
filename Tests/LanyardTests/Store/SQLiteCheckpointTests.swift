import Foundation
import Logging
import Testing
import LanyardStore

/// SQLite's write-ahead log is copied into the database file by a thread of its own, so a steady stream of
/// writes neither lets the log grow without bound nor stops the writer to copy it.
@Suite struct SQLiteCheckpointTests {
    func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// Writes `transactions` rows of `rowBytes` each with ids from `first`, eight transactions at a time (so
    /// they are group-committed as under load), and returns the log's largest size along the way.
    @discardableResult
    func write(_ database: SQLiteDatabase, from first: Int, logPath: String, transactions: Int, rowBytes: Int) async throws -> Int {
        let concurrency = 8
        let payload = String(repeating: "x", count: rowBytes)
        var largestLog = 0
        for start in stride(from: first, to: first + transactions, by: concurrency) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in start..<min(start + concurrency, first + transactions) {
                    group.addTask {
                        _ = try await database.transaction {
                            try await $0.query("INSERT INTO notes (id, body) VALUES ($1, $2)", [.integer(Int64(number)), .text(payload)])
                        }
                    }
                }
                try await group.waitForAll()
            }
            largestLog = max(largestLog, fileSize(logPath))
        }
        return largestLog
    }

    @Test func theThreadCopiesTheLogSoItStartsOverWithoutTheWriterCopyingIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-wal-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lanyard.sqlite").path
        // The writer never copies the log itself here: only the thread can.
        let database = try await SQLiteDatabase.open(
            path: path, checkpointing: .init(background: 64, writer: .max), logger: Logger(label: "test"))
        _ = try await database.transaction { try await $0.query("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)") }

        let transactions = 1_000, rowBytes = 2_000
        let written = transactions * rowBytes
        try await write(database, from: 0, logPath: path + "-wal", transactions: transactions, rowBytes: rowBytes)

        // Soon after the writes stop, the thread has copied them into the database file (with the database
        // open), and so the next write starts the log over, cut back to twice the thread's 64 pages.
        let logLimit = 2 * 64 * 4_096
        let deadline = ContinuousClock.now + .seconds(60)
        var probe = transactions
        while ContinuousClock.now < deadline {
            let id = Int64(probe)
            _ = try await database.transaction { try await $0.query("INSERT INTO notes (id, body) VALUES ($1, 'probe')", [.integer(id)]) }
            probe += 1
            if fileSize(path) >= written, fileSize(path + "-wal") <= logLimit { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(fileSize(path) >= written, "database file holds \(fileSize(path)) bytes of \(written) written")
        #expect(fileSize(path + "-wal") <= logLimit, "log file still \(fileSize(path + "-wal")) bytes")

        let count = try await database.read { try await $0.first("SELECT COUNT(*) AS n FROM notes") }?.integer("n")
        #expect(count == Int64(probe))
        await database.close()
        let reopened = try await SQLiteDatabase.open(path: path, logger: Logger(label: "test"))
        let countAfterReopening = try await reopened.read { try await $0.first("SELECT COUNT(*) AS n FROM notes") }?.integer("n")
        #expect(countAfterReopening == Int64(probe))
        await reopened.close()
    }

    @Test func theWriterCopiesTheLogItselfAtItsOwnThreshold() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-wal-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lanyard.sqlite").path
        // The thread is never woken here: the writer's own checkpoints must bound the log.
        let database = try await SQLiteDatabase.open(
            path: path, checkpointing: .init(background: .max, writer: 100), logger: Logger(label: "test"))
        _ = try await database.transaction { try await $0.query("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)") }

        let transactions = 2_000, rowBytes = 2_000
        let largestLog = try await write(database, from: 0, logPath: path + "-wal", transactions: transactions, rowBytes: rowBytes)

        let written = transactions * rowBytes
        #expect(largestLog < written / 4, "log reached \(largestLog) bytes for \(written) bytes written")
        await database.close()
    }

    @Test func aCleanCloseLeavesOneFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-wal-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("lanyard.sqlite").path
        let database = try await SQLiteDatabase.open(path: path, logger: Logger(label: "test"))
        _ = try await database.transaction { try await $0.query("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)") }
        try await write(database, from: 0, logPath: path + "-wal", transactions: 200, rowBytes: 1_000)
        // Well under the thread's 1,000 pages: everything is still in the log.
        #expect(fileSize(path + "-wal") > 0)
        _ = try await database.read { try await $0.query("SELECT COUNT(*) FROM notes") }
        await database.close()

        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the log is copied and removed at close")
        #expect(fileSize(path) >= 200 * 1_000)
        let reopened = try await SQLiteDatabase.open(path: path, logger: Logger(label: "test"))
        let count = try await reopened.read { try await $0.first("SELECT COUNT(*) AS n FROM notes") }?.integer("n")
        #expect(count == 200)
        await reopened.close()
    }
}
