import _CryptoExtras
import Crypto
import Foundation
import Hummingbird
import JWTKit
import LanyardSupport
import Synchronization

/// An OpenID Connect issuer of the test's own, not the emulator: its own keys (RSA and P-256), its discovery
/// document and key set on a loopback port, shaped like a Keycloak realm, and its tokens signed by Vapor's
/// jwt-kit, so neither the keys nor the signing are Lanyard's.
final class IndependentIssuer: Sendable {
    struct Claims: JWTPayload {
        var iss: String
        var aud: String
        var sub: String
        var iat: Int
        var exp: Int
        var nonce: String?
        var email: String?
        var email_verified: Bool?
        var name: String?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    enum Algorithm: String, Sendable { case rs256 = "RS256", es256 = "ES256" }

    /// The keys published now, and whether the endpoints answer.
    private struct State {
        var generation = 1
        var rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        var ec = P256.Signing.PrivateKey()
        var failing = false
        /// A second RSA key published beside the first: a token without `kid` names no single key then.
        var extraRSA: _RSA.Signing.PrivateKey?
        var keyFetches = 0
        /// Whose time the tokens' `iat` and `exp` follow: a test server's manual clock, once `follow` is told.
        var clock: any LanyardClock = SystemClock()
    }

    /// Shared with the routes.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()
    private let application: LocalApplication
    /// `http://127.0.0.1:PORT/realms/acme`, exactly as its tokens' `iss`.
    let issuer: String
    let clientID = "acme-ios"

    var keyFetches: Int { shared.state.withLock { $0.keyFetches } }

    init() async throws {
        let port = try freeLoopbackPort()
        let issuer = "http://127.0.0.1:\(port)/realms/acme"
        self.issuer = issuer
        let router = Router()
        let shared = self.shared
        router.get("realms/acme/.well-known/openid-configuration") { _, _ -> Response in
            guard !shared.state.withLock({ $0.failing }) else { return Response(status: .serviceUnavailable) }
            let document = #"{"issuer":"\#(issuer)","jwks_uri":"\#(issuer)/protocol/openid-connect/certs","id_token_signing_alg_values_supported":["RS256","ES256"]}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: document)))
        }
        router.get("realms/acme/protocol/openid-connect/certs") { _, _ -> Response in
            let (failing, keys) = shared.state.withLock { state -> (Bool, LanyardSupport.JWKS) in
                state.keyFetches += 1
                return (state.failing, Self.published(state))
            }
            guard !failing else { return Response(status: .serviceUnavailable) }
            // A short max-age, as a provider that rotates announces: caches look again soon after.
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=1"],
                            body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(keys))))
        }
        application = try await LocalApplication(router: router, port: port, label: "the independent issuer")
    }

    private static func published(_ state: State) -> LanyardSupport.JWKS {
        JWKS(keys: [try? JWK.rsa(state.rsa.publicKey, kid: "rsa-\(state.generation)"),
                    JWK.p256(state.ec.publicKey, kid: "ec-\(state.generation)"),
                    state.extraRSA.flatMap { try? JWK.rsa($0.publicKey, kid: "rsa-extra") }].compactMap { $0 })
    }

    /// Publishes a second RSA key from now on (before the server first fetches the set, to be seen at once).
    func publishExtraRSAKey() {
        shared.state.withLock { $0.extraRSA = try! _RSA.Signing.PrivateKey(keySize: .bits2048) }
    }

    /// New keys replace the old ones (new `kid`s); tokens signed before no longer verify once caches refetch.
    func rotate() {
        shared.state.withLock { state in
            state.generation += 1
            state.rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
            state.ec = P256.Signing.PrivateKey()
        }
    }

    /// Tokens are issued at `clock`'s time (a test server's, which stands still while the test runs).
    func follow(_ clock: any LanyardClock) {
        shared.state.withLock { $0.clock = clock }
    }

    /// Discovery and keys answer 503 while failing.
    func setFailing(_ failing: Bool) {
        shared.state.withLock { $0.failing = failing }
    }

    /// A token signed with the current keys by jwt-kit; `header` adds members (for the refusals); `namingKey: false`
    /// leaves `kid` out of the header, as one-key issuers do.
    func token(sub: String, aud: String? = nil, nonce: String? = "n-1", email: String? = nil, name: String? = nil,
               iss: String? = nil, algorithm: Algorithm = .rs256, header: [String: String] = [:],
               namingKey: Bool = true) async throws -> String {
        let (generation, rsa, ec, clock) = shared.state.withLock { ($0.generation, $0.rsa, $0.ec, $0.clock) }
        let keys = JWTKeyCollection()
        let kid: String
        switch algorithm {
        case .rs256:
            kid = "rsa-\(generation)"
            await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: rsa.pemRepresentation), digestAlgorithm: .sha256,
                           kid: namingKey ? JWKIdentifier(string: kid) : nil)
        case .es256:
            kid = "ec-\(generation)"
            await keys.add(ecdsa: try ES256PrivateKey(pem: ec.pemRepresentation), kid: namingKey ? JWKIdentifier(string: kid) : nil)
        }
        let now = Int(clock.now().timeIntervalSince1970)
        let claims = Claims(iss: iss ?? issuer, aud: aud ?? clientID, sub: sub, iat: now, exp: now + 600, nonce: nonce,
                            email: email, email_verified: email.map { _ in true }, name: name)
        var jwtHeader = JWTHeader()
        for (name, value) in header { jwtHeader.fields[name] = .string(value) }
        return try await keys.sign(claims, kid: namingKey ? JWKIdentifier(string: kid) : nil, header: jwtHeader)
    }

    /// The RSA public key as PEM: what an attacker uses as an HMAC secret.
    var publicKeyPEM: String { shared.state.withLock { $0.rsa.publicKey.pemRepresentation } }
    var currentRSAKeyID: String { shared.state.withLock { "rsa-\($0.generation)" } }

    func stop() async {
        await application.stop()
    }
}
