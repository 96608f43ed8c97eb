import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct RateLimitWindowTests {
    @Test func windowsAreFixedAndAligned() {
        let rate = RateLimitSettings.Rate(limit: 5, window: 3600)
        let window = RateLimiter.window(for: Date(timeIntervalSince1970: 7_250), rate: rate)
        #expect(window.start == Date(timeIntervalSince1970: 7_200))
        #expect(window.end == Date(timeIntervalSince1970: 10_800))
    }
}
