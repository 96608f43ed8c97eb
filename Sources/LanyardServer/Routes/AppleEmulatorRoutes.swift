import AsyncHTTPClient
import Foundation
import Hummingbird
import LanyardCore
import LanyardEmulator
import LanyardSupport

/// `/_emulator/apple/*` beyond the keys: Apple's token endpoints as Lanyard calls them (reference section 10),
/// checking each `client_secret` against the team key this server signs with, and what they recorded.
struct AppleEmulatorRoutes {
    let apple: AppleAccountEmulator
    /// The web flow's codes (redirect sign-in), redeemed here for Apple's identity token too.
    let authorizations: AuthorizationEmulator
    let team: AppleClientSecret
    let clock: any LanyardClock
    let minter: TokenMinter
    let client: HTTPClient
    /// This server, which the emulator notifies as Apple would.
    let serverURL: String

    func register(on router: Router<LanyardRequestContext>) {
        router.post("_emulator/apple/authorization-code") { request, _ in
            let body = try await JSONBody.decode(CodeRequest.self, from: request)
            return try JSONResponse.make(["code": apple.mintCode(clientID: body.aud ?? EmulatedProvider.apple.defaultClientID,
                                                                 subject: body.sub)])
        }
        router.post("_emulator/apple/auth/token") { request, _ in
            let form = try await FormBody.read(request)
            guard isValidSecret(form["client_secret"], clientID: form["client_id"]) else { return Self.appleError(401, "invalid_client") }
            guard form["grant_type"] == "authorization_code", let code = form["code"], let clientID = form["client_id"] else {
                return Self.appleError(400, "invalid_grant")
            }
            // A code of the web flow (redirect sign-in): Apple answers its identity token too.
            if AuthorizationEmulator.isAuthorizationCode(code) {
                do {
                    let grant = try authorizations.redeem(code, provider: "apple", clientID: clientID,
                                                          redirectURI: form["redirect_uri"] ?? "")
                    let refreshToken = apple.issueRefreshToken()
                    return try JSONResponse.make(TokenAnswer(accessToken: "a" + refreshToken.dropFirst(), refreshToken: refreshToken,
                                                             idToken: try minter.mint(.apple, grant.claims)))
                } catch AuthorizationEmulator.Refusal.unavailable {
                    return Self.appleError(503, "temporarily_unavailable")
                } catch {
                    return Self.appleError(400, "invalid_grant")
                }
            }
            guard let refreshToken = apple.redeem(code: code, clientID: clientID) else { return Self.appleError(400, "invalid_grant") }
            return try JSONResponse.make(TokenAnswer(accessToken: "a" + refreshToken.dropFirst(), refreshToken: refreshToken))
        }
        router.post("_emulator/apple/auth/revoke") { request, _ in
            let form = try await FormBody.read(request)
            guard isValidSecret(form["client_secret"], clientID: form["client_id"]) else { return Self.appleError(401, "invalid_client") }
            guard let token = form["token"], apple.revoke(token: token) else { return Self.appleError(503, "temporarily_unavailable") }
            return Response(status: .ok)
        }
        router.get("_emulator/apple/revocations") { _, _ in
            try JSONResponse.make(["revoked": apple.revoked])
        }
        router.post("_emulator/apple/notify") { request, _ in
            let body = try await JSONBody.decode(NotifyRequest.self, from: request)
            let payload = try minter.appleNotification(type: body.type, sub: body.sub, aud: body.aud, email: body.email,
                                                       jti: body.jti)
            var delivery = HTTPClientRequest(url: serverURL + "/v1/providers/apple/notifications")
            delivery.method = .POST
            delivery.headers.add(name: "Content-Type", value: "application/json")
            delivery.body = .bytes(ByteBuffer(bytes: JSONWriter.write(NotificationPayload(payload: payload))))
            // The server's own answer (it fetches Apple's keys from this same emulator): room for a busy machine; this
            // is dev tooling, and Apple's own deliveries are the server's concern, not this route's.
            let answer = try await client.execute(delivery, timeout: .seconds(30))
            let text = String(buffer: try await answer.body.collect(upTo: 64 * 1024))
            return try JSONResponse.make(NotifyAnswer(status: Int(answer.status.code), answer: text, payload: payload))
        }
    }

    /// An ES256 JWT by this server's team key: `kid`, `iss` the team, `sub` the client, `aud` Apple, not expired.
    func isValidSecret(_ secret: String?, clientID: String?) -> Bool {
        guard let secret, let clientID, let jws = CompactJWS(secret), jws.algorithm == "ES256", jws.keyID == team.keyID,
              ES256.isValid(signature: jws.signature, for: jws.signingInput, key: team.publicKey) else { return false }
        return jws.claims["iss"]?.stringValue == team.teamID && jws.claims["sub"]?.stringValue == clientID
            && jws.claims["aud"]?.stringValue == AppleClientSecret.audience
            && (jws.claims["exp"]?.numberValue ?? 0) > clock.now().timeIntervalSince1970
    }

    struct CodeRequest: RequestBody {
        let sub: String
        let aud: String?
        init(_ fields: BodyFields) throws {
            sub = try fields.string("sub")
            aud = try fields.optionalString("aud")
        }
    }

    struct NotifyRequest: RequestBody {
        let type: String, sub: String, aud: String?, email: String?, jti: String?
        init(_ fields: BodyFields) throws {
            type = try fields.string("type")
            sub = try fields.string("sub")
            aud = try fields.optionalString("aud")
            email = try fields.optionalString("email")
            jti = try fields.optionalString("jti")
        }
    }

    struct NotificationPayload: JSONWritable {
        let payload: String
        func write(to writer: inout JSONWriter) {
            writer.object { json in
                json.key("payload"); json.string(payload)
            }
        }
    }

    /// What this server answered Apple's notification, and the signed payload (to replay it, say).
    struct NotifyAnswer: Encodable {
        let status: Int
        let answer: String
        let payload: String
    }

    struct TokenAnswer: Encodable {
        let accessToken: String
        let tokenType = "Bearer"
        let expiresIn = 3600
        let refreshToken: String?
        var idToken: String?
        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in", refreshToken = "refresh_token"
            case idToken = "id_token"
        }
    }

    static func appleError(_ status: Int, _ error: String) -> Response {
        (try? JSONResponse.make(["error": error], status: .init(code: status))) ?? Response(status: .init(code: status))
    }
}
