import Foundation
@testable import LanyardMail
import Testing

/// The text of a mail as it goes over SMTP: two parts, base64 bodies, headers nothing can add to.
@Suite struct MailMessageTests {
    static func message(subject: String = "Your sign-in code", to: String = "ada@example.com",
                        from: String = "Lanyard <no-reply@example.com>") -> MailMessage {
        MailMessage(from: from, to: to, subject: subject, text: "Code: 123456\n.\nend", html: "<p>Code: <b>123456</b></p>",
                    messageID: "ef_1@example.com", date: Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test func aMailHasATextAndAnHTMLPartAndItsHeaders() throws {
        let text = try Self.message().rendered(boundary: "b1")
        let lines = text.components(separatedBy: "\r\n")
        #expect(lines.contains("From: \"Lanyard\" <no-reply@example.com>"))
        #expect(lines.contains("To: <ada@example.com>"))
        #expect(lines.contains("Subject: Your sign-in code"))
        #expect(lines.contains("Message-ID: <ef_1@example.com>"))
        #expect(lines.contains("Date: Fri, 15 Jan 2027 08:00:00 +0000"))
        #expect(lines.contains("Content-Type: multipart/alternative; boundary=\"b1\""))
        #expect(lines.contains("Content-Type: text/plain; charset=utf-8") && lines.contains("Content-Type: text/html; charset=utf-8"))
        #expect(lines.last(where: { !$0.isEmpty }) == "--b1--")
        // No body line is a lone dot or longer than 76 characters: both parts are base64.
        #expect(lines.allSatisfy { $0 != "." && $0.count <= 78 })
        #expect(text.contains(Data("Code: 123456\n.\nend".utf8).base64EncodedString()))
    }

    @Test func aLineBreakInAnyHeaderIsRefused() {
        for message in [Self.message(subject: "Hi\r\nBcc: all@example.com"), Self.message(to: "a@example.com\nBcc: x"),
                        Self.message(from: "Lanyard <a@example.com>\r\nX: y")] {
            #expect(throws: MailMessage.HeaderInjection.self) { try message.rendered(boundary: "b") }
        }
    }

    @Test func nonASCIISubjectsAndNamesAreEncodedWords() throws {
        let text = try Self.message(subject: "Ihr Anmeldecode für Bücher", from: "Bücherei <no-reply@example.com>").rendered(boundary: "b")
        #expect(text.contains("Subject: =?UTF-8?B?\(Data("Ihr Anmeldecode für Bücher".utf8).base64EncodedString())?="))
        #expect(text.contains("From: =?UTF-8?B?\(Data("Bücherei".utf8).base64EncodedString())?= <no-reply@example.com>"))
    }
}
