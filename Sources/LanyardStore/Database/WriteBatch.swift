/// Writes a PostgreSQL transaction holds back because nothing in it reads their results (audit rows, a new
/// session, the time of a sign-in), sent together as one statement: each held write becomes a data-modifying
/// `WITH` query of it. A round trip to the database costs more than most of Lanyard's statements, and a
/// transaction whose only writes are held back needs neither `BEGIN` nor `COMMIT`: one statement is atomic.
///
/// The parts of one statement all see the database as it was before it, in no set order, so only plain
/// `INSERT`, `UPDATE` and `DELETE` statements (no `WITH`, no `RETURNING`) are combined; a write joins a
/// batch only when it reads no table the batch writes, and shares a table with another only when both
/// insert (an update would not see the other's rows). Rows picked by their `id` are the exception: an
/// update or delete `WHERE id = $n` (`Target.key`), and a subquery reading `FROM t WHERE id = $n`
/// (`Target.keyedReads`), touch no row of another such write or read of the same table with a different
/// id, so they share a table with them. Any other write is held in a batch of its own. A write that does
/// not join goes in the next batch.
///
/// What it buys (paired against the same build with no write classified, so each held write is a statement
/// of its own and a sign-in is `BEGIN`, its writes, `COMMIT`; 3 rounds, c=64, PostgreSQL fsync on, 2026-11-26):
/// new sign-ins 1,938 a second against 627 with rate limits off (504 against 1,427 µs of server CPU each) and
/// 1,379 against 596 with them on; repeat sign-ins 2,700 against 918 and 1,690 against 878. Refreshes, whose
/// rotation is one statement already, are within the noise.
struct WriteBatch: Sendable {
    struct Target: Equatable, Sendable {
        var table: String
        var isInsert: Bool
        /// Tables its subqueries read (`FROM` and `JOIN`).
        var reads: Set<String> = []
        /// For an update or delete of only the row `WHERE id = $n` (an update that leaves `id` alone): `n`.
        var key: Int?
        /// Tables whose every read is of only the row `WHERE id = $n`, with `n`.
        var keyedReads: [String: Int] = [:]
    }

    private struct Write: Sendable {
        var sql: String
        var binds: [SQLValue]
        /// `nil` for a write that cannot be combined with others.
        var target: Target?
    }

    private var writes: [Write] = []
    /// What an insert that reads no table needs to know of the held writes to join (`accepts`) without
    /// looking at each: whether one cannot be combined, and the tables they update or delete from.
    private var holdsUncombinable = false
    private var changedTables: Set<String> = []

    var isEmpty: Bool { writes.isEmpty }
    var count: Int { writes.count }

    /// The table `sql` writes, or `nil` when it is not a statement a batch can take.
    static func target(of sql: String) -> Target? {
        let words = Array(sql.split(whereSeparator: \.isWhitespace).prefix(3))
        let keywords = words.map { $0.uppercased() }
        guard !sql.uppercased().contains("RETURNING"), let verb = keywords.first else { return nil }
        let table: Substring? = switch verb {
        case "INSERT" where keywords.count == 3 && keywords[1] == "INTO": words[2]
        case "DELETE" where keywords.count == 3 && keywords[1] == "FROM": words[2]
        case "UPDATE" where keywords.count >= 2: words[1]
        default: nil
        }
        guard let table, Self.isIdentifier(table) else { return nil }
        let all = sql.split(whereSeparator: { $0.isWhitespace || $0 == "(" || $0 == ")" || $0 == "," })
        let upper = all.map { $0.uppercased() }
        // An `OR` could widen any `WHERE id = $n … AND …` to other rows.
        let mayKey = !upper.contains("OR")
        var target = Target(table: table.lowercased(), isInsert: verb == "INSERT")
        var unkeyedReads: Set<String> = []
        for (index, word) in upper.enumerated().dropFirst(verb == "DELETE" ? 3 : 1)
        where ["FROM", "JOIN"].contains(word) && index + 1 < all.count {
            guard Self.isIdentifier(all[index + 1]) else { return nil }
            let read = all[index + 1].lowercased()
            target.reads.insert(read)
            let key = word == "FROM" && mayKey ? Self.idParameter(upper, at: index + 2) : nil
            if let key, !unkeyedReads.contains(read), target.keyedReads[read] ?? key == key {
                target.keyedReads[read] = key
            } else {
                unkeyedReads.insert(read)
                target.keyedReads[read] = nil
            }
        }
        // An update or delete with no subquery, whose `SET` list leaves `id` alone.
        if verb != "INSERT", mayKey, !upper.contains("SELECT"), let whereIndex = upper.firstIndex(of: "WHERE"),
           !upper[..<whereIndex].contains("ID") {
            target.key = Self.idParameter(upper, at: whereIndex)
        }
        return target
    }

