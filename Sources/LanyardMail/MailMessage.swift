import Foundation
import LanyardSupport

/// One mail as it goes over SMTP: `multipart/alternative` with a text and an HTML part, each base64 (so no line of
/// the body can be a lone "." or longer than SMTP allows), a `Message-ID` and a `Date`. Header values that hold a
/// line break are refused: nothing a person typed can add a header.
public struct MailMessage: Sendable, Equatable {
    public var from: String
    public var to: String
    public var subject: String
    public var text: String
    public var html: String
    public var messageID: String
    public var date: Date

    public init(from: String, to: String, subject: String, text: String, html: String, messageID: String, date: Date) {
        (self.from, self.to, self.subject, self.text, self.html, self.messageID, self.date) =
            (from, to, subject, text, html, messageID, date)
    }

    public struct HeaderInjection: Error, CustomStringConvertible {
        public let header: String
        public var description: String { "the \(header) header holds a line break" }
    }

    /// The message's lines, CRLF-terminated, ready for `DATA` (before dot-stuffing, which base64 bodies never need
    /// but the writer applies anyway).
    public func rendered(boundary: String) throws -> String {
        for (name, value) in [("From", from), ("To", to), ("Subject", subject), ("Message-ID", messageID)]
        where value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
            throw HeaderInjection(header: name)
        }
        var lines = [
            "From: \(Self.encodedPhrase(from))",
            "To: <\(to)>",
            "Subject: \(Self.encodedWord(subject))",
            "Date: \(Self.rfc5322Date(date))",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += ["--\(boundary)", "Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", ""]
            lines += Self.base64Lines(body)
        }
        lines.append("--\(boundary)--")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// ASCII text as is; anything else as an RFC 2047 encoded word.
    static func encodedWord(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 }) { return text }
        return "=?UTF-8?B?\(Data(text.utf8).base64EncodedString())?="
    }

    /// `Name <address>` with a non-ASCII name encoded; a bare address as `<address>`.
    static func encodedPhrase(_ mailbox: String) -> String {
        guard let open = mailbox.lastIndex(of: "<") else { return "<\(mailbox)>" }
        let name = mailbox[..<open].trimmingCharacters(in: .whitespaces)
        let address = mailbox[open...]
        if name.isEmpty { return String(address) }
        let quoted = name.unicodeScalars.allSatisfy { $0.isASCII } ? "\"\(name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\"" : encodedWord(name)
        return "\(quoted) \(address)"
    }

    static func base64Lines(_ body: String) -> [String] {
        let encoded = Data(body.utf8).base64EncodedString()
        var lines: [String] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[index..<end]))
            index = end
        }
        return lines
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
