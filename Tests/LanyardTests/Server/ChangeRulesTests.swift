import Foundation
@testable import LanyardCore
@testable import LanyardServer
@testable import LanyardStore
import Synchronization
import Testing

/// The change feed's pure rules: cursors, carried changes, notification payloads.
@Suite struct ChangeRulesTests {
    static func change(_ sequence: Int64) -> FeedChange {
        FeedChange(RecordRow(ownerID: "u", collection: "c", recordID: "r\(sequence)", version: 1, updatedAt: Date(),
                             changeSequence: sequence, feedSequence: sequence, deleted: false, data: "{}"))
    }

    static func change(_ sequence: Int64, _ source: FeedSource) -> FeedChange {
        FeedChange(RecordRow(ownerID: "g", collection: "c", recordID: "r\(sequence)", version: 1, updatedAt: Date(),
                             changeSequence: sequence, feedSequence: sequence, deleted: false, data: "{}"), source: source)
    }

    @Test func cursorsAreTheTextsTheFeedIssuedAndNothingElse() throws {
        #expect(FeedCursor("0") == .start)
        #expect(FeedCursor("42")?.sequence == 42)
        for bad in ["", "-1", "+3", "1.5", "abc", " 7", "99999999999999999999", "4~", "4~g.a", "4~g.a.b", "4~x.a.1",
                    "4~g.a b.1", "4~s.g.m.Bad.1", "4~s.g.m.c", String(repeating: "9", count: 17_000)] {
            #expect(FeedCursor(bad) == nil, "\(bad)")
        }
        #expect(throws: LanyardError.self) { try ChangeFeed.cursor("x") }
        #expect(try ChangeFeed.cursor(nil) == .start)
        #expect(try ChangeFeed.cursor("") == .start)
        // Groups and shared collections each keep their place; the text round-trips, sources in a fixed order.
        let cursor = FeedCursor(sequence: 7).advanced(.group("g2"), to: 3).advanced(.group("g1"), to: 9)
            .advanced(.share(group: "g1", member: "m", collection: "places"), to: 12)
        #expect(cursor.text == "7~g.g1.9~g.g2.3~s.g1.m.places.12")
        #expect(FeedCursor(cursor.text) == cursor)
        #expect(cursor[.group("g3")] == 0)
        // Leaving a group forgets its place and its shared collections'.
        #expect(cursor.removing(group: "g1").text == "7~g.g2.3")
        #expect(cursor.groups == ["g1", "g2"])
    }

    @Test func carriedChangesAreSentOnlyWhenTheyFollowTheCursorWithoutAGap() {
        let cursor = FeedCursor(sequence: 4)
        let personal = FeedSources.none
        #expect(ChangeStream.next([Self.change(5)], after: cursor, sources: personal)?.map(\.cursor.sequence) == [5])
        // Out of order (two commits' wake-ups crossed): sorted.
        #expect(ChangeStream.next([Self.change(6), Self.change(5)], after: cursor, sources: personal)?
            .map(\.cursor.sequence) == [5, 6])
        // Already sent: dropped; nothing new is an empty page, not a read.
        #expect(ChangeStream.next([Self.change(3), Self.change(4)], after: cursor, sources: personal)?.isEmpty == true)
        // A gap (a change from another instance, or one the hub did not carry): read the feed.
        #expect(ChangeStream.next([Self.change(6)], after: cursor, sources: personal) == nil)
        #expect(ChangeStream.next([Self.change(5), Self.change(7)], after: cursor, sources: personal) == nil)
        // A group's change follows the group's place, not the account's; a group the stream does not read yet: read.
        let inGroup = FeedSources(groups: ["g"], shares: [])
        let entries = ChangeStream.next([Self.change(1, .group("g")), Self.change(5)], after: cursor, sources: inGroup)
        #expect(entries?.map(\.cursor.text) == ["4~g.g.1", "5~g.g.1"])
        #expect(ChangeStream.next([Self.change(1, .group("g"))], after: cursor, sources: personal) == nil)
    }

    @Test func sourcesInterleaveByTimeAndKeepTheirOwnOrder() {
        func change(_ sequence: Int64, _ source: FeedSource, at seconds: TimeInterval) -> FeedChange {
            FeedChange(RecordRow(ownerID: "o", collection: "c", recordID: "r", version: 1,
                                 updatedAt: Date(timeIntervalSince1970: seconds), changeSequence: sequence,
                                 feedSequence: sequence, deleted: false, data: nil), source: source)
        }
        let mine = [change(1, .personal, at: 10), change(2, .personal, at: 30)]
        let family = [change(1, .group("f"), at: 20), change(2, .group("f"), at: 5)]
        let page = ChangeFeed.interleave([mine, family], after: .start, limit: 3, removedGroups: [])
        // The family's second change is older by its clock but comes after its first: each source keeps its order.
        #expect(page.entries.map(\.cursor.text) == ["1", "1~g.f.1", "1~g.f.2"])
        #expect(page.hasMore && page.nextCursor.text == "1~g.f.2")
        let rest = ChangeFeed.interleave([Array(mine.dropFirst()), []], after: page.nextCursor, limit: 3, removedGroups: [])
        #expect(rest.entries.map(\.cursor.text) == ["2~g.f.2"] && !rest.hasMore)
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
        let flows = ChangeNotifier.payloads(.emailFlows, ["ef_1", "ef_2"], from: "abc").compactMap(ChangeNotifier.parse)
        #expect(flows.count == 1 && flows[0].0 == .emailFlows && flows[0].2 == ["ef_1", "ef_2"])
    }

    /// A device waiting for its email flow's link is woken by the confirmation, not by another flow's; a wait
    /// with none ends at its timeout; a cancelled wait ends at once. (The waits' own timeouts are long and the
    /// bounds generous: a test machine running the whole suite can leave a task unscheduled for many seconds.)
    @Test func aWaitForAnEmailFlowEndsAtItsConfirmationOrItsTimeout() async {
        let waits = EmailFlowWaits()
        let timeout: Duration = .seconds(600)
        let started = ContinuousClock.now
        let done = Atomic(false)
        let waiting = Task {
            await waits.wait(for: "ef_mine", upTo: timeout)
            done.store(true, ordering: .sequentiallyConsistent)
        }
        // Another flow's confirmation wakes nobody; this flow's does, whenever the wait began.
        waits.wake(["ef_other"])
        try? await Task.sleep(for: .milliseconds(100))
        let wokenByAnother = done.load(ordering: .sequentiallyConsistent)
        #expect(!wokenByAnother)
        while !done.load(ordering: .sequentiallyConsistent), ContinuousClock.now - started < .seconds(300) {
            waits.wake(["ef_mine"])
            try? await Task.sleep(for: .milliseconds(10))
        }
        await waiting.value
        #expect(ContinuousClock.now - started < .seconds(300), "woken, not timed out")
        let beforeTimeout = ContinuousClock.now
        await waits.wait(for: "ef_nobody", upTo: .milliseconds(20))
        #expect(ContinuousClock.now - beforeTimeout >= .milliseconds(20))
        let task = Task { await waits.wait(for: "ef_cancelled", upTo: timeout) }
        task.cancel()
        await task.value
        #expect(ContinuousClock.now - started < .seconds(300), "cancelled, not timed out")
    }
}
