import AsyncHTTPClient
import Foundation
import LanyardSupport
import NIOCore

/// Apple's token endpoints (`/auth/token`, `/auth/revoke`) at `baseURL`: Apple's own, or the emulator's.
public struct AppleServices: Sendable {
    let client: HTTPClient
    let baseURL: String

    public init(client: HTTPClient, baseURL: String) {
        self.client = client
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
    }

    /// Redeems a single-use authorization code for Apple's refresh token.
    public func redeem(code: String, clientID: String, clientSecret: String) async throws -> String {
        let body = try await post("/auth/token", ["client_id": clientID, "client_secret": clientSecret,
                                                  "grant_type": "authorization_code", "code": code])
        guard case .object(let members)? = try? JSONParser.parse(body), let token = members["refresh_token"]?.stringValue
        else { throw AppleServicesError("no refresh_token in Apple's answer") }
        return token
    }

    /// Revokes a refresh token; succeeds only on Apple's 200.
    public func revoke(refreshToken: String, clientID: String, clientSecret: String) async throws {
        _ = try await post("/auth/revoke", ["client_id": clientID, "client_secret": clientSecret, "token": refreshToken,
                                            "token_type_hint": "refresh_token"])
    }

    private func post(_ path: String, _ form: [String: String]) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: Self.formEncoded(form)))
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 256 * 1024)
        guard response.status == .ok else { throw AppleServicesError("HTTP \(response.status.code) from \(path)") }
        return Array(body.readableBytesView)
    }

    static func formEncoded(_ form: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return form.keys.sorted().map { key in
            "\(key)=\(form[key]!.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}

public struct AppleServicesError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
