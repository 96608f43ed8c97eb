import AsyncHTTPClient
import Foundation
import LanyardBenchKit
import NIOCore
import NIOHTTP1

/// Group records against personal ones, and sign-in with groups (BENCHMARKS.md, "Groups"): each worker has an
/// account of its own and, for the group scenarios, a family of four it owns. Lanyard only.
enum GroupScenarios {
    static let names = ["data_write", "group_write", "data_read", "group_read", "signin_grouped"]

    static func make(_ name: String, label: String, level: Int, count: Int, setup: Setup,
                     google: TokenFactory) async throws -> any Scenario & Sendable {
        switch name {
        case "signin_grouped":
            // An existing account in three families, signing in again and again (against `signin_existing`).
            let sub = "grouped-\(label)"
            let owner = try await setup.bearer(google, sub: sub)
            for family in 0..<3 { _ = try await setup.family(of: owner, named: "f\(family)", members: 0, label: label) }
            let tokens = try await google.mintMany(count: count) { _ in sub }
            return FixedRequests(name: name, requests: tokens.map {
                setup.target.signInRequest(provider: "google", token: $0, audience: google.audience)
            })
        default:
            let grouped = name.hasPrefix("group")
            let writes = name.hasSuffix("write")
            var requests: [BenchRequest] = []
            for worker in 0..<level {
                let bearer = try await setup.bearer(google, sub: "\(name)-\(label)-\(worker)")
                var path = "/v1/data/bench/r\(worker)"
                if grouped {
                    let group = try await setup.family(of: bearer, named: "w\(worker)", members: 3, label: "\(label)-\(worker)")
                    path = "/v1/groups/\(group)/data/bench/r\(worker)"
                }
                let body = Array(#"{"data":{"title":"Buy milk","done":false,"n":1}}"#.utf8)
                let auth = [("Authorization", "Bearer \(bearer)"), ("Content-Type", "application/json")]
                if !writes { _ = try await setup.send(.PUT, path, bearer: bearer, body: body) }
                requests.append(writes ? BenchRequest(method: .PUT, path: path, headers: auth, body: body)
                                       : BenchRequest(method: .GET, path: path, headers: auth))
            }
            return RepeatedRequests(name: name, perWorker: requests)
        }
    }
}

extension Setup {
    /// A new (or existing) account's access token.
    func bearer(_ factory: TokenFactory, sub: String) async throws -> String {
        guard let token = target.sessionToken(from: try await signIn(factory, sub: sub)) else {
            throw BenchError("no session token")
        }
        return token
    }

    /// A family `owner` creates, with `members` more accounts joined by invite; its id.
    func family(of owner: String, named name: String, members: Int, label: String) async throws -> String {
        let created = try await send(.POST, "/v1/groups", bearer: owner, body: Array(#"{"name":"\#(name)"}"#.utf8))
        guard let group = created["id"] as? String else { throw BenchError("no group created") }
        for member in 0..<members {
            let invite = try await send(.POST, "/v1/groups/\(group)/invites", bearer: owner, body: Array("{}".utf8))
            guard let code = invite["code"] as? String else { throw BenchError("no invite") }
            let joiner = try await bearer(google, sub: "member-\(label)-\(name)-\(member)")
            _ = try await send(.POST, "/v1/invites/\(code)/accept", bearer: joiner, body: nil)
        }
        return group
    }

    /// A request made before a timed phase; its JSON answer.
    func send(_ method: HTTPMethod, _ path: String, bearer: String, body: [UInt8]?) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let answer = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw BenchError("setup \(method) \(path) failed: \(response.status) \(String(buffer: answer))")
        }
        return (try? JSONSerialization.jsonObject(with: Data(answer.readableBytesView)) as? [String: Any]) ?? [:]
    }
}
