import Foundation
import Hummingbird
import LanyardCore
import LanyardSupport

/// `/e/{token}`: the page a mail's link opens (reference sections 18 and 25). `GET` only shows it (mail scanners open
/// links, so it changes nothing); `POST` confirms with the number the asking device shows, typed in, which lets
/// that device finish. One number per link: a wrong one ends the link (the mail's code still works); an empty or
/// unreadable form changes nothing. The browser never gets a session: it is sent to the flow's `redirect_to` with
/// `?flow_id=`, or told to return to its device.
struct EmailLinkPageRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        router.get("e/:token", use: show)
        router.group("e").add(middleware: RateLimit(api, .signIn, per: .clientIP)).post(":token", use: confirm)
    }

    @Sendable func show(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let token = try context.parameters.require("token")
        switch try await EmailLinks(api.dependencies).view(token: token) {
        case .confirm(let asked):
            return page(status: .ok, title: "Is this you?", body: form(token: token, asked, notice: nil),
                        redirectTo: asked.redirectTo)
        case .unusable(let reason):
            return unusable(reason)
        }
    }

    @Sendable func confirm(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let token = try context.parameters.require("token")
        let typed = try await FormBody.read(request, upTo: 1024)["match"]
        switch try await EmailLinks(api.dependencies).confirm(token: token, typed: typed) {
        case .confirmed(let redirect):
            if let redirect {
                return Response(status: .seeOther, headers: [.location: redirect, .cacheControl: "no-store"])
            }
            return page(status: .ok, title: "Return to your other device", body: """
                <h1>Done. Return to your other device</h1>\
                <p>The device that asked can continue now. You can close this page.</p>
                """)
        case .unreadable(let asked):
            return page(status: .unprocessableContent, title: "Is this you?", body: self.form(
                token: token, asked, notice: "Type the two-digit number the device that asked shows."),
                redirectTo: asked.redirectTo)
        case .linkEnded:
            return page(status: .gone, title: "Link ended", body: """
                <h1>That is not the number</h1>\
                <p>This link no longer works. If you asked to sign in, type the 6-digit code from the mail on your \
                device, or start again there. If you did not ask, nothing happens: you can close this page.</p>
                """)
        case .unusable(let reason):
            return unusable(reason)
        }
    }

    func form(token: String, _ asked: EmailLinks.Request, notice: String?) -> String {
        let action = switch asked.intent {
        case "link": "add this email address to an account"
        case "reauthenticate": "confirm it's them"
        default: "sign in"
        }
        let device = DeviceNames.describe(userAgent: asked.userAgent).map { "(\(HTML.escape($0))) " } ?? ""
        let when = DeviceNames.describe(time: asked.requestedAt, now: api.dependencies.clock.now())
        return """
            <h1>Is this you?</h1>\
            <p>A device \(device)asked to \(action) with this address \(HTML.escape(when)).</p>\
            \(notice.map { "<p class=\"notice\">\(HTML.escape($0))</p>" } ?? "")\
            <form method="post" action="/e/\(HTML.escape(token))">\
            <label for="match">Type the number that device shows</label>\
            <input id="match" name="match" inputmode="numeric" pattern="[0-9]{2}" maxlength="2" autocomplete="off" \
            required autofocus><button type="submit">Confirm</button></form>\
            <p>If you did not ask, close this page: nothing happens.</p>
            """
    }

    func unusable(_ reason: String) -> Response {
        let text = switch reason {
        case "expired": "This link has expired. Ask for a new one on your device."
        case "used": "This link was already used."
        case "flow_dead": "Too many wrong codes were typed; this link no longer works. Ask for a new one."
        case "link_ended": "A wrong number was typed on this page; the link no longer works. Use the code from the mail or ask for a new one."
        case "undeliverable": "This link no longer works. Ask for a new one."
        default: "This link is not valid. Check that you opened the whole link from the mail."
        }
        return page(status: reason == "unknown" ? .notFound : .gone, title: "Link unavailable",
                    body: "<h1>This link cannot be used</h1><p>\(text)</p>")
    }

    /// A form and no script; nothing from elsewhere; never framed (a page that confirms must not be clickjacked).
    /// The form may post only here, and the answer may send the browser on only to the flow's `redirect_to`.
    static func policy(redirectTo: String?) -> String {
        let targets = ["'self'"] + (redirectTo.flatMap(EmailSettings.formActionSource).map { [$0] } ?? [])
        return "default-src 'none'; style-src 'unsafe-inline'; form-action \(targets.joined(separator: " ")); frame-ancestors 'none'"
    }

    func page(status: HTTPResponse.Status, title: String, body: String, redirectTo: String? = nil) -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">\
            <title>\(title)</title>\
            <style>body{font:17px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1d2330}\
            label{display:block;margin:1rem 0 .5rem}input{font-size:2rem;width:4ch;padding:.25rem .5rem;letter-spacing:.2em}\
            button{font-size:1.25rem;padding:.5rem 1.5rem;margin:.5rem;border-radius:.5rem;border:1px solid #8893a8;background:#fff}\
            .notice{color:#9b1c1c}</style></head><body>\(body)</body></html>
            """
        return Response(status: status,
                        headers: [.contentType: "text/html; charset=utf-8", .contentSecurityPolicy: Self.policy(redirectTo: redirectTo),
                                  .cacheControl: "no-store", .init("Referrer-Policy")!: "no-referrer"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
