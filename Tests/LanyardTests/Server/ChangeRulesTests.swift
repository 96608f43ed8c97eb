import Foundation
@testable import LanyardCore
@testable import LanyardServer
@testable import LanyardStore
import Testing

/// The change feed's pure rules: cursors, carried changes, notification payloads.
@Suite struct ChangeRulesTests {
    static func change(_ sequence: Int64) -> FeedChange {
        FeedChange(RecordRow(ownerID: "u", collection: "c", recordID: "r\(sequence)", version: 1, updatedAt: Date(),
                             changeSequence: sequence, feedSequence: sequence, deleted: false, data: "{}"))
    }

    @Test func cursorsAreTheDecimalsTheFeedIssuedAndNothingElse() throws {
        #expect(FeedCursor("0") == .start)
        #expect(FeedCursor("42")?.sequence == 42)
        for bad in ["", "-1", "+3", "1.5", "abc", " 7", "99999999999999999999"] { #expect(FeedCursor(bad) == nil, "\(bad)") }
        #expect(throws: LanyardError.self) { try ChangeFeed.cursor("x") }
        #expect(try ChangeFeed.cursor(nil) == .start)
        #expect(try ChangeFeed.cursor("") == .start)
    }

    @Test func carriedChangesAreSentOnlyWhenTheyFollowTheCursorWithoutAGap() {
        let cursor = FeedCursor(sequence: 4)
        #expect(ChangeStream.next([Self.change(5)], after: cursor)?.map(\.cursor.sequence) == [5])
        // Out of order (two commits' wake-ups crossed): sorted.
        #expect(ChangeStream.next([Self.change(6), Self.change(5)], after: cursor)?.map(\.cursor.sequence) == [5, 6])
        // Already sent: dropped; nothing new is an empty page, not a read.
        #expect(ChangeStream.next([Self.change(3), Self.change(4)], after: cursor)?.isEmpty == true)
        // A gap (a change from another instance, or one the hub did not carry): read the feed.
        #expect(ChangeStream.next([Self.change(6)], after: cursor) == nil)
        #expect(ChangeStream.next([Self.change(5), Self.change(7)], after: cursor) == nil)
    }

    @Test func aWakeWithoutTheChangesMakesTheReaderRead() {
        let waiter = FeedWaiter(userID: "u", id: 1)
        waiter.wake(records: true, access: false, written: [Self.change(1)])
        var wake = waiter.take()
        #expect(wake.carried.count == 1 && !wake.uncarried)
        waiter.wake(records: true, access: false, written: [Self.change(2)])
        waiter.wake(records: true, access: false)
        wake = waiter.take()
        #expect(wake.uncarried && wake.carried.isEmpty)
        // Past the limit the carried ones are dropped, and the reader reads.
        for sequence in 1...Int64(FeedWaiter.carriedLimit + 1) {
            waiter.wake(records: true, access: false, written: [Self.change(sequence)])
        }
        wake = waiter.take()
        #expect(wake.uncarried && wake.carried.isEmpty)
        #expect(!waiter.take().recordsChanged)
    }

    @Test func notificationsNameTheirKindTheirInstanceAndAccountsInPayloadsPostgresTakes() {
        let ids = (0..<400).map { _ in UUID().uuidString.lowercased() }
        let payloads = ChangeNotifier.payloads(.records, ids, from: "abc")
        #expect(payloads.count == 3)
        #expect(payloads.allSatisfy { $0.utf8.count < 8000 && !$0.contains("\n") })
        let parsed = payloads.compactMap(ChangeNotifier.parse)
        #expect(parsed.flatMap { $0.2 } == ids)
        #expect(parsed.allSatisfy { $0.0 == .records && $0.instance == "abc" })
        #expect(ChangeNotifier.parse("x abc id") == nil)
        #expect(ChangeNotifier.parse("r") == nil)
    }
}
