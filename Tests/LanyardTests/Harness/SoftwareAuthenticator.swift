import Crypto
import _CryptoExtras
import Foundation
import LanyardProviders
import LanyardSupport
import LanyardWire
import Synchronization

/// A passkey authenticator in software, as a phone's would behave, with knobs that make it misbehave: each
/// `Fault` breaks exactly one thing a relying party must check, so a test can show each is refused for its
/// own reason. It signs for real (P-256, or RSA with `.rsa`), so nothing is accepted that a real key would not be.
final class SoftwareAuthenticator: Sendable {
    enum Fault: Sendable, Equatable {
        case wrongType, wrongOrigin, crossOrigin, wrongRPID, noUserPresence, noUserVerification, badSignature
        case unsupportedAlgorithm, counterNotIncreasing, trailingBytes, wrongChallenge
    }

    struct Credential: Sendable {
        let id: [UInt8]
        let key: P256.Signing.PrivateKey?
        let rsa: _RSA.Signing.PrivateKey?
        let userHandle: String
        var counter: UInt32
    }

    let origin: String
    /// Synced passkeys (iCloud Keychain) report 0 and the backup flags; a security key counts.
    let counts: Bool
    let backedUp: Bool
    private let stored = Mutex<[Credential]>([])

    init(origin: String, counts: Bool = true, backedUp: Bool = false) {
        self.origin = origin
        self.counts = counts
        self.backedUp = backedUp
    }

    var credentials: [Credential] { stored.withLock { $0 } }

    static func clientData(type: String, challenge: String, origin: String, crossOrigin: Bool = false) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":\#(crossOrigin)}"#.utf8)
    }

    private func flags(_ fault: Fault?, attested: Bool) -> UInt8 {
        var flags: UInt8 = 0
        if fault != .noUserPresence { flags |= 0x01 }
        if fault != .noUserVerification { flags |= 0x04 }
        if backedUp { flags |= 0x18 }
        if attested { flags |= 0x40 }
        return flags
    }

    private static func counterBytes(_ value: UInt32) -> [UInt8] {
        (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// `navigator.credentials.create()`: a new credential for the options, kept for later sign-ins.
    func create(_ options: PublicKeyCredentialCreationOptionsJSON, fault: Fault? = nil, rsa: Bool = false) throws -> RegistrationResponseJSON {
        let id = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let p256 = rsa ? nil : P256.Signing.PrivateKey()
        let rsaKey = rsa ? try _RSA.Signing.PrivateKey(keySize: .bits2048) : nil
        var coseKey: [CBORPair]
        if let p256 {
            let raw = Array(p256.publicKey.rawRepresentation)
            coseKey = [.init(key: .unsigned(1), value: .unsigned(2)),
                       .init(key: .unsigned(3), value: .negative(fault == .unsupportedAlgorithm ? -8 : -7)),
                       .init(key: .negative(-1), value: .unsigned(1)),
                       .init(key: .negative(-2), value: .bytes(Array(raw[0..<32]))),
                       .init(key: .negative(-3), value: .bytes(Array(raw[32..<64])))]
        } else {
            let primitives = try rsaKey!.publicKey.getKeyPrimitives()
            coseKey = [.init(key: .unsigned(1), value: .unsigned(3)), .init(key: .unsigned(3), value: .negative(-257)),
                       .init(key: .negative(-1), value: .bytes(Array(primitives.modulus))),
                       .init(key: .negative(-2), value: .bytes(Array(primitives.publicExponent)))]
        }
        let rpID = fault == .wrongRPID ? "evil.example" : options.rp.id
        var authData = Array(SHA256.hash(data: Array(rpID.utf8))) + [flags(fault, attested: true)]
            + Self.counterBytes(counts ? 1 : 0) + [UInt8](repeating: 0, count: 16) + [0, UInt8(id.count)] + id
            + CBOREncoder.encode(.map(coseKey))
        if fault == .trailingBytes { authData += [0x00] }
        let attestation = CBOREncoder.encode(.map([.init(key: .text("fmt"), value: .text("none")),
                                                   .init(key: .text("attStmt"), value: .map([])),
                                                   .init(key: .text("authData"), value: .bytes(authData))]))
        let clientData = Self.clientData(type: fault == .wrongType ? "webauthn.get" : "webauthn.create",
                                         challenge: fault == .wrongChallenge ? Base64URL.encode([1, 2, 3]) : options.challenge,
                                         origin: fault == .wrongOrigin ? "https://evil.example" : origin,
                                         crossOrigin: fault == .crossOrigin)
        if fault == nil {
            stored.withLock { $0.append(Credential(id: id, key: p256, rsa: rsaKey, userHandle: options.user.id, counter: counts ? 1 : 0)) }
        }
        return RegistrationResponseJSON(id: Base64URL.encode(id), response: .init(
            clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(attestation), transports: ["internal"]),
            authenticatorAttachment: "platform")
    }

    /// `navigator.credentials.get()` with no credentials named: the passkey at `index` (the first by default)
    /// answers, its counter moved on unless the fault says otherwise.
    func get(_ options: PublicKeyCredentialRequestOptionsJSON, index: Int = 0, fault: Fault? = nil) throws -> AuthenticationResponseJSON {
        let credential = stored.withLock { credentials -> Credential in
            if counts, fault != .counterNotIncreasing { credentials[index].counter += 1 }
            return credentials[index]
        }
        let rpID = fault == .wrongRPID ? "evil.example" : options.rpId
        let authData = Array(SHA256.hash(data: Array(rpID.utf8))) + [flags(fault, attested: false)]
            + Self.counterBytes(credential.counter) + (fault == .trailingBytes ? [0x00] : [])
        let clientData = Self.clientData(type: fault == .wrongType ? "webauthn.create" : "webauthn.get",
                                         challenge: fault == .wrongChallenge ? Base64URL.encode([1, 2, 3]) : options.challenge,
                                         origin: fault == .wrongOrigin ? "https://evil.example" : origin,
                                         crossOrigin: fault == .crossOrigin)
        let signed = authData + Array(SHA256.hash(data: clientData))
        var signature: [UInt8]
        if let key = credential.key {
            signature = Array(try key.signature(for: signed).derRepresentation)
        } else {
            signature = Array(try credential.rsa!.signature(for: signed, padding: .insecurePKCS1v1_5).rawRepresentation)
        }
        if fault == .badSignature { signature[signature.count / 2] ^= 0x01 }
        return AuthenticationResponseJSON(id: Base64URL.encode(credential.id), response: .init(
            clientDataJSON: Base64URL.encode(clientData), authenticatorData: Base64URL.encode(authData),
            signature: Base64URL.encode(signature), userHandle: credential.userHandle), authenticatorAttachment: "platform")
    }
}
