import Testing
@testable import LanyardStore

/// Which waiting transactions `GroupCommit` puts in one statement (see `GroupCommitTests` on a real server).
@Suite struct GroupCommitGroupingTests {
    static let insertSession = "INSERT INTO sessions (id, user_id) VALUES ($1, $2)"
    static let insertToken = "INSERT INTO refresh_tokens (token_hash, session_id) VALUES ($1, $2)"
    static let markActive = "UPDATE users SET last_active_at = $2 WHERE id = $1"
    static let insertReadingOwnTable = """
        INSERT INTO identities (id, pos) VALUES ($1, (SELECT MAX(pos) + 1 FROM identities WHERE user_id = $2))
        """

    /// A transaction's held writes, each given `binds`.
    func transaction(_ statements: String..., binds: [SQLValue] = ["x", "y"]) -> GroupCommit.Pending {
        var writes = WriteBatch()
        for sql in statements {
            let target = WriteBatch.target(of: sql)
            precondition(writes.accepts(target, binds: binds), "one transaction's writes make one statement")
            writes.append(sql, binds, target: target)
        }
        return GroupCommit.Pending(writes)
    }

    func positions(_ groups: [GroupCommit.Group], of pending: [GroupCommit.Pending]) -> [[Int]] {
        groups.map { group in group.members.map { member in pending.firstIndex { $0 === member }! } }
    }

    @Test func transactionsOfOneShapeThatOnlyInsertShareAStatement() {
        let signIns = (0..<5).map { _ in transaction(Self.insertSession, Self.insertToken) }
        #expect(positions(GroupCommit.groups(signIns), of: signIns) == [[0, 1, 2, 3, 4]])
        #expect(GroupCommit.groups(signIns).first?.combined.count == 10, "the five transactions' writes, one statement")
    }

    @Test func differentShapesGoInStatementsOfTheirOwnInTheOrderTheyCame() {
        let pending = [
            transaction(Self.insertSession, Self.insertToken),
            transaction(Self.insertSession),
            transaction(Self.insertSession, Self.insertToken),
            transaction(Self.insertToken, Self.insertSession),
        ]
        #expect(positions(GroupCommit.groups(pending), of: pending) == [[0, 2], [1], [3]])
    }

    @Test func writesThatWouldMissEachOthersRowsAreNotShared() {
        // Two updates of one row, or a write reading a table the other writes.
        let updates = [transaction(Self.markActive), transaction(Self.markActive)]
        #expect(positions(GroupCommit.groups(updates), of: updates) == [[0], [1]])
        let accounts = [transaction(Self.markActive, binds: ["u1", "t"]), transaction(Self.markActive, binds: ["u2", "t"]),
                        transaction(Self.markActive, binds: ["u1", "t"])]
        #expect(positions(GroupCommit.groups(accounts), of: accounts) == [[0, 1], [2]], "different accounts' rows share")
        let readers = [transaction(Self.insertReadingOwnTable), transaction(Self.insertReadingOwnTable)]
        #expect(positions(GroupCommit.groups(readers), of: readers) == [[0], [1]])
        let unknown = [transaction("WITH a AS (DELETE FROM x) SELECT 1"), transaction("WITH a AS (DELETE FROM x) SELECT 1")]
        #expect(positions(GroupCommit.groups(unknown), of: unknown) == [[0], [1]], "a statement a batch cannot take goes alone")
    }
}
