import Testing
@testable import LanyardStore

/// How held-back writes become one PostgreSQL statement (see `HeldWriteTests` for the same on a real server).
@Suite struct WriteBatchTests {
    /// The target of a statement a batch can take.
    func plain(_ sql: String) throws -> WriteBatch.Target {
        try #require(WriteBatch.target(of: sql))
    }

    @Test func onlyPlainWritesCanBeHeldAndTheirTablesAreKnown() {
        #expect(WriteBatch.target(of: "INSERT INTO audit_log (at) VALUES ($1)") == .init(table: "audit_log", isInsert: true))
        #expect(WriteBatch.target(of: "  UPDATE users SET a = $2 WHERE id = $1") == .init(table: "users", isInsert: false, key: 1))
        #expect(WriteBatch.target(of: "DELETE FROM sessions WHERE id = $1") == .init(table: "sessions", isInsert: false, key: 1))
        let insertReading = WriteBatch.target(of: """
            INSERT INTO identities (id, pos) VALUES ($1, (SELECT MAX(pos) FROM identities WHERE user_id = $2))
            """)
        #expect(insertReading?.reads == ["identities"])
        #expect(WriteBatch.target(of: "SELECT * FROM users") == nil)
        #expect(WriteBatch.target(of: "WITH a AS (DELETE FROM x) SELECT 1") == nil, "a data-modifying WITH cannot nest")
        #expect(WriteBatch.target(of: "DELETE FROM sessions WHERE id = $1 RETURNING id") == nil, "its answer would be lost")
        #expect(WriteBatch.target(of: "UPDATE \"users\" SET a = 1") == nil)
    }

