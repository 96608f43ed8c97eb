import Crypto
import Foundation
import LanyardSupport

/// The WebAuthn checks Lanyard makes itself (WebAuthn Level 3 §7.1 and §7.2), without a database: the caller
/// looks the challenge and the credential up between the steps. Nothing an authenticator sent is acted on before
/// its step passes; a sign-in's flags and counter count only once the signature checks out.
public struct PasskeyCeremony: Sendable {
    /// The relying party: its id (a domain), the origins its clients may report, and whether user verification
    /// (Face ID, a PIN) is required.
    public struct Party: Sendable, Equatable {
        public var id: String
        public var origins: [String]
        public var requireUserVerification: Bool

        public init(id: String, origins: [String], requireUserVerification: Bool) {
            self.id = id
            self.origins = origins
            self.requireUserVerification = requireUserVerification
        }
    }

    /// What the client says it did (`clientDataJSON`), read before anything else.
    public struct ClientData: Sendable, Equatable {
        public var type: String
        /// The challenge, base64url as the client wrote it.
        public var challenge: String
        public var origin: String
        public var crossOrigin: Bool
    }

    /// A registration that passed: the credential to store.
    public struct NewCredential: Sendable {
        public var id: [UInt8]
        public var publicKey: [UInt8]
        public var algorithm: Int64
        public var signCount: UInt32
        public var aaguid: [UInt8]
        public var backupEligible: Bool
        public var backedUp: Bool
        public var userVerified: Bool
    }

    /// A sign-in that passed: what to store of it.
    public struct Assertion: Sendable {
        public var signCount: UInt32
        public var backedUp: Bool
        public var userVerified: Bool
    }

    public let party: Party

    public init(party: Party) {
        self.party = party
    }

    /// Client data of the expected ceremony (`webauthn.create` or `webauthn.get`).
    public static func clientData(_ bytes: [UInt8], expecting type: String) throws(PasskeyRefusal) -> ClientData {
        guard bytes.count <= 4096, let object = JSONParser.parseObject(bytes) else {
            throw PasskeyRefusal(.malformed, "clientDataJSON is not a JSON object")
        }
        guard case .string(let found)? = object["type"], case .string(let challenge)? = object["challenge"],
              case .string(let origin)? = object["origin"] else {
            throw PasskeyRefusal(.malformed, "clientDataJSON lacks type, challenge or origin")
        }
        guard found == type else { throw PasskeyRefusal(.type, "clientDataJSON.type is \(found), not \(type)") }
        var crossOrigin = false
        if case .bool(let value)? = object["crossOrigin"] { crossOrigin = value }
        return ClientData(type: found, challenge: challenge, origin: origin, crossOrigin: crossOrigin)
    }

    /// The origin is one of the party's, exactly, and not reported from inside another site's frame.
    public func check(origin data: ClientData) throws(PasskeyRefusal) {
        guard party.origins.contains(data.origin) else {
            throw PasskeyRefusal(.origin, "the origin \(data.origin) is not one of LANYARD_WEBAUTHN_ORIGINS")
        }
        guard !data.crossOrigin else { throw PasskeyRefusal(.origin, "the ceremony ran inside a cross-origin frame") }
    }

