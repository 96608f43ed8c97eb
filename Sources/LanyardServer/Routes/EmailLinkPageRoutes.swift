import Foundation
import Hummingbird
import LanyardCore
import LanyardSupport

/// `/e/{token}`: the page a mail's link opens (reference section 18). `GET` only shows it (mail scanners open
/// links, so it changes nothing); `POST` confirms with the number picked, which lets the device that asked finish.
/// The browser never gets a session: it is sent to the flow's `redirect_to` with `?flow_id=`, or told to return
/// to its device.
struct EmailLinkPageRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        router.get("e/:token", use: show)
        router.group("e").add(middleware: RateLimit(api, .signIn, per: .clientIP)).post(":token", use: confirm)
    }

    /// A form and no script; nothing from elsewhere; never framed (a page that confirms must not be clickjacked).
    static let policy = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"

    @Sendable func show(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let token = context.parameters.get("token") ?? ""
        switch try await EmailLinks(api.dependencies).view(token: token) {
        case .confirm(let choices, let intent, let requestedAt, let clientIP, let userAgent):
            return Self.page(status: .ok, title: "Is this you?", body: Self.form(
                token: token, choices: choices, intent: intent, requestedAt: requestedAt, clientIP: clientIP,
                userAgent: userAgent, notice: nil))
        case .unusable(let reason):
            return Self.unusable(reason)
        }
    }

    @Sendable func confirm(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let token = context.parameters.get("token") ?? ""
        let form = try await request.body.collect(upTo: 1024)
        let picked = Self.formValue("match", in: String(buffer: form)).flatMap { Int($0) }
        let links = EmailLinks(api.dependencies)
        switch try await links.confirm(token: token, picked: picked) {
        case .confirmed(let redirect):
            if let redirect {
                return Response(status: .seeOther, headers: [.location: redirect, .cacheControl: "no-store"])
            }
            return Self.page(status: .ok, title: "Return to your other device", body: """
                <h1>Done. Return to your other device</h1>\
                <p>The device that asked to sign in can continue now. You can close this page.</p>
                """)
        case .wrongNumber(let left):
            guard case .confirm(let choices, let intent, let requestedAt, let clientIP, let userAgent) =
                    try await links.view(token: token) else { return Self.unusable("flow_dead") }
            return Self.page(status: .unprocessableContent, title: "Is this you?", body: Self.form(
                token: token, choices: choices, intent: intent, requestedAt: requestedAt, clientIP: clientIP,
                userAgent: userAgent, notice: """
                    That is not the number on the device that asked. If you did not ask to sign in, close this page: \
                    nothing happens. \(left) \(left == 1 ? "try" : "tries") left.
                    """))
        case .unusable(let reason):
            return Self.unusable(reason)
        }
    }

    static func form(token: String, choices: [Int], intent: String, requestedAt: Date, clientIP: String?,
                     userAgent: String?, notice: String?) -> String {
        let action = switch intent {
        case "link": "add this email address to an account"
        case "reauthenticate": "confirm it's them"
        default: "sign in"
        }
        let device = [userAgent.map { "on \(HTML.escape(String($0.prefix(120))))" }, clientIP.map { "from \(HTML.escape($0))" }]
            .compactMap { $0 }.joined(separator: " ")
        let buttons = choices.map {
            "<button name=\"match\" value=\"\($0)\" type=\"submit\">\($0)</button>"
        }.joined()
        return """
            <h1>Is this you?</h1>\
            <p>A device asked to \(action) with this address at \(Timestamps.format(requestedAt)) UTC\(device.isEmpty ? "" : " " + device).</p>\
            \(notice.map { "<p class=\"notice\">\(HTML.escape($0))</p>" } ?? "")\
            <p>Pick the number that device shows. If you did not ask, close this page: nothing happens.</p>\
            <form method="post" action="/e/\(HTML.escape(token))">\(buttons)</form>
            """
    }

    static func unusable(_ reason: String) -> Response {
        let text = switch reason {
        case "expired": "This link has expired. Ask for a new one on your device."
        case "used": "This link was already used."
        case "flow_dead": "Too many wrong numbers were picked; this link no longer works. Ask for a new one."
        case "undeliverable": "This link no longer works. Ask for a new one."
        default: "This link is not valid. Check that you opened the whole link from the mail."
        }
        return page(status: reason == "unknown" ? .notFound : .gone, title: "Link unavailable",
                    body: "<h1>This link cannot be used</h1><p>\(text)</p>")
    }

    static func page(status: HTTPResponse.Status, title: String, body: String) -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">\
            <title>\(title)</title>\
            <style>body{font:17px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1d2330}\
            button{font-size:2rem;padding:.5rem 1.5rem;margin:.5rem;border-radius:.5rem;border:1px solid #8893a8;background:#fff}\
            .notice{color:#9b1c1c}</style></head><body>\(body)</body></html>
            """
        return Response(status: status,
                        headers: [.contentType: "text/html; charset=utf-8", .contentSecurityPolicy: policy,
                                  .cacheControl: "no-store", .init("Referrer-Policy")!: "no-referrer"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// One field of an `application/x-www-form-urlencoded` body.
    static func formValue(_ name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.first == name { return parts.count > 1 ? parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding : "" }
        }
        return nil
    }
}