    @Test func aWriteThatDependsOnAHeldOneWaitsForTheNextBatch() throws {
        var batch = WriteBatch()
        let insertUser = try #require(WriteBatch.target(of: "INSERT INTO users (id) VALUES ($1)"))
        batch.append("INSERT INTO users (id) VALUES ($1)", ["u"], target: insertUser)
        #expect(batch.accepts(try plain("INSERT INTO users (id) VALUES ($1)")),
                "two inserts into one table are independent")
        #expect(batch.accepts(try plain("INSERT INTO sessions (id, user_id) VALUES ($1, $2)")))
        #expect(!batch.accepts(try plain("UPDATE users SET name = $2 WHERE id = $1")),
                "an update would not see the held insert's row")
        #expect(!batch.accepts(try plain("""
            INSERT INTO identities (id, user_id) SELECT $1, id FROM users WHERE id = $2
            """)), "a subquery would not see the held insert's row")
    }

    /// An insert that reads nothing joins without a look at each held write, unless one updates or deletes
    /// from its table or cannot be combined; whole transactions (`GroupCommit`) follow the same rules.
    @Test func anInsertWaitsForAHeldUpdateOrDeleteOfItsTable() throws {
        let updateUser = "UPDATE users SET display_name = $2 WHERE id = $1"
        let deleteSession = "DELETE FROM sessions WHERE id = $1"
        let insertSession = "INSERT INTO sessions (id) VALUES ($1)"
        let insertAudit = "INSERT INTO audit_log (at) VALUES ($1)"
        var batch = WriteBatch()
        batch.append(updateUser, ["u1", "Ada"], target: try plain(updateUser))
        #expect(!batch.accepts(try plain("INSERT INTO users (id) VALUES ($1)")), "the held update's table")
        #expect(batch.accepts(try plain(insertSession)), "another table")
        batch.append(deleteSession, ["s1"], target: try plain(deleteSession))
        #expect(!batch.accepts(try plain(insertSession)), "the held delete's table")
        #expect(batch.accepts(try plain(insertAudit)))

        func transaction(_ writes: [(String, [SQLValue])]) throws -> WriteBatch {
            var held = WriteBatch()
            for (sql, binds) in writes { held.append(sql, binds, target: try plain(sql)) }
            return held
        }
        let signIn = try transaction([(insertSession, ["s2"]), (insertAudit, [.integer(2)])])
        #expect(try signIn.accepts(transaction([(insertSession, ["s3"]), (insertAudit, [.integer(3)])])))
        #expect(try !signIn.accepts(transaction([(deleteSession, ["s4"]), (insertSession, ["s5"])])),
                "its own delete comes before its insert into the same table")
        #expect(try !transaction([(deleteSession, ["s6"])]).accepts(signIn), "a held delete of the table it inserts into")
        var uncombinable = WriteBatch()
        uncombinable.append("WITH a AS (DELETE FROM x) SELECT 1", [], target: nil)
        #expect(!uncombinable.accepts(signIn))
    }

    @Test func heldWritesBecomeOneStatementWithTheirParametersRenumbered() {
        var batch = WriteBatch()
        for (sql, binds) in [
            ("INSERT INTO sessions (id, user_id, ip) VALUES ($1, $2, $3)", [SQLValue.text("s"), .text("u"), .null]),
            ("INSERT INTO refresh_tokens (hash, session_id, at) VALUES ($10, $1, $3)",
             [.text("s"), .text("u"), .integer(7), .null, .null, .null, .null, .null, .null, .text("h")]),
            ("UPDATE identities SET note = 'costs $1' WHERE id = $1 AND seen < $2", [.text("i"), .integer(9)]),
        ] {
            batch.append(sql, binds, target: WriteBatch.target(of: sql)!)
        }
        let statement = batch.statement()
        // PostgreSQL runs the main statement first, then the WITH queries from the last: the order they were held.
        #expect(statement.sql == """
            WITH w1 AS (UPDATE identities SET note = 'costs $1' WHERE id = $1 AND seen < $2), \
            w2 AS (INSERT INTO refresh_tokens (hash, session_id, at) VALUES ($3, $4, $5)) \
            INSERT INTO sessions (id, user_id, ip) VALUES ($6, $7, $8)
            """)
        #expect(statement.binds == [.text("i"), .integer(9), .text("h"), .text("s"), .integer(7), .text("s"), .text("u"), .null],
                "parameters in order of use; unused ones dropped, since PostgreSQL could not type them")
    }

    @Test func aWriteThatCannotBeCombinedIsHeldAlone() throws {
        let rotate = "WITH used AS (UPDATE tokens SET used = true WHERE id = $1) INSERT INTO tokens (id) VALUES ($2)"
        var batch = WriteBatch()
        #expect(batch.accepts(nil), "an empty batch holds anything")
        batch.append(rotate, ["a", "b"], target: nil)
        #expect(!batch.accepts(try plain("INSERT INTO audit_log (at) VALUES ($1)")))
        #expect(batch.statement().sql == rotate)
        var plain = WriteBatch()
        plain.append("INSERT INTO audit_log (at) VALUES ($1)", [.integer(1)],
                     target: WriteBatch.target(of: "INSERT INTO audit_log (at) VALUES ($1)"))
        #expect(!plain.accepts(nil))
    }

    @Test func aSingleHeldWriteIsSentAsItIs() {
        var batch = WriteBatch()
        let sql = "UPDATE users SET last_active_at = $2 WHERE id = $1"
        batch.append(sql, ["u", .integer(1)], target: WriteBatch.target(of: sql)!)
        #expect(batch.statement().sql == sql)
        #expect(batch.statement().binds == ["u", .integer(1)])
    }

    @Test func writesOfRowsPickedByIdKnowWhichParameterPicksThem() {
        #expect(WriteBatch.target(of: "UPDATE users SET name = $2 WHERE id = $1 AND name IS NULL")?.key == 1)
        #expect(WriteBatch.target(of: "DELETE FROM sessions WHERE id = $3")?.key == 3)
        #expect(WriteBatch.target(of: "UPDATE users SET name = $2 WHERE id = $1 OR name IS NULL")?.key == nil,
                "an OR reaches other rows")
        #expect(WriteBatch.target(of: "UPDATE users SET id = $2 WHERE id = $1")?.key == nil, "the row moves to another id")
        #expect(WriteBatch.target(of: "UPDATE users SET n = (SELECT 1 FROM x WHERE id = $2) WHERE id = $1")?.key == nil)
        #expect(WriteBatch.target(of: "UPDATE sessions SET a = $2 WHERE user_id = $1")?.key == nil)
        let link = WriteBatch.target(of: """
            INSERT INTO identities (id, user_id, pos) VALUES ($1,
                (SELECT id FROM users WHERE id = $2 AND merged_into IS NULL FOR NO KEY UPDATE), $3)
            """)
        #expect(link?.keyedReads == ["users": 2])
        let position = WriteBatch.target(of: """
            INSERT INTO identities (id, pos) VALUES ($1, (SELECT MAX(pos) FROM identities WHERE user_id = $2))
            """)
        #expect(position?.reads == ["identities"] && position?.keyedReads == [:])
    }

    @Test func writesAndReadsOfDifferentRowsByIdShareABatch() throws {
        let setName = "UPDATE users SET name = $2 WHERE id = $1 AND name IS NULL"
        let link = "INSERT INTO identities (id, user_id) VALUES ($1, (SELECT id FROM users WHERE id = $2 FOR NO KEY UPDATE))"
        var batch = WriteBatch()
        batch.append(link, ["i1", "u1"], target: try plain(link))
        batch.append(setName, ["u1", "Ada"], target: try plain(setName))
        #expect(batch.accepts(try plain(link), binds: ["i2", "u2"]), "another account's row")
        #expect(!batch.accepts(try plain(link), binds: ["i2", "u1"]), "the read would miss the held update of u1")
        #expect(batch.accepts(try plain(setName), binds: ["u2", "Grace"]))
        #expect(!batch.accepts(try plain(setName), binds: ["u1", "Grace"]), "one row updated twice")
        #expect(!batch.accepts(try plain(setName)), "a key whose value is unknown could be any row")
        var inserted = WriteBatch()
        inserted.append("INSERT INTO users (id) VALUES ($1)", ["u3"], target: try plain("INSERT INTO users (id) VALUES ($1)"))
        #expect(!inserted.accepts(try plain(setName), binds: ["u4", "Ada"]), "an update would not see inserted rows")
        #expect(!inserted.accepts(try plain(link), binds: ["i4", "u4"]), "nor would a read")
    }
}
