import Crypto
import Foundation
import LanyardSupport

/// The `client_secret` Apple's token endpoints take: an ES256 JWT signed with the team's .p8 key (header `kid`;
/// `iss` the team, `sub` the client id, `aud` Apple, five minutes of life).
public struct AppleClientSecret: Sendable {
    public static let audience = "https://appleid.apple.com"
    public let teamID: String
    public let keyID: String
    let key: P256.Signing.PrivateKey

    public init(teamID: String, keyID: String, pem: String) throws {
        self.teamID = teamID
        self.keyID = keyID
        key = try P256.Signing.PrivateKey(pemRepresentation: pem)
    }

    public var publicKey: P256.Signing.PublicKey { key.publicKey }

    struct Header: Encodable {
        let alg: String
        let kid: String
    }
    struct Claims: Encodable { let iss: String, iat: Int64, exp: Int64, aud: String, sub: String }

    public func make(clientID: String, at now: Date) throws -> String {
        try ES256.sign(try CompactJWS.signingInput(header: Header(alg: "ES256", kid: keyID), claims: Claims(
            iss: teamID, iat: now.unixSeconds, exp: now.unixSeconds + 300, aud: Self.audience, sub: clientID)), key: key)
    }
}
