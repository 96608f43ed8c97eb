import Foundation
@testable import LanyardCore
import LanyardStore
import LanyardSupport
import Testing

/// The pure rules of email flows (reference section 18): limits, when a flow can be finished, codes as typed.
@Suite struct EmailRuleTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let fresh = EmailLimitCounter(windowStart: Date(timeIntervalSince1970: 0), count: 0, lastAt: Date(timeIntervalSince1970: 0))

    @Test func anAddressGetsOneMailAMinuteAndFiveAnHour() throws {
        let rule = EmailLimitRule(interval: 60, perWindow: 5, window: 3600)
        var counter = try rule.take(Self.fresh, at: Self.t0).get()
        #expect(rule.take(counter, at: Self.t0.addingTimeInterval(10)) == .failure(.init(seconds: 50)))
        for minute in 1...4 {
            counter = try rule.take(counter, at: Self.t0.addingTimeInterval(Double(minute) * 61)).get()
        }
        #expect(counter.count == 5)
        // The sixth in the hour waits for the hour to end.
        #expect(rule.take(counter, at: Self.t0.addingTimeInterval(600)) == .failure(.init(seconds: 3000)))
        #expect((try? rule.take(counter, at: Self.t0.addingTimeInterval(3600)).get())?.count == 1)
    }

    @Test func aPerHourLimitWithoutAnIntervalCountsOnly() throws {
        let rule = EmailLimitRule(interval: 0, perWindow: 2, window: 3600)
        let once = try rule.take(Self.fresh, at: Self.t0).get()
        let twice = try rule.take(once, at: Self.t0).get()
        #expect(rule.take(twice, at: Self.t0.addingTimeInterval(1)) == .failure(.init(seconds: 3599)))
    }

    static func flow(wrongCodes: Int = 0, used: Bool = false, undeliverable: Bool = false) -> EmailFlowRecord {
        var flow = EmailFlowRecord(id: "ef_1", address: "a@example.com", intent: "signin", origin: "lanyard", secretHash: "s",
                                   codeHash: "c", linkHash: "l", match: 42, userID: nil, sessionID: nil, redirectTo: nil,
                                   clientIP: nil, userAgent: nil, createUser: true, createdAt: t0, expiresAt: t0.addingTimeInterval(900))
        flow.wrongCodes = wrongCodes
        flow.usedAt = used ? t0 : nil
        flow.undeliverableAt = undeliverable ? t0 : nil
        return flow
    }

    @Test func aFlowEndsWhenUsedDeadUndeliverableOrExpiredInThatOrder() {
        #expect(EmailFlowRules.refusal(Self.flow(), at: Self.t0) == nil)
        #expect(EmailFlowRules.refusal(Self.flow(), at: Self.t0.addingTimeInterval(900)) == "expired")
        #expect(EmailFlowRules.refusal(Self.flow(wrongCodes: 5), at: Self.t0) == "flow_dead")
        #expect(EmailFlowRules.refusal(Self.flow(wrongCodes: 4), at: Self.t0) == nil)
        #expect(EmailFlowRules.refusal(Self.flow(undeliverable: true), at: Self.t0) == "undeliverable")
        #expect(EmailFlowRules.refusal(Self.flow(wrongCodes: 5, used: true), at: Self.t0.addingTimeInterval(999)) == "used")
        let wrong = EmailFlowRules.wrongCode(after: 3)
        #expect(wrong.code == .invalidCode && wrong.details["attempts_left"] == .number(2) && wrong.httpStatus == 401)
        #expect(EmailFlowRules.wrongCode(after: 5).details["reason"] == .string("flow_dead"))
    }

    @Test func codesAreSixDigitsAsTypedWithSpacesOrDashes() {
        #expect(EmailFlowRules.normalizedCode("123 456") == "123456")
        #expect(EmailFlowRules.normalizedCode("123-456") == "123456")
        #expect(EmailFlowRules.normalizedCode("12345") == nil)
        #expect(EmailFlowRules.normalizedCode("１２３４５６") == nil)
        #expect(EmailFlowRules.normalizedCode("12345a") == nil)
    }

    @Test func secretsAreKeyedHashesAndTheTypedNumberIsTwoDigits() throws {
        let secrets = EmailSecrets(masterKey: try MasterKey(rawBytes: Array(repeating: 1, count: 32)))
        let other = EmailSecrets(masterKey: try MasterKey(rawBytes: Array(repeating: 2, count: 32)))
        #expect(secrets.codeHash(flowID: "ef_1", code: "123456") != secrets.codeHash(flowID: "ef_2", code: "123456"))
        #expect(secrets.codeHash(flowID: "ef_1", code: "123456") != other.codeHash(flowID: "ef_1", code: "123456"))
        #expect(!secrets.linkHash("t").contains("t") && secrets.linkHash("t").count == 64)
        #expect(EmailFlowRules.typedMatch("42") == 42 && EmailFlowRules.typedMatch(" 4 2 ") == 42)
        for unreadable in ["", "4", "420", "4a", "٤٢", "-4", "+42", "0x"] {
            #expect(EmailFlowRules.typedMatch(unreadable) == nil, "\(unreadable.debugDescription)")
        }
        let codes = (0..<200).map { _ in EmailSecretGenerator.code(SystemRandomSource()) }
        #expect(codes.allSatisfy { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        #expect(Set(codes).count > 190)
    }

    @Test func retriesBackOffInsideAFlowsLifeThenGiveUp() {
        let t = Self.t0
        #expect(EmailOutbox.nextAttempt(after: 1, at: t) == t.addingTimeInterval(5))
        #expect(EmailOutbox.nextAttempt(after: 5, at: t) == t.addingTimeInterval(300))
        #expect(EmailOutbox.nextAttempt(after: 6, at: t) == nil)
        #expect(EmailOutbox.retryDelays.reduce(0, +) < 900)
    }

    @Test func templatesFromAFolderReplaceTheBuiltInMailsAndCannotAddAHeader() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-templates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "Dein Code: {{code}}\nBcc: everyone@example.com".write(to: folder.appendingPathComponent("signin.subject"), atomically: true, encoding: .utf8)
        try "<a href=\"{{link}}\">{{address}}</a> {{code}} ({{minutes}} min)".write(
            to: folder.appendingPathComponent("signin.html"), atomically: true, encoding: .utf8)
        let values = EmailTemplates.Values(code: "123456", link: "https://id.example.com/e/t?a=1&b=<2>", minutes: 15,
                                           address: "ada@example.com")
        let custom = EmailTemplates(folder: folder.path).render(intent: "signin", origin: "lanyard", values: values)
        #expect(custom.subject == "Dein Code: 123456")
        #expect(custom.html == "<a href=\"https://id.example.com/e/t?a=1&amp;b=&lt;2&gt;\">ada@example.com</a> 123456 (15 min)")
        // The text part was not replaced: the built-in one, with the code and the link.
        #expect(custom.text.contains("123456") && custom.text.contains("https://id.example.com/e/t?a=1&b=<2>"))
        let builtIn = EmailTemplates(folder: nil).render(intent: "link", origin: "recovery", values: values)
        #expect(builtIn.subject == "Get back into your account")
    }
}
