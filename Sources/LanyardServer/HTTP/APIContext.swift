import HTTPTypes
import Hummingbird
import LanyardProviders
import LanyardCore
import LanyardSupport
import Logging

/// What every route handler shares: the core services, and how to read the caller and the client.
struct APIContext: Sendable {
    let dependencies: CoreDependencies
    let trustedProxies: [CIDR]
    let metrics: ServerMetrics
    /// Redeems Apple authorization codes, when Apple's lifecycle is configured.
    let apple: AppleLifecycle?

    /// Redeems an Apple `authorization_code` sent with a successful sign-in, link or re-authentication, in the
    /// background: the answer never waits for Apple, and a failure is logged and counted, not answered.
    func redeemAppleCode(_ code: String?, provider: Provider, idToken: String, nonce: String?, logger: Logger) {
        guard let code, !code.isEmpty, provider == .apple, let apple else { return }
        let metrics = self.metrics
        Task {
            let redeemed = await apple.redeem(code: code, idToken: idToken, nonce: nonce)
            metrics.recordAppleCodeRedemption(redeemed ? "stored" : "failed")
            if !redeemed { logger.warning("could not redeem an Apple authorization code; the next one sent will be tried") }
        }
    }

    func client(_ request: Request, _ context: LanyardRequestContext) -> ClientInfo {
        ClientInfo(ip: ClientAddress.resolve(peer: context.peerAddress, forwardedFor: request.headers[.xForwardedFor],
                                             trustedProxies: trustedProxies),
                   userAgent: request.headers[.userAgent])
    }

    /// The bearer token of the `Authorization` header, if any; `UNAUTHORIZED` when malformed.
    func bearerToken(_ request: Request) throws -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw LanyardError.unauthorized("The Authorization header must be 'Bearer <access token>'")
        }
        // Byte-level trim: Foundation's trimmingCharacters bridges a 600-byte token through NSString.
        let bytes = Array(parts[1].utf8)
        var start = 0, end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// The authenticated caller; `UNAUTHORIZED` without a valid bearer of an active session.
    func caller(_ request: Request) async throws -> Caller {
        guard let token = try bearerToken(request) else { throw LanyardError.unauthorized }
        return try await Authenticator(dependencies).authenticate(bearer: token)
    }

    /// `caller` and the caller's account, read in one query.
    func callerReadingAccount(_ request: Request) async throws -> (Caller, UserView) {
        guard let token = try bearerToken(request) else { throw LanyardError.unauthorized }
        return try await Authenticator(dependencies).authenticateReadingAccount(bearer: token)
    }

    func provider(_ context: LanyardRequestContext) throws -> Provider {
        try dependencies.providerTokens.provider(named: context.parameters.get("provider") ?? "")
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
