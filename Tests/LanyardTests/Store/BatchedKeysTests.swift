import Testing
@testable import LanyardStore

/// How a batch of keys becomes a statement: the smallest of 1, 2, 4, 8 or 16 copies that holds it.
@Suite struct BatchedKeysTests {
    let statements = BatchedKeys.Statements(orderBy: "n") { key in "SELECT n FROM t WHERE k = \(key)" }

    @Test func oneKeyIsTheSingleKeyQuery() {
        let (sql, binds) = statements.binding(["a"])
        #expect(sql == "SELECT n FROM t WHERE k = $1 ORDER BY n")
        #expect(binds == [.text("a")])
    }

    @Test func aBatchTakesTheSmallestStatementThatHoldsItAndPadsWithAnEmptyKey() {
        let (sql, binds) = statements.binding(["a", "b", "c"])
        #expect(sql.components(separatedBy: "UNION ALL").count == 4)
        #expect(sql.hasSuffix(") AS batch ORDER BY n"))
        #expect(binds == [.text("a"), .text("b"), .text("c"), .text("")])
        #expect(statements.binding(Array(repeating: "k", count: 5)).binds.count == 8)
        #expect(statements.binding(Array(repeating: "k", count: 16)).binds.count == 16)
    }

    @Test func everySizeHasOneTextSoItIsPreparedOnce() {
        let texts = Set((1...BatchedKeys.maximum).map { count in statements.binding((0..<count).map { "k\($0)" }).sql })
        #expect(texts.count == 5)
    }

    @Test func valuesTheBatchSharesComeFirstAndTheKeysFollowThem() {
        let shared = BatchedKeys.Statements(orderBy: "n", shared: 1) { key in "SELECT n FROM t WHERE p = $1 AND k = \(key)" }
        #expect(shared.binding(["a"], shared: [.text("p")]) ==
                ("SELECT n FROM t WHERE p = $1 AND k = $2 ORDER BY n", [.text("p"), .text("a")]))
        let (sql, binds) = shared.binding(["a", "b", "c"], shared: [.text("p")])
        #expect(sql.contains("k = $5") && !sql.contains("k = $1") && !sql.contains("$6"))
        #expect(binds == [.text("p"), .text("a"), .text("b"), .text("c"), .text("")])
    }
}
