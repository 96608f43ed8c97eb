import Foundation
@testable import LanyardCore
import Testing

/// Whether a merge may happen and whether an earlier one is answered again (reference sections 5 and 15), case by
/// case, from what the transaction read: every refusal of guest, full and operator merges.
@Suite struct MergeDecisionTests {
    typealias Account = MergeDecision.Account
    static let ada = Account(id: "a", isAnonymous: false, mergedInto: nil, isDisabled: false)
    static let bob = Account(id: "b", isAnonymous: false, mergedInto: nil, isDisabled: false)
    static let guest = Account(id: "g", isAnonymous: true, mergedInto: nil, isDisabled: false)

    static func reason(_ check: () throws(LanyardError) -> Void) -> String? {
        do {
            try check()
            return nil
        } catch {
            return error.details["reason"]?.stringValue ?? error.code.rawValue
        }
    }

    @Test func twoActiveFullAccountsMergeInEitherWay() throws {
        try MergeDecision.check(.full, into: Self.ada, from: Self.bob)
        try MergeDecision.check(.full, into: Self.bob, from: Self.ada)
        try MergeDecision.check(.admin, into: Self.ada, from: Self.bob)
        try MergeDecision.check(.guest, into: Self.ada, from: Self.guest)
    }

    @Test func anAccountNeverMergesIntoItself() {
        for kind in [MergeDecision.Kind.guest, .full, .admin] {
            #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(kind, into: Self.ada, from: Self.ada) } == "same_account")
        }
    }

    @Test func anAccountMergedAwayTakesPartInNoOtherMerge() {
        var merged = Self.bob
        merged.mergedInto = "z"
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.full, into: Self.ada, from: merged) } == "already_merged")
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.full, into: merged, from: Self.ada) } == "already_merged")
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.admin, into: Self.ada, from: merged) } == "already_merged")
    }

    @Test func aBanHoldsAgainstPeopleButNotAgainstAnOperator() {
        var banned = Self.bob
        banned.isDisabled = true
        for (into, from) in [(Self.ada, banned), (banned, Self.ada)] {
            #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.full, into: into, from: from) } == "other_account")
        }
        var bannedGuest = Self.guest
        bannedGuest.isDisabled = true
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.guest, into: banned, from: Self.guest) } == "other_account")
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.guest, into: Self.ada, from: bannedGuest) } == "other_account")
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.admin, into: Self.ada, from: banned) } == nil)
    }

    @Test func guestsMergeOnlyBySigningInAndOnlyAsTheAbsorbedSide() {
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.full, into: Self.ada, from: Self.guest) } == "anonymous")
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.admin, into: Self.guest, from: Self.ada) } == "anonymous")
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.guest, into: Self.ada, from: Self.bob) } == "anonymous")
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.check(.guest, into: Self.guest, from: Self.guest) } == "same_account")
    }

    @Test func theSurvivorEndsInNoMoreGroupsThanTheLimit() {
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.checkGroups(after: 20, limit: 20) } == nil)
        #expect(Self.reason { () throws(LanyardError) in try MergeDecision.checkGroups(after: 21, limit: 20) } == "too_many_groups")
    }

    @Test func anEarlierMergeIsAnsweredAgainForADayToTheSameRequestAndNeverAfterARevert() throws {
        let made = Date(timeIntervalSince1970: 1_000_000)
        let earlier = MergeDecision.Earlier(createdAt: made, revertedAt: nil, foundByKey: true, requestHash: "h")
        #expect(try MergeDecision.replay(earlier, requestHash: "h", at: made.addingTimeInterval(86_000)) == .answer)
        #expect(try MergeDecision.replay(earlier, requestHash: "h", at: made.addingTimeInterval(86_401)) == .expired)
        var reverted = earlier
        reverted.revertedAt = made.addingTimeInterval(10)
        #expect(Self.reason { () throws(LanyardError) in _ = try MergeDecision.replay(reverted, requestHash: "h", at: made) } == "reverted")
        do {
            _ = try MergeDecision.replay(earlier, requestHash: "other", at: made)
            Issue.record("a key with another body was answered")
        } catch {
            #expect(error.code == .invalidRequest && error.httpStatus == 422)
            #expect(error.details["reason"]?.stringValue == "idempotency_key_reused")
        }
        // Found by its proof, not its key: the body may differ in what it asks (a retry without the key).
        var byProof = earlier
        byProof.foundByKey = false
        #expect(try MergeDecision.replay(byProof, requestHash: "other", at: made) == .answer)
    }

    @Test func theOneTieRuleKeepsTheSurvivorsVersionAndOnConflictOverridesIt() {
        let early = Date(timeIntervalSince1970: 100), late = Date(timeIntervalSince1970: 200)
        #expect(MergeRules.currentWins(.newer, current: late, other: early, survivorIsCurrent: false))
        #expect(!MergeRules.currentWins(.newer, current: early, other: late, survivorIsCurrent: true))
        // A tie goes to the survivor, whichever side asked.
        #expect(MergeRules.currentWins(.newer, current: early, other: early, survivorIsCurrent: true))
        #expect(!MergeRules.currentWins(.newer, current: early, other: early, survivorIsCurrent: false))
        #expect(MergeRules.currentWins(.current, current: early, other: late, survivorIsCurrent: false))
        #expect(!MergeRules.currentWins(.other, current: late, other: early, survivorIsCurrent: true))
    }

    @Test func providersBothHoldCollideUnlessReleased() {
        let several = { (provider: String) in provider == "passkey" }
        #expect(MergeRules.collisions(survivor: ["apple", "google"], absorbed: ["google"], release: [], allowsSeveral: several) == ["google"])
        #expect(MergeRules.collisions(survivor: ["apple", "google"], absorbed: ["google"], release: ["google"], allowsSeveral: several).isEmpty)
        #expect(MergeRules.collisions(survivor: ["apple"], absorbed: ["google"], release: [], allowsSeveral: several).isEmpty)
        #expect(MergeRules.collisions(survivor: ["apple", "passkey"], absorbed: ["passkey"], release: [], allowsSeveral: several).isEmpty)
        #expect(MergeRules.released(survivor: ["apple", "google"], absorbed: ["google", "apple"], release: ["apple"],
                                    allowsSeveral: several) == ["apple"])
        #expect(MergeRules.released(survivor: ["apple"], absorbed: ["google"], release: ["google"], allowsSeveral: several).isEmpty)
    }
}
