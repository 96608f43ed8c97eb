import Foundation
import Logging
import Synchronization
import Testing
import LanyardStore
import LanyardSupport

/// PostgreSQL commits concurrent transactions that only hold writes in shared statements (`GroupCommit`).
/// Each transaction stays all or nothing and gets its own outcome, whoever it shared a statement with.
@Suite struct GroupCommitTests {
    let held = HeldWriteTests()

    /// A person and a visit of theirs, held back: the shape of a sign-in (a session and its refresh token).
    static func insertPersonWithVisit(_ person: String, visit: String, on connection: any DatabaseConnection) async throws {
        try await connection.enqueueWrite("INSERT INTO people (id, name) VALUES ($1, $2)", [.text(person), .null])
        try await connection.enqueueWrite("INSERT INTO visits (id, person_id, at) VALUES ($1, $2, $3)",
                                          [.text(visit), .text(person), .integer(1)])
    }

    /// Runs `count` transactions at once, each given its number; their outcomes by number.
    static func race(_ count: Int, on database: any Database,
                     _ body: @escaping @Sendable (Int, any DatabaseConnection) async throws -> Void) async -> [Int: Result<Void, any Error>] {
        await withTaskGroup(of: (Int, Result<Void, any Error>).self) { group in
            for number in 0..<count {
                group.addTask {
                    do {
                        try await database.transaction { try await body(number, $0) }
                        return (number, .success(()))
                    } catch {
                        return (number, .failure(error))
                    }
                }
            }
            var outcomes: [Int: Result<Void, any Error>] = [:]
            for await (number, outcome) in group { outcomes[number] = outcome }
            return outcomes
        }
    }

    /// Transactions committed by one statement share PostgreSQL's transaction id (`xmin`) on their rows.
    func commits(of table: String, in database: any Database) async throws -> Int {
        try await database.read { try await $0.query("SELECT DISTINCT xmin::text AS x FROM \(table)") }.count
    }

    @Test(.requiresPostgres) func concurrentTransactionsOfOneShapeShareCommitsAndAllLand() async throws {
        try await held.withDatabase(.postgres, connections: 4) { (database: any Database) async throws in
            let outcomes = await Self.race(48, on: database) { number, connection in
                try await Self.insertPersonWithVisit("p\(number)", visit: "v\(number)", on: connection)
            }
            #expect(outcomes.values.allSatisfy { (try? $0.get()) != nil })
            #expect(try await held.count("people", in: database) == 48)
            #expect(try await held.count("visits", in: database) == 48)
            let commits = try await commits(of: "people", in: database)
            #expect(commits < 48, "48 transactions arriving together are committed in fewer statements (\(commits))")
            let landedWithTheirPerson = try await database.read {
                try await $0.first("SELECT COUNT(*) AS n FROM visits v JOIN people p ON p.id = v.person_id AND p.xmin = v.xmin")
            }?.integer("n")
            #expect(landedWithTheirPerson == 48, "each visit was committed with its own person")
        }
    }

    @Test(.requiresPostgres) func aTransactionThatFailsInASharedCommitFailsAloneAndLeavesNothing() async throws {
        try await held.withDatabase(.postgres, connections: 4) { (database: any Database) async throws in
            _ = try await database.transaction { try await $0.query("INSERT INTO people (id, name) VALUES ('taken', NULL)") }
            // Every eighth person is taken already; every eighth from the fourth visits nobody.
            let outcomes = await Self.race(48, on: database) { number, connection in
                let person = number % 8 == 0 ? "taken" : "p\(number)"
                try await Self.insertPersonWithVisit(person, visit: "v\(number)", on: connection)
                if number % 8 == 4 {
                    try await connection.enqueueWrite("INSERT INTO visits (id, person_id, at) VALUES ($1, $2, $3)",
                                                      [.text("w\(number)"), "nobody", .integer(1)])
                }
            }
            for (number, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
                switch number % 8 {
                case 0:
                    #expect(throws: StoreError.uniqueViolation, "transaction \(number)") { try outcome.get() }
                case 4:
                    #expect(throws: StoreError.foreignKeyViolation, "transaction \(number)") { try outcome.get() }
                default:
                    #expect((try? outcome.get()) != nil, "transaction \(number) landed")
                }
            }
            #expect(try await held.count("people", in: database) == 1 + 36, "taken, and the 36 that succeeded")
            #expect(try await held.count("visits", in: database) == 36, "nothing of the twelve that failed")
        }
    }

    @Test(.requiresPostgres) func sharedCommitsAndOrdinaryTransactionsShareEvenASingleConnection() async throws {
        // A transaction that only holds writes takes no connection until its commit, and one that read gives
        // its connection back before it waits for a shared commit: with one connection, nobody waits forever.
        // A transaction may wait for the one connection as long as the deadlock bound below: a wait is not what
        // this test is about (a starved machine took over 60 s for one).
        try await held.withDatabase(.postgres, connections: 1, timeout: .seconds(240)) { (database: any Database) async throws in
            let finished = Mutex<[Int: Result<Void, any Error>]?>(nil)
            // In a task of its own, so that a deadlock fails the test instead of hanging the suite.
            Task {
                let outcomes = await Self.race(30, on: database, Self.mixedTransaction)
                finished.withLock { $0 = outcomes }
            }
            // Bounded only against a real deadlock: thirty transactions on one connection of a starved machine
            // have taken over a minute.
            let deadline = ContinuousClock.now + .seconds(240)
            while finished.withLock({ $0 == nil }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let outcomes = try #require(finished.withLock { $0 }, "30 transactions on one connection did not finish in 240 s")
            #expect(outcomes.count == 30 && outcomes.values.allSatisfy { (try? $0.get()) != nil })
            #expect(try await held.count("visits", in: database) == 30)
        }
    }

    /// Every third only holds writes, every third reads first, every third locks and writes at once.
    static func mixedTransaction(_ number: Int, _ connection: any DatabaseConnection) async throws {
        switch number % 3 {
        case 0:
            try await Self.insertPersonWithVisit("p\(number)", visit: "v\(number)", on: connection)
        case 1:
            _ = try await connection.first("SELECT COUNT(*) AS n FROM people")
            try await Self.insertPersonWithVisit("p\(number)", visit: "v\(number)", on: connection)
        default:
            _ = try await connection.first("SELECT * FROM people WHERE id = $1\(connection.dialect.forUpdate)", ["p0"])
            try await connection.query("INSERT INTO people (id, name) VALUES ($1, $2)", [.text("p\(number)"), .null])
            try await connection.enqueueWrite("INSERT INTO visits (id, person_id, at) VALUES ($1, $2, $3)",
                                              [.text("v\(number)"), .text("p\(number)"), .integer(1)])
        }
    }
}
