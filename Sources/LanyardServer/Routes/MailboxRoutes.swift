import Foundation
import Hummingbird
import LanyardCore
import LanyardSupport
import LanyardWire

/// `GET /_emulator/mail?to=` (dev mode): the mails `lanyard dev` kept instead of sending them, newest first, as
/// JSON (code, link and the rendered text), or as a page for a browser (reference section 18).
struct MailboxRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        router.get("_emulator/mail", use: mailbox)
    }

    @Sendable func mailbox(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let query = AdminQuery(request)
        let mails = try await EmailOutbox(api.dependencies).mailbox(to: query.string("to"), limit: 50)
        guard request.headers[.accept]?.contains("text/html") == true else {
            return try JSONResponse.make(mails, headers: [.cacheControl: "no-store"])
        }
        let escape = HTML.escape
        let rows = mails.map { mail in
            """
            <article><h2>\(escape(mail.subject))</h2><p class="meta">to \(escape(mail.to)) · \(escape(mail.intent)) · \
            \(mail.createdAt.formatted(Date.ISO8601FormatStyle()))</p><p class="code">\(escape(mail.code))</p>\
            \(mail.link.map { "<p><a href=\"\(escape($0))\">\(escape($0))</a></p>" } ?? "")\
            <pre>\(escape(mail.text))</pre></article>
            """
        }.joined()
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">\
            <title>Mailbox · Lanyard emulator</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:48rem;\
            margin:2rem auto;padding:0 1rem}article{border:1px solid #ccd;border-radius:.5rem;padding:0 1rem;margin:1rem 0}\
            .code{font-size:1.6rem;letter-spacing:.2em;font-weight:bold}.meta{color:#667}pre{white-space:pre-wrap}</style>\
            </head><body><h1>Mailbox</h1><p>Mails <code>lanyard dev</code> kept instead of sending (newest first).</p>\
            \(rows.isEmpty ? "<p>No mail yet.</p>" : rows)</body></html>
            """
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                                               .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