    /// `n` when the words from `index` are `WHERE id = $n`, followed by nothing, `AND` or a row lock.
    private static func idParameter(_ words: [String], at index: Int) -> Int? {
        guard index + 3 < words.count, words[index] == "WHERE", words[index + 1] == "ID", words[index + 2] == "=",
              words[index + 3].hasPrefix("$"), let number = Int(words[index + 3].dropFirst()),
              index + 4 == words.count || ["AND", "FOR"].contains(words[index + 4])
        else { return nil }
        return number
    }

    private static func isIdentifier(_ word: Substring) -> Bool {
        !word.isEmpty && word.allSatisfy { $0.isLetter || $0 == "_" }
    }

    /// Whether a write to `target` (`nil`: one that cannot be combined) with `binds` can join the batch
    /// without depending on a write already in it.
    func accepts(_ target: Target?, binds: [SQLValue] = []) -> Bool {
        guard !writes.isEmpty else { return true }
        guard let target else { return false }
        return joinsByTable(target) || writes.allSatisfy { Self.write(to: target, binds: binds, isIndependentOf: $0) }
    }

    /// Whether every write of `other` can join, each after the ones before it (`GroupCommit`). Checked in
    /// place: a group commit asks this of every waiting transaction against a batch of up to 16 others'.
    func accepts(_ other: WriteBatch) -> Bool {
        for (index, write) in other.writes.enumerated() where !(writes.isEmpty && index == 0) {
            guard let target = write.target else { return false }
            if joinsByTable(target) && other.joinsByTable(target) { continue }
            let independent = { (held: Write) in Self.write(to: target, binds: write.binds, isIndependentOf: held) }
            guard writes.allSatisfy(independent), other.writes[..<index].allSatisfy(independent) else { return false }
        }
        return true
    }

    /// An insert that reads no table is independent of every held write but an uncombinable one or an update
    /// or delete of its table (`write(to:binds:isIndependentOf:)`).
    private func joinsByTable(_ target: Target) -> Bool {
        target.isInsert && target.reads.isEmpty && !holdsUncombinable && !changedTables.contains(target.table)
    }

    /// Whether a write to `target` with `binds`, run in the same statement as `held`, cannot see or change
    /// what `held` does: it reads no table `held` writes (but another row picked by id), and writes another
    /// table, or the same one when both insert or both pick different rows by id.
    private static func write(to target: Target, binds: [SQLValue], isIndependentOf held: Write) -> Bool {
        guard let heldTarget = held.target else { return false }
        let table = heldTarget.table
        if target.reads.contains(table) {
            guard let heldKey = value(heldTarget.key, in: held.binds),
                  let readKey = value(target.keyedReads[table], in: binds), heldKey != readKey else { return false }
        }
        guard table == target.table, !(heldTarget.isInsert && target.isInsert) else { return true }
        guard let heldKey = value(heldTarget.key, in: held.binds), let key = value(target.key, in: binds)
        else { return false }
        return heldKey != key
    }

    /// The value bound to parameter `number` (one-based), if there is one.
    private static func value(_ number: Int?, in binds: [SQLValue]) -> SQLValue? {
        guard let number, number >= 1, number <= binds.count else { return nil }
        return binds[number - 1]
    }

    /// - Precondition: `accepts(other)`.
    mutating func append(contentsOf other: WriteBatch) {
        writes += other.writes
        holdsUncombinable = holdsUncombinable || other.holdsUncombinable
        changedTables.formUnion(other.changedTables)
    }

