import Foundation
import LanyardSupport
import Testing

/// The email identity's subject (reference section 18): one form per address, and every address that could
/// smuggle a header refused.
@Suite struct EmailAddressTests {
    @Test func addressesAreLowerCasedWithTheDomainInItsASCIIForm() throws {
        #expect(try EmailAddress("Ada.Lovelace+apps@Example.COM").value == "ada.lovelace+apps@example.com")
        #expect(try EmailAddress("joerg@Bücher.example").value == "joerg@xn--bcher-kva.example")
        #expect(try EmailAddress("a@münchen.de.").value == "a@xn--mnchen-3ya.de")
        #expect(try EmailAddress("ok@xn--bcher-kva.example").value == "ok@xn--bcher-kva.example")
        // Composed and decomposed ü are one address.
        #expect(try EmailAddress("a@bu\u{308}cher.example") == EmailAddress("a@b\u{fc}cher.example"))
    }

    @Test func punycodeMatchesRFC3492() {
        #expect(Punycode.encode("bücher") == "bcher-kva")
        #expect(Punycode.encode("münchen") == "mnchen-3ya")
        // RFC 3492 section 7.1 (L): Japanese.
        #expect(Punycode.encode("3年B組金八先生") == "3B-ww4c5e180e575a65lsy2b")
        #expect(Punycode.encode("ليهمابتكلموشعربي؟") == "egbpdaj6bu4bxfgehfvwxn")
        #expect(Punycode.asciiLabel("example") == "example")
    }

    @Test func linesBreaksAndOtherControlCharactersAreRefused() {
        for text in ["ada@example.com\r\nBcc: x@example.com", "ada@example.com\n", "ada\r@example.com", "a\u{0}@example.com",
                     "a@example.com\u{2028}"] {
            #expect(throws: EmailAddress.Problem.controlCharacter) { try EmailAddress(text) }
        }
    }

    @Test func malformedAndOverlongAddressesAreRefused() {
        #expect(throws: EmailAddress.Problem.empty) { try EmailAddress("") }
        for text in ["ada", "@example.com", "ada@", "a@b@example.com"] {
            #expect(throws: EmailAddress.Problem.shape) { try EmailAddress(text) }
        }
        for text in [".a@example.com", "a.@example.com", "a..b@example.com", "a b@example.com", "ädä@example.com",
                     "\"quoted\"@example.com", String(repeating: "a", count: 65) + "@example.com"] {
            #expect(throws: EmailAddress.Problem.localPart) { try EmailAddress(text) }
        }
        for text in ["a@localhost", "a@-example.com", "a@example-.com", "a@exa_mple.com", "a@example..com",
                     "a@" + String(repeating: "x", count: 64) + ".com"] {
            #expect(throws: EmailAddress.Problem.domain) { try EmailAddress(text) }
        }
        let long = String(repeating: "a", count: 60) + "@" + (0..<4).map { _ in String(repeating: "b", count: 60) }.joined(separator: ".")
        #expect(throws: EmailAddress.Problem.tooLong) { try EmailAddress(long) }
        #expect(throws: EmailAddress.Problem.tooLong) { try EmailAddress(String(repeating: "a", count: 2000)) }
    }

    @Test func smtpURLsInsistOnTLSAndHideThePassword() throws {
        let starttls = try #require(SMTPEndpoint(url: "smtp://mailer:p%40ss@smtp.example.com"))
        #expect(starttls.security == .startTLS && starttls.port == 587 && starttls.password == "p@ss")
        #expect(starttls.description == "smtp://mailer:***@smtp.example.com:587")
        #expect(SMTPEndpoint(url: "smtps://smtp.example.com")?.port == 465)
        #expect(SMTPEndpoint(url: "smtp+insecure://127.0.0.1:2525")?.security == SMTPEndpoint.Security.none)
        #expect(SMTPEndpoint(url: "smtp+insecure://smtp.example.com:25") == nil)
        #expect(SMTPEndpoint(url: "http://smtp.example.com") == nil)
        let config = try? LanyardConfiguration.load(environment: ["LANYARD_SMTP_URL": "smtp://smtp.example.com"])
        #expect(config == nil, "LANYARD_EMAIL_FROM is required outside dev mode")
        let dev = try LanyardConfiguration.load(environment: ["LANYARD_DEV": "1"])
        #expect(dev.offersEmail && dev.email.smtp == nil)
        #expect(!(try LanyardConfiguration.load(environment: [:])).offersEmail)
    }
}
