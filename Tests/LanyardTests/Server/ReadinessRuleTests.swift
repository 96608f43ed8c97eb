@testable import LanyardServer
import Testing

/// `/readyz` judges evidence before it asks: a busy instance is never reported down, a known outage at once.
@Suite struct ReadinessRuleTests {
    let now = ContinuousClock.now

    @Test func aDatabaseKnownUnreachableIsDownWhateverAnsweredBefore() {
        #expect(Readiness.verdict(reachable: false, lastAnswer: now, now: now) == .down)
        #expect(Readiness.verdict(reachable: false, lastAnswer: nil, now: now) == .down)
    }

    @Test func aRecentAnswerMeansReadyWithoutAsking() {
        #expect(Readiness.verdict(reachable: true, lastAnswer: now - .milliseconds(100), now: now) == .ready)
        #expect(Readiness.verdict(reachable: true, lastAnswer: now - Readiness.evidenceWindow + .milliseconds(1), now: now) == .ready)
    }

    @Test func withoutRecentEvidenceTheDatabaseIsAsked() {
        #expect(Readiness.verdict(reachable: true, lastAnswer: nil, now: now) == .ask)
        #expect(Readiness.verdict(reachable: true, lastAnswer: now - Readiness.evidenceWindow, now: now) == .ask)
    }

    @Test func aProbeThatNeverAnswersIsNotReadyAtTheDeadline() async {
        let answer = await Readiness.firstAnswer(within: .milliseconds(50)) {
            try? await Task.sleep(for: .seconds(3600))
            return true
        }
        #expect(answer == false)
    }
}
