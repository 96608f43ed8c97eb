import Foundation
import LanyardSupport
import NIOCore
import NIOHTTP1

/// The server under test: Lanyard, or the django-allauth peer, with the request shapes that match.
public enum Target: String, Sendable {
    case lanyard, allauth

    public func signInRequest(provider: String, token: String, audience: String, sessionToken: String? = nil,
                       process: String = "login") -> BenchRequest {
        switch self {
        case .lanyard:
            var request = BenchRequest(method: .POST, path: "/v1/auth/\(process == "login" ? "signin" : "link")/\(provider)",
                                       body: jsonBody(["id_token": token]))
            if let sessionToken { request.headers.append(("Authorization", "Bearer \(sessionToken)")) }
            return request
        case .allauth:
            var request = BenchRequest(method: .POST, path: "/_allauth/app/v1/auth/provider/token",
                                       body: jsonBody(["provider": provider, "process": process,
                                                   "token": ["client_id": audience, "id_token": token]]))
            if let sessionToken { request.headers.append(("X-Session-Token", sessionToken)) }
            return request
        }
    }

    public func meRequest(sessionToken: String) -> BenchRequest {
        switch self {
        case .lanyard: BenchRequest(method: .GET, path: "/v1/users/me", headers: [("Authorization", "Bearer \(sessionToken)")])
        case .allauth: BenchRequest(method: .GET, path: "/_allauth/app/v1/auth/session", headers: [("X-Session-Token", sessionToken)])
        }
    }

    /// The credential a sign-in answer carries: Lanyard's access token, allauth's session token.
    public func sessionToken(from body: ByteBuffer) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else { return nil }
        switch self {
        case .lanyard: return object["access_token"] as? String
        case .allauth: return (object["meta"] as? [String: Any])?["session_token"] as? String
        }
    }
}

/// `object` as JSON bytes, for a request body.
public func jsonBody(_ object: [String: Any]) -> [UInt8] {
    Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
}

/// Pre-built requests, one per iteration (sign-in scenarios, link).
public struct FixedRequests: Scenario, Sendable {
    public let name: String
    public let requests: [BenchRequest]

    public init(name: String, requests: [BenchRequest]) {
        self.name = name
        self.requests = requests
    }

    public func request(worker: Int, iteration: Int) -> BenchRequest? {
        iteration < requests.count ? requests[iteration] : nil
    }

    public func record(worker: Int, status: UInt, body: [UInt8]) -> Bool { status == 200 }
}

/// The same request for every iteration of a worker (`me`).
public struct RepeatedRequests: Scenario, Sendable {
    public let name: String
    public let perWorker: [BenchRequest]

    public init(name: String, perWorker: [BenchRequest]) {
        self.name = name
        self.perWorker = perWorker
    }

    public func request(worker: Int, iteration: Int) -> BenchRequest? { perWorker[worker % perWorker.count] }
    public func record(worker: Int, status: UInt, body: [UInt8]) -> Bool { status == 200 }
}

/// Each worker refreshes its own session and keeps the rotated token, as an app does on every launch.
/// Only the load generator's one thread touches it.
public final class RefreshChains: Scenario, @unchecked Sendable {
    public let name = "refresh"
    public private(set) var tokens: [String]

    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// The body and the answer are written and read with Lanyard's own JSON pieces, not Foundation's: the
    /// load generator shares the two cores with the server, and reading each answer with `JSONSerialization`
    /// cost it ~20 µs per refresh.
    public func request(worker: Int, iteration: Int) -> BenchRequest? {
        var body = JSONWriter(capacity: 96)
        body.object { json in
            json.key("refresh_token")
            json.string(tokens[worker])
        }
        return BenchRequest(method: .POST, path: "/v1/auth/refresh", body: body.bytes)
    }

    public func record(worker: Int, status: UInt, body: [UInt8]) -> Bool {
        guard status == 200, let next = JSONParser.parseObject(body)?["refresh_token"]?.stringValue else { return false }
        tokens[worker] = next
        return true
    }
}
