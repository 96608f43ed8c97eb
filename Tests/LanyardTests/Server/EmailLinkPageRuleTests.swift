import Foundation
@testable import LanyardServer
import LanyardSupport
import Testing

/// What the email link's page shows a person and lets a browser do (reference section 25), without a server.
@Suite struct EmailLinkPageRuleTests {
    @Test(arguments: [
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
         "Safari on iPhone"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome on Linux"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
         "Edge on Windows"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14.6; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox on Mac"),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
         "Chrome on Android"),
        ("Reminders/3.2 CFNetwork/1568.100.1 Darwin/24.0.0", "an app on an Apple device"),
        ("okhttp/4.12.0", "an Android app"),
    ])
    func aDeviceIsNamedAsAPersonSaysIt(agent: String, name: String) {
        #expect(DeviceNames.describe(userAgent: agent) == name)
    }

    @Test func anUnknownOrMissingAgentNamesNoDevice() {
        #expect(DeviceNames.describe(userAgent: nil) == nil)
        #expect(DeviceNames.describe(userAgent: "") == nil)
        #expect(DeviceNames.describe(userAgent: "python-httpx/0.28.1") == nil)
    }

    @Test func theTimeReadsInWordsAndUTC() {
        let asked = Date(timeIntervalSince1970: 1_796_133_900)  // 2026-12-01 14:05 UTC
        #expect(DeviceNames.describe(time: asked, now: asked.addingTimeInterval(20)) == "just now (14:05 UTC, 1 December 2026)")
        #expect(DeviceNames.describe(time: asked, now: asked.addingTimeInterval(185)) == "3 minutes ago (14:05 UTC, 1 December 2026)")
        #expect(DeviceNames.describe(time: asked, now: asked.addingTimeInterval(3 * 3600 + 5)).hasPrefix("3 hours ago"))
    }

    /// The page's form may post only to itself and redirect only to the flow's target, named exactly.
    @Test func theFormMayLeadOnlyToTheConfiguredTarget() {
        #expect(EmailSettings.formActionSource("https://app.example.com/done?x=1") == "https://app.example.com")
        #expect(EmailSettings.formActionSource("http://127.0.0.1:5173/signed-in") == "http://127.0.0.1:5173")
        #expect(EmailSettings.formActionSource("https://xn--bcher-kva.example/cb") == "https://xn--bcher-kva.example")
        #expect(EmailSettings.formActionSource("com.example.app:/signed-in") == "com.example.app:")
        #expect(EmailSettings.formActionSource("https://my_app.example/cb") == nil)
        #expect(EmailSettings.formActionSource("https://a;b.example/cb") == nil)
        #expect(EmailSettings.formActionSource("http://[::1]:3000/cb") == nil)
        #expect(EmailLinkPageRoutes.policy(redirectTo: "myapp://signed-in").contains("form-action 'self' myapp:;"))
        #expect(EmailLinkPageRoutes.policy(redirectTo: nil).contains("form-action 'self';"))
    }
}
