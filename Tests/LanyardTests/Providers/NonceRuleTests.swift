import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct NonceRuleTests {
    @Test func aRawNonceMatchesARawOrHashedTokenNonce() throws {
        try NonceRule.check(tokenNonce: "n-0S6_WzA2Mj", providedNonce: "n-0S6_WzA2Mj", required: false)
        try NonceRule.check(tokenNonce: "0823a09b54cb9381561068b00aaf4e539b3f54604631d3e6a820879b6b04cc19",
                            providedNonce: "n-0S6_WzA2Mj", required: false)
    }

    @Test func aTokenWithANonceNeedsTheMatchingOne() {
        #expect(throws: ProviderTokenError(.nonceMissing)) {
            try NonceRule.check(tokenNonce: "abc", providedNonce: nil, required: false)
        }
        #expect(throws: ProviderTokenError(.nonceMismatch)) {
            try NonceRule.check(tokenNonce: "abc", providedNonce: "abd", required: false)
        }
    }

    @Test func aRequiredNonceRefusesTokensWithout() {
        #expect(throws: ProviderTokenError(.nonceMissing)) {
            try NonceRule.check(tokenNonce: nil, providedNonce: nil, required: true)
        }
    }

    @Test func aNonceTheTokenDoesNotCarryIsAMismatch() {
        #expect(throws: ProviderTokenError(.nonceMismatch)) {
            try NonceRule.check(tokenNonce: nil, providedNonce: "abc", required: false)
        }
    }
}