    /// - Precondition: `accepts(target)`, with `target` from `target(of: sql)`.
    mutating func append(_ sql: String, _ binds: [SQLValue], target: Target?) {
        writes.append(Write(sql: sql, binds: binds, target: target))
        if let target {
            if !target.isInsert { changedTables.insert(target.table) }
        } else {
            holdsUncombinable = true
        }
    }

    /// The statement for a batch of writes, worked out from their SQL alone (so it can be remembered):
    /// its text, and which parameter of which write each of its parameters is.
    struct Combined: Sendable {
        var sql: String
        var parameters: [(write: Int, index: Int)]
    }

    /// The SQL texts of a batch and how many parameters each was given: what `Combined` depends on.
    struct Shape: Hashable, Sendable {
        var sql: [String]
        var bindCounts: [Int]
    }

    var shape: Shape { Shape(sql: writes.map { $0.sql }, bindCounts: writes.map { $0.binds.count }) }

    /// The batch as one statement; a single write is sent as it is. `combined` is `Self.combine(shape)`,
    /// which callers remember per shape (`StatementShapes`).
    func statement(_ combined: Combined? = nil) -> (sql: String, binds: [SQLValue]) {
        guard writes.count > 1 else { return writes.first.map { ($0.sql, $0.binds) } ?? ("", []) }
        let combined = combined ?? Self.combine(shape)
        return (combined.sql, combined.parameters.map { writes[$0.write].binds[$0.index] })
    }

    /// The first write is the main statement and the others are `WITH` queries, last first: PostgreSQL runs
    /// the main statement, then the `WITH` queries nobody reads from the last to the first, so the writes run
    /// in the order they were held. Only speed depends on that order: a row lock taken by the last write (a
    /// sign-in's identity row, which concurrent sign-ins of one person queue on) is held the shortest.
    static func combine(_ shape: Shape) -> Combined {
        var parameters: [(write: Int, index: Int)] = []
        var parts: [String] = []
        for write in [Int](shape.sql.indices.dropFirst().reversed()) + [0] {
            let renumbered = renumber(shape.sql[write], bindCount: shape.bindCounts[write], after: parameters.count)
            parameters += renumbered.used.map { (write, $0) }
            parts.append(renumbered.sql)
        }
        let queries = parts.dropLast().enumerated().map { "w\($0.offset + 1) AS (\($0.element))" }
        return Combined(sql: "WITH \(queries.joined(separator: ", ")) \(parts[parts.count - 1])", parameters: parameters)
    }

    /// Renumbers the placeholders `$n` of `sql` to follow `offset` earlier parameters, in order of first use,
    /// and lists the (zero-based) parameters it uses: an unused one would have no type PostgreSQL can infer.
    /// Placeholders inside quoted literals and identifiers are left alone.
    static func renumber(_ sql: String, bindCount: Int, after offset: Int) -> (sql: String, used: [Int]) {
        var output = ""
        var numbers: [Int: Int] = [:]
        var used: [Int] = []
        var quote: Character?
        var index = sql.startIndex
        while index < sql.endIndex {
            let character = sql[index]
            if let open = quote {
                if character == open { quote = nil }
                output.append(character)
                index = sql.index(after: index)
                continue
            }
            if character == "'" || character == "\"" { quote = character }
            guard character == "$" else {
                output.append(character)
                index = sql.index(after: index)
                continue
            }
            // The digits only: a `prefix` of the whole rest would make a statement of many binds quadratic.
            let digits = sql[sql.index(after: index)...].prefix(while: { $0.isASCII && $0.isNumber })
            guard let original = Int(digits), original >= 1, original <= bindCount else {
                output.append(character)
                index = sql.index(after: index)
                continue
            }
            let number: Int
            if let known = numbers[original] {
                number = known
            } else {
                used.append(original - 1)
                number = offset + used.count
                numbers[original] = number
            }
            output += "$\(number)"
            index = digits.endIndex
        }
        return (output, used)
    }
}
