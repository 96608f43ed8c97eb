import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct DerivedUserIDTests {
    // Vectors computed independently (Python hashlib/uuid) from reference section 4's definition.
    @Test(arguments: [
        ("apple", "001091.22c0ca594d4243c58edf3553540380b5.2045", "154af961-f6c1-4358-92d7-4dcfa9846190"),
        ("google", "109876543210987654321", "82710d02-b539-40fb-a33e-12dcd9fe3c7f"),
        ("apple", "001", "e7cb0564-8bc2-4f27-a365-27d1cf514c2b"),
    ])
    func derivedIDsMatchTheDesignVectors(provider: String, subject: String, expected: String) {
        #expect(DerivedUserID.make(provider: provider, subject: subject) == expected)
    }

    @Test func derivedIDsAreVersion4WithRFCVariant() {
        let id = DerivedUserID.make(provider: "google", subject: "x")
        let characters = Array(id)
        #expect(characters[14] == "4")
        #expect("89ab".contains(characters[19]))
        #expect(UUID(uuidString: id) != nil)
    }
}
