@testable import LanyardCore
import Testing

/// Sign-in's decision (reference section 5) as a value: upgrade, merge, land a retried merge, sign in or sign up,
/// from what the transaction read.
@Suite struct SignInDecisionTests {
    typealias Guest = SignInDecision.Guest
    static let guest = Guest(id: "g", isAnonymous: true)

    @Test func withoutAGuestAnIdentityIsSignedIntoOrSignedUp() throws {
        #expect(try SignInDecision.decide(guest: nil, bearerEndedByMerge: false, identityOwner: "a") == .signIn(userID: "a"))
        #expect(try SignInDecision.decide(guest: nil, bearerEndedByMerge: false, identityOwner: nil) == .signUp)
    }

    @Test func aGuestIsUpgradedByANewIdentityAndMergedIntoAKnownOnesAccount() throws {
        #expect(try SignInDecision.decide(guest: Self.guest, bearerEndedByMerge: false, identityOwner: nil)
                == .upgradeGuest(guestID: "g"))
        #expect(try SignInDecision.decide(guest: Self.guest, bearerEndedByMerge: false, identityOwner: "a")
                == .mergeGuest(guestID: "g", into: "a"))
    }

    @Test func aRetriedMergeLandsInTheSameAccountAndOnlyWithTheSameIdentity() throws {
        let merged = Guest(id: "g", isAnonymous: true, mergedInto: "a")
        #expect(try SignInDecision.decide(guest: merged, bearerEndedByMerge: true, identityOwner: "a")
                == .landMergedGuest(guestID: "g", into: "a"))
        #expect(throws: LanyardError.self) { try SignInDecision.decide(guest: merged, bearerEndedByMerge: true, identityOwner: "b") }
        #expect(throws: LanyardError.self) { try SignInDecision.decide(guest: merged, bearerEndedByMerge: true, identityOwner: nil) }
    }

    @Test func aSignedInBearerIsIgnoredButAnEndedGuestSessionIsRefused() throws {
        let member = Guest(id: "m", isAnonymous: false)
        #expect(try SignInDecision.decide(guest: member, bearerEndedByMerge: false, identityOwner: "a") == .signIn(userID: "a"))
        #expect(try SignInDecision.decide(guest: member, bearerEndedByMerge: false, identityOwner: nil) == .signUp)
        // The guest's account is gone (deleted), but its session had ended with a merge.
        #expect(throws: LanyardError.self) { try SignInDecision.decide(guest: nil, bearerEndedByMerge: true, identityOwner: "a") }
    }
}
