import Foundation
import HTTPTypes
import Hummingbird
import LanyardSupport
import LanyardWire

/// `GET /sdk/lanyard.js`: the web SDK (reference section 22), the very file of `SDKs/web`, served by every Lanyard so a
/// page imports the SDK of the server it talks to. Public code: any origin may load it (`Access-Control-Allow-Origin:
/// *`, which a module script from another origin needs), and it carries no credentials. Cached for an hour and
/// revalidated by its ETag (the server's version and the file's hash), so an upgraded server's SDK reaches pages soon.
struct SDKRoutes {
    static let cacheControl = "public, max-age=3600"

    func register(on router: Router<LanyardRequestContext>) {
        guard let url = Bundle.module.url(forResource: "lanyard", withExtension: "js", subdirectory: "sdk"),
              let contents = try? Data(contentsOf: url) else { return }
        let bytes = Array(contents)
        let etag = "\"\(LanyardVersion.current)-\(Hashing.sha256(bytes).prefix(8).map { String(format: "%02x", $0) }.joined())\""
        let headers: HTTPFields = [.contentType: "text/javascript; charset=utf-8", .cacheControl: Self.cacheControl,
                                   .eTag: etag, .accessControlAllowOrigin: "*", .xContentTypeOptions: "nosniff",
                                   .lanyardVersion: LanyardVersion.current]
        router.get("sdk/lanyard.js") { request, _ in
            if let presented = request.headers[.ifNoneMatch], presented.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == etag || $0.trimmingCharacters(in: .whitespaces) == "*"
            }) {
                return Response(status: .notModified, headers: headers)
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}

extension HTTPField.Name {
    static let lanyardVersion = Self("X-Lanyard-Version")!
}