    /// The rest of a registration, once the challenge and origin passed: the attestation object's authenticator
    /// data for this party, the user's presence (and verification when required), an accepted key. The
    /// attestation statement is not verified: Lanyard asks for `none`, and any other format is taken as `none`.
    public func register(attestationObject: [UInt8], claimedID: String) throws(PasskeyRefusal) -> NewCredential {
        let object: CBOR
        do { object = try CBORDecoder.decode(attestationObject) } catch {
            throw PasskeyRefusal(.malformed, "attestationObject: \(error)")
        }
        guard case .text? = object[text: "fmt"], case .map? = object[text: "attStmt"],
              case .bytes(let authDataBytes)? = object[text: "authData"] else {
            throw PasskeyRefusal(.malformed, "attestationObject lacks fmt, attStmt or authData")
        }
        let data = try Self.authenticatorData(authDataBytes)
        try check(data)
        guard let credential = data.attestedCredential else {
            throw PasskeyRefusal(.malformed, "the authenticator data carries no credential")
        }
        let key: COSEKey
        do {
            key = try COSEKey(try CBORDecoder.decode(credential.publicKey))
        } catch let error as COSEKey.Failure {
            switch error {
            case .algorithm(let alg): throw PasskeyRefusal(.algorithm, "COSE algorithm \(alg.map(String.init) ?? "none") is not ES256 (-7) or RS256 (-257)")
            case .malformed(let text): throw PasskeyRefusal(.malformed, text)
            }
        } catch {
            throw PasskeyRefusal(.malformed, "the credential public key: \(error)")
        }
        guard Base64URL.encode(credential.credentialID) == claimedID else {
            throw PasskeyRefusal(.malformed, "the credential's id is not the one its response names")
        }
        return NewCredential(id: credential.credentialID, publicKey: credential.publicKey, algorithm: key.algorithm,
                             signCount: data.signCount, aaguid: credential.aaguid,
                             backupEligible: data.flags.contains(.backupEligible), backedUp: data.flags.contains(.backedUp),
                             userVerified: data.flags.contains(.userVerified))
    }

    /// The rest of a sign-in, once the challenge and origin passed and the credential was found: this party's
    /// authenticator data, presence and verification, the signature over it and the client data, then the counter.
    public func authenticate(authenticatorData bytes: [UInt8], clientDataJSON: [UInt8], signature: [UInt8],
                             storedKey: [UInt8], storedCount: UInt32) throws(PasskeyRefusal) -> Assertion {
        let data = try Self.authenticatorData(bytes)
        guard data.attestedCredential == nil else {
            throw PasskeyRefusal(.malformed, "a sign-in's authenticator data carries a new credential")
        }
        try check(data)
        let key: COSEKey
        do { key = try COSEKey(try CBORDecoder.decode(storedKey)) } catch {
            throw PasskeyRefusal(.malformed, "the stored key no longer parses")
        }
        let signed = bytes + Array(SHA256.hash(data: clientDataJSON))
        guard key.verifies(signature, of: signed) else {
            throw PasskeyRefusal(.signature, "the signature does not verify under the passkey's key")
        }
        guard PasskeyRules.counterAccepted(stored: storedCount, presented: data.signCount) else {
            throw PasskeyRefusal(.counter, "the signature counter went from \(storedCount) to \(data.signCount): "
                                 + "the passkey may have been cloned")
        }
        return Assertion(signCount: data.signCount, backedUp: data.flags.contains(.backedUp),
                         userVerified: data.flags.contains(.userVerified))
    }

    private static func authenticatorData(_ bytes: [UInt8]) throws(PasskeyRefusal) -> AuthenticatorData {
        do { return try AuthenticatorData(bytes) } catch { throw PasskeyRefusal(.malformed, "authenticatorData: \(error)") }
    }

    private func check(_ data: AuthenticatorData) throws(PasskeyRefusal) {
        guard data.rpIDHash == Array(SHA256.hash(data: Array(party.id.utf8))) else {
            throw PasskeyRefusal(.rpID, "the authenticator data is not for the relying party \(party.id)")
        }
        guard data.flags.contains(.userPresent) else {
            throw PasskeyRefusal(.userPresence, "the authenticator did not see the user")
        }
        if party.requireUserVerification, !data.flags.contains(.userVerified) {
            throw PasskeyRefusal(.userVerification, "the authenticator did not verify the user (Face ID, a PIN)")
        }
    }
}

/// The pure rules of passkeys.
public enum PasskeyRules {
    /// A counter is checked only when either side is non-zero (synced passkeys report 0): then it must grow.
    public static func counterAccepted(stored: UInt32, presented: UInt32) -> Bool {
        stored == 0 && presented == 0 || presented > stored
    }

}
