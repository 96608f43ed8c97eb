import AsyncHTTPClient
import Foundation
import LanyardSupport
import NIOCore
import NIOHTTP1

/// A fetched key set and how long the provider says it may be cached.
public struct FetchedJWKS: Sendable {
    public var keys: JWKS
    public var maxAge: TimeInterval?

    public init(keys: JWKS, maxAge: TimeInterval?) {
        self.keys = keys
        self.maxAge = maxAge
    }
}

public protocol JWKSFetching: Sendable {
    func fetch(url: String) async throws -> FetchedJWKS
}

/// Fetches key sets over HTTP(S) with AsyncHTTPClient.
public struct HTTPJWKSFetcher: JWKSFetching {
    let client: HTTPClient
    let timeout: TimeAmount

    public init(client: HTTPClient, timeout: TimeAmount = .seconds(5)) {
        self.client = client
        self.timeout = timeout
    }

    public func fetch(url: String) async throws -> FetchedJWKS {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await client.execute(request, timeout: timeout)
        guard response.status == .ok else {
            throw JWKSFetchError("HTTP \(response.status.code)")
        }
        let body = try await response.body.collect(upTo: 1 << 20)
        guard let keys = JWKS.decodeLeniently(Array(body.readableBytesView)) else {
            throw JWKSFetchError("not a JSON Web Key Set")
        }
        let maxAge = response.headers["Cache-Control"].first.flatMap(Self.maxAge(fromCacheControl:))
        return FetchedJWKS(keys: keys, maxAge: maxAge)
    }

    /// The `max-age` directive of a `Cache-Control` value, in seconds.
    public static func maxAge(fromCacheControl value: String) -> TimeInterval? {
        for directive in value.split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Int(parts[1]), seconds >= 0 {
                return TimeInterval(seconds)
            }
        }
        return nil
    }
}

struct JWKSFetchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
