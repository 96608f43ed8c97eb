import AsyncHTTPClient
import Foundation
import LanyardSupport
import NIOCore
import Synchronization

/// What a provider's token endpoint answered for an authorization code.
public struct RedeemedCode: Sendable {
    public var idToken: String
    /// Apple's refresh token (its lifecycle keeps it, to revoke when the identity is detached).
    public var refreshToken: String?
}

/// A provider's token endpoint failed or answered nothing usable: the provider, not the person.
public struct TokenEndpointError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The provider side of redirect sign-in (reference section 23): where its pages are (an OpenID Connect discovery
/// document's endpoints, fetched by the key fetcher's rules and cached an hour) and the redemption of an
/// authorization code at its token endpoint, with a deadline.
public final class AuthorizationCodes: Sendable {
    let client: HTTPClient
    let fetcher: HTTPJWKSFetcher
    let timeout: TimeAmount
    private let endpoints = Mutex<[String: (authorization: String, token: String, until: Date)]>([:])

    public init(client: HTTPClient, timeout: TimeAmount = .seconds(10)) {
        self.client = client
        self.fetcher = HTTPJWKSFetcher(client: client, timeout: timeout)
        self.timeout = timeout
    }

    /// The provider's authorization and token endpoints.
    public func endpoints(_ redirect: RedirectClient, now: Date = Date()) async throws -> (authorization: String, token: String) {
        switch redirect.endpoints {
        case .given(let authorization, let token):
            return (authorization, token)
        case .discovery(let url):
            if let cached = endpoints.withLock({ $0[url] }), cached.until > now { return (cached.authorization, cached.token) }
            let (body, _) = try await fetcher.get(url, deadline: .now() + timeout)
            guard case .object(let document)? = try? JSONParser.parse(body),
                  let authorization = document["authorization_endpoint"]?.stringValue,
                  let token = document["token_endpoint"]?.stringValue,
                  HTTPJWKSFetcher.mayServeKeys(authorization, describedBy: url), HTTPJWKSFetcher.mayServeKeys(token, describedBy: url)
            else { throw TokenEndpointError("the discovery document names no https authorization and token endpoints") }
            endpoints.withLock { $0[url] = (authorization, token, now.addingTimeInterval(3600)) }
            return (authorization, token)
        }
    }

    /// Redeems `code` (single use) for the provider's tokens; throws `TokenEndpointError` when the endpoint fails
    /// or answers without an ID token.
    public func redeem(code: String, redirectURI: String, clientID: String, clientSecret: String,
                       tokenEndpoint: String) async throws -> RedeemedCode {
        var request = HTTPClientRequest(url: tokenEndpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: AppleServices.formEncoded([
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI,
            "client_id": clientID, "client_secret": clientSecret,
        ])))
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await client.execute(request, timeout: timeout)
            body = try await response.body.collect(upTo: 256 * 1024)
        } catch {
            throw TokenEndpointError("no answer from the token endpoint: \(type(of: error))")
        }
        guard response.status == .ok else { throw TokenEndpointError("HTTP \(response.status.code) from the token endpoint") }
        guard case .object(let members)? = try? JSONParser.parse(Array(body.readableBytesView)),
              let idToken = members["id_token"]?.stringValue else {
            throw TokenEndpointError("no id_token in the token endpoint's answer")
        }
        return RedeemedCode(idToken: idToken, refreshToken: members["refresh_token"]?.stringValue)
    }
}
