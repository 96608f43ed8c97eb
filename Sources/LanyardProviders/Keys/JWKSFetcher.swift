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

    /// - Parameter timeout: for the whole fetch; under the 5 s within which a sign-in without usable keys must
    ///   answer `PROVIDER_UNAVAILABLE`.
    public init(client: HTTPClient, timeout: TimeAmount = .seconds(2)) {
        self.client = client
        self.timeout = timeout
    }

    public func fetch(url: String) async throws -> FetchedJWKS {
        // One deadline for the whole fetch, discovery included: a server that sends its head and then trickles is
        // cut too.
        let deadline = NIODeadline.now() + timeout
        var keysURL = url
        if url.hasSuffix(Self.discoverySuffix) {
            let (document, _) = try await get(url, deadline: deadline)
            guard let jwksURI = JSONParser.parseObject(document)?["jwks_uri"]?.stringValue else {
                throw JWKSFetchError("the discovery document names no jwks_uri")
            }
            // http only where the issuer itself is on this machine: a document from elsewhere cannot send the
            // fetch to a service on the server's own loopback.
            guard Self.mayServeKeys(jwksURI, describedBy: url) else {
                throw JWKSFetchError("the discovery document's jwks_uri is not https: \(jwksURI)")
            }
            keysURL = jwksURI
        }
        let (body, headers) = try await get(keysURL, deadline: deadline)
        guard let keys = JWKS.decodeLeniently(body) else {
            throw JWKSFetchError("not a JSON Web Key Set")
        }
        let maxAge = headers["Cache-Control"].first.flatMap(Self.maxAge(fromCacheControl:))
        return FetchedJWKS(keys: keys, maxAge: maxAge)
    }

    /// How an OpenID Connect discovery document's URL ends; such a URL is followed to its `jwks_uri`.
    public static let discoverySuffix = "/.well-known/openid-configuration"

    /// Whether a discovery document at `discovery` may name `jwksURI`: https, or http when both are on loopback.
    static func mayServeKeys(_ jwksURI: String, describedBy discovery: String) -> Bool {
        guard let keys = URL(string: jwksURI), keys.host != nil else { return false }
        if keys.scheme == "https" { return true }
        return keys.scheme == "http" && OIDCProviderConfiguration.isSecureOrLocal(jwksURI)
            && URL(string: discovery).map { $0.scheme == "http" && OIDCProviderConfiguration.isLoopback($0.host ?? "") } == true
    }

    /// Where a redirect from `url` may lead: the same scheme, host and port only (keys come only from where they
    /// were configured), at most `maximumRedirects` times.
    static func redirectTarget(_ location: String, from url: String) -> String? {
        guard let base = URL(string: url), let target = URL(string: location, relativeTo: base)?.absoluteURL,
              target.scheme == base.scheme, target.host == base.host, target.port == base.port else { return nil }
        return target.absoluteString
    }

    static let maximumRedirects = 3

    func get(_ url: String, deadline: NIODeadline) async throws -> ([UInt8], HTTPHeaders) {
        var url = url
        var response: HTTPClientResponse
        var redirects = 0
        while true {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            // The client follows no redirect itself (`LanyardRuntime`): each is checked here.
            response = try await client.execute(request, deadline: deadline)
            guard [301, 302, 303, 307, 308].contains(response.status.code) else { break }
            guard redirects < Self.maximumRedirects, let location = response.headers["Location"].first,
                  let next = Self.redirectTarget(location, from: url) else {
                throw JWKSFetchError("HTTP \(response.status.code) from \(url) redirects elsewhere; keys are fetched only from the configured scheme and host")
            }
            redirects += 1
            url = next
        }
        guard response.status == .ok else {
            throw JWKSFetchError("HTTP \(response.status.code) from \(url)")
        }
        let answer = response
        let body = try await withThrowingTaskGroup(of: ByteBuffer.self) { group in
            group.addTask { try await answer.body.collect(upTo: 1 << 20) }
            group.addTask {
                try await Task.sleep(for: .nanoseconds(max(0, (deadline - .now()).nanoseconds)))
                throw JWKSFetchError("no complete answer within the timeout")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
        return (Array(body.readableBytesView), answer.headers)
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
