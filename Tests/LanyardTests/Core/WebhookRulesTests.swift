import Foundation
@testable import LanyardCore
import Testing

@Suite struct WebhookRulesTests {
    /// The example of the Standard Webhooks specification.
    @Test func theSignatureIsTheStandardWebhooksOne() {
        #expect(WebhookSignature.sign(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
                                      body: #"{"test": 2432232314}"#, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(WebhookSignature.sign(id: "a", timestamp: 1, body: "{}", secret: "whsec_!!") == nil)
    }

    @Test func retriesFollowTheScheduleWithJitterAndRetryAfterThenStop() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(WebhookSchedule.nextAttempt(after: 1, at: now, retryAfter: nil, jitter: 0.5) == now + 5)
        #expect(WebhookSchedule.nextAttempt(after: 2, at: now, retryAfter: nil, jitter: 0) == now + 270)
        #expect(WebhookSchedule.nextAttempt(after: 2, at: now, retryAfter: nil, jitter: 0.999_999)!.timeIntervalSince(now) < 330)
        #expect(WebhookSchedule.nextAttempt(after: 1, at: now, retryAfter: 120, jitter: 0.5) == now + 120)
        #expect(WebhookSchedule.nextAttempt(after: 1, at: now, retryAfter: 1e9, jitter: 0.5) == now + 86_400)
        #expect(WebhookSchedule.nextAttempt(after: 9, at: now, retryAfter: nil, jitter: 0.5) == now + 86_400)
        #expect(WebhookSchedule.nextAttempt(after: 10, at: now, retryAfter: nil, jitter: 0.5) == nil)
        let total = WebhookSchedule.delays.reduce(0, +)
        #expect(total > 86_400 * 2 && total < 86_400 * 4)
    }

    @Test func onlyAccountEventsAreWebhooks() {
        #expect(WebhookOutbox.type(of: .signIn) == nil)
        #expect(WebhookOutbox.type(of: .userDisabled) == "user.updated")
        #expect(WebhookOutbox.type(of: .anonymousPurged) == "user.deleted")
        #expect(WebhookOutbox.payload(type: "user.created", at: Date(timeIntervalSince1970: 0), data: ["user_id": "u"])
            == #"{"type":"user.created","timestamp":"1970-01-01T00:00:00.000Z","data":{"user_id":"u"}}"#)
    }
}
