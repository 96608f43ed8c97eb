import Hummingbird
import LanyardCore

/// `GET /join/{code}`: where an invite's link lands when it opens in a browser rather than in the app (reference
/// section 14). It shows the code to type into the app, and nothing about the group: previewing needs a signed-in
/// account. Apps that claim the link as a universal link (or an Android App Link) never show it.
struct JoinPageRoutes {
    func register(on router: Router<LanyardRequestContext>) {
        router.get("join/:code", use: page)
    }

    /// No script, no outside resources, no framing.
    static let policy = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"

    @Sendable func page(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        // Shown only when it can be a code: the page never echoes anything else it was given.
        let code = InviteCode.normalize(try context.parameters.require("code")).map(Self.display)
        let body = """
            <!doctype html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>You're invited</title>\
            <style>body{font:17px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1d2330}\
            code{font-size:2rem;letter-spacing:.15em;display:block;margin:1.5rem 0}</style></head><body>\
            <h1>You're invited to join a group</h1>\
            \(code.map { "<p>Open the app on your phone, choose <em>Join with a code</em>, and enter:</p><code>\($0)</code>" }
                ?? "<p>This invite link is not complete. Ask for a new one.</p>")\
            <p>Codes expire, and work for the number of people they were made for.</p></body></html>
            """
        return Response(status: code == nil ? .notFound : .ok,
                        headers: [.contentType: "text/html; charset=utf-8", .contentSecurityPolicy: Self.policy,
                                  .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    /// `K7QMX2XPDA` as `K7QMX-2XPDA`.
    static func display(_ normalized: String) -> String {
        String(normalized.prefix(5)) + "-" + String(normalized.dropFirst(5))
    }
}
