import Foundation
import LanyardStore
import LanyardSupport

/// The mails Lanyard sends, one per intent, with a text and an HTML part. Built in; a folder
/// (`LANYARD_EMAIL_TEMPLATES`) may replace any of `{intent}.subject`, `{intent}.txt`, `{intent}.html`, where
/// `{{code}}`, `{{link}}`, `{{match}}`, `{{minutes}}` and `{{address}}` are filled in (HTML-escaped in `.html`).
struct EmailTemplates: Sendable {
    let folder: String?

    struct Values {
        var code: String
        var link: String?
        var minutes: Int
        var address: String
    }

    func render(intent: String, origin: String, values: Values) -> (subject: String, text: String, html: String) {
        let name = origin == "recovery" ? "recovery" : intent
        let builtIn = Self.builtIn(name, values: values)
        // One line: a template cannot add a header.
        let subject = custom(name, "subject").flatMap { fill($0, values, html: false).split(whereSeparator: \.isNewline).first }
            .map(String.init)
        return (subject ?? builtIn.subject,
                custom(name, "txt").map { fill($0, values, html: false) } ?? builtIn.text,
                custom(name, "html").map { fill($0, values, html: true) } ?? builtIn.html)
    }

    private func custom(_ name: String, _ ext: String) -> String? {
        guard let folder else { return nil }
        return try? String(contentsOfFile: "\(folder)/\(name).\(ext)", encoding: .utf8)
    }

    private func fill(_ template: String, _ values: Values, html: Bool) -> String {
        func escape(_ text: String) -> String { html ? HTML.escape(text) : text }
        return template
            .replacingOccurrences(of: "{{code}}", with: values.code)
            .replacingOccurrences(of: "{{link}}", with: escape(values.link ?? ""))
            .replacingOccurrences(of: "{{minutes}}", with: String(values.minutes))
            .replacingOccurrences(of: "{{address}}", with: escape(values.address))
    }

    private static func builtIn(_ name: String, values: Values) -> (subject: String, text: String, html: String) {
        let (subject, lead) = switch name {
        case "link": ("Add this email address to your account", "Use this code to add \(values.address) to your account:")
        case "reauthenticate": ("Confirm it's you", "Use this code to confirm it's you:")
        case "recovery": ("Get back into your account", "Someone who runs this app sent you a way back in. Open the app, choose \"Sign in with email\", and enter:")
        default: ("Your sign-in code", "Use this code to sign in:")
        }
        var text = "\(lead)\n\n    \(values.code)\n\n"
        var html = "<!doctype html><html><body style=\"font-family:sans-serif\"><p>\(HTML.escape(lead))</p>"
            + "<p style=\"font-size:28px;letter-spacing:4px;font-weight:bold\">\(values.code)</p>"
        if let link = values.link {
            text += "Or open this link and type the number shown on the device you are signing in on:\n\n\(link)\n\n"
            html += "<p>Or <a href=\"\(HTML.escape(link))\">open this link</a> and type the number shown on the device you are signing in on.</p>"
        }
        text += "The code expires in \(values.minutes) minutes. If you did not ask for it, ignore this mail: nothing happens without the code.\n"
        html += "<p style=\"color:#666\">The code expires in \(values.minutes) minutes. If you did not ask for it, ignore this mail: nothing happens without the code.</p></body></html>"
        return (subject, text, html)
    }
}
