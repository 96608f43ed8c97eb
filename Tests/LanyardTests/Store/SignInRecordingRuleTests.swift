import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct SignInRecordingRuleTests {
    let recorded = Date(timeIntervalSince1970: 1_800_000_000)
    var identity: IdentityRecord {
        IdentityRecord(id: "i", userID: "u", provider: "google", providerUserID: "g-1", email: "ada@gmail.com",
                       emailVerified: true, isPrivateEmail: false, linkedAt: recorded, lastSignInAt: recorded)
    }

    @Test func aRepeatWithinTheSecondChangesNothing() {
        #expect(!identity.signInChanges(at: recorded.addingTimeInterval(0.999), email: "ada@gmail.com",
                                        emailVerified: true, isPrivateEmail: false))
        #expect(!identity.signInChanges(at: recorded, email: nil, emailVerified: true, isPrivateEmail: false))
    }

    @Test func aSecondLaterTheTimeIsRecorded() {
        #expect(identity.signInChanges(at: recorded.addingTimeInterval(1), email: "ada@gmail.com",
                                       emailVerified: true, isPrivateEmail: false))
    }

    @Test func whatTheProviderSaysNewIsRecordedAtOnce() {
        #expect(identity.signInChanges(at: recorded, email: "ada@new.example", emailVerified: true, isPrivateEmail: false))
        #expect(identity.signInChanges(at: recorded, email: "ada@gmail.com", emailVerified: false, isPrivateEmail: false))
        #expect(identity.signInChanges(at: recorded, email: "ada@gmail.com", emailVerified: true, isPrivateEmail: true))
    }

    @Test func aFirstSignInIsRecorded() {
        var linkedOnly = identity
        linkedOnly.lastSignInAt = nil
        #expect(linkedOnly.signInChanges(at: recorded, email: "ada@gmail.com", emailVerified: true, isPrivateEmail: false))
    }
}
