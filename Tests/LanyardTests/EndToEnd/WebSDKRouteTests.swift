import Foundation
import LanyardWire
import Testing

/// `GET /sdk/lanyard.js`: the web SDK (reference section 22) served by the server, the repository's one copy of it, to
/// pages of any origin, cached and revalidated.
@Suite struct WebSDKRouteTests {
    static let module = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/LanyardServer/Resources/sdk/lanyard.js")

    @Test func theServerServesTheWebSDKToAnyOriginWithItsVersionAndAnETag() async throws {
        try await TestServer.with(.sqlite, configure: { $0.corsOrigins = ["https://app.example.com"] }) { server in
            let answer = try await server.request(.GET, "/sdk/lanyard.js", headers: ["Origin": "https://elsewhere.example"])
            #expect(answer.status == 200)
            let file = try Data(contentsOf: Self.module)
            #expect(answer.body == file, "the served module is the repository's file")
            #expect(answer.text.contains("export const version = \"\(LanyardVersion.current)\";"))
            #expect(answer.headers.first(name: "Content-Type") == "text/javascript; charset=utf-8")
            #expect(answer.headers.first(name: "Access-Control-Allow-Origin") == "*", "public code: a page of any origin imports it")
            #expect(answer.headers.first(name: "Cache-Control") == "public, max-age=3600")
            #expect(answer.headers.first(name: "X-Lanyard-Version") == LanyardVersion.current)
            let etag = try #require(answer.headers.first(name: "ETag"))
            #expect(etag.hasPrefix("\"\(LanyardVersion.current)-"))

            let unchanged = try await server.request(.GET, "/sdk/lanyard.js", headers: ["If-None-Match": etag])
            #expect(unchanged.status == 304)
            #expect(unchanged.body.isEmpty)
            #expect(unchanged.headers.first(name: "ETag") == etag)
            let stale = try await server.request(.GET, "/sdk/lanyard.js", headers: ["If-None-Match": "\"0.0.0-00\""])
            #expect(stale.status == 200)
            #expect(stale.body.count == answer.body.count)
        }
    }
}
