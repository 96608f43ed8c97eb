import Foundation
import HTTPTypes
import Hummingbird

/// The operators' console at `/admin`: three static files served by Lanyard itself, no external assets, under
/// a Content-Security-Policy that allows nothing but this origin's script and style (no inline script). The
/// page talks to `/v1/admin/*` with the key the operator types, kept in the tab's `sessionStorage` only.
struct ConsoleRoutes {
    static let files: [String: (name: String, ext: String, type: String)] = [
        "admin": ("index", "html", "text/html; charset=utf-8"),
        "admin/console.js": ("console", "js", "text/javascript; charset=utf-8"),
        "admin/console.css": ("console", "css", "text/css; charset=utf-8"),
    ]
    static let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    func register(on router: Router<LanyardRequestContext>) {
        for (path, file) in Self.files {
            guard let url = Bundle.module.url(forResource: file.name, withExtension: file.ext, subdirectory: "console"),
                  let contents = try? Data(contentsOf: url) else { continue }
            let bytes = Array(contents)
            router.get(RouterPath(path)) { _, _ in
                Response(status: .ok, headers: [.contentType: file.type, .contentSecurityPolicy: Self.policy,
                                                .xContentTypeOptions: "nosniff", .referrerPolicy: "no-referrer",
                                                .cacheControl: "no-cache"],
                         body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
}
