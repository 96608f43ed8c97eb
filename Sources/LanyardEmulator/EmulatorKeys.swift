import Crypto
import _CryptoExtras
import Foundation
import LanyardSupport

/// The emulator's RSA signing keys, one per provider, persisted in the data directory so that tokens minted
/// before a restart still verify after it.
public struct EmulatorKeys: Sendable {
    public struct Key: Sendable {
        public let kid: String
        public let privateKey: _RSA.Signing.PrivateKey
        public var jwks: JWKS { JWKS(keys: [(try? JWK.rsa(privateKey.publicKey, kid: kid))].compactMap { $0 }) }
    }

    /// The P-256 key every OpenID Connect provider the emulator imitates signs with (ES256).
    public struct OIDCKey: Sendable {
        public let kid: String
        public let privateKey: P256.Signing.PrivateKey
        public var jwks: JWKS { JWKS(keys: [JWK.p256(privateKey.publicKey, kid: kid)]) }
    }

    public let apple: Key
    public let google: Key
    public let oidc: OIDCKey

    public func key(for provider: EmulatedProvider) -> Key {
        switch provider {
        case .apple: apple
        case .google: google
        }
    }

    struct Stored: Codable {
        var appleKID: String
        var applePEM: String
        var googleKID: String
        var googlePEM: String
    }

    /// Loads the keys from `directory/emulator-keys.json`, creating them (mode 0600) on first use.
    public static func loadOrCreate(directory: String, random: any RandomSource = SystemRandomSource()) throws -> EmulatorKeys {
        let path = URL(fileURLWithPath: directory).appendingPathComponent("emulator-keys.json").path
        if let data = FileManager.default.contents(atPath: path),
           let stored = try? JSONDecoder().decode(Stored.self, from: data) {
            return EmulatorKeys(
                apple: Key(kid: stored.appleKID, privateKey: try _RSA.Signing.PrivateKey(pemRepresentation: stored.applePEM)),
                google: Key(kid: stored.googleKID, privateKey: try _RSA.Signing.PrivateKey(pemRepresentation: stored.googlePEM)),
                oidc: try loadOrCreateOIDCKey(directory: directory, random: random))
        }
        let keys = EmulatorKeys(
            apple: Key(kid: "emu-apple-" + random.hexString(byteCount: 4), privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048)),
            google: Key(kid: "emu-google-" + random.hexString(byteCount: 4), privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048)),
            oidc: try loadOrCreateOIDCKey(directory: directory, random: random))
        let stored = Stored(appleKID: keys.apple.kid, applePEM: keys.apple.privateKey.pemRepresentation,
                            googleKID: keys.google.kid, googlePEM: keys.google.privateKey.pemRepresentation)
        try SecretFile.createDirectory(atPath: directory)
        try SecretFile.writeOnce(try JSONEncoder().encode(stored), to: path)
        // Another process may have won the race to create the file: use what is there.
        return try loadOrCreate(directory: directory, random: random)
    }

    /// The OpenID Connect providers' key, in a file of its own (`emulator-oidc-key.json`) so that a data directory
    /// made before it existed keeps its Apple and Google keys.
    static func loadOrCreateOIDCKey(directory: String, random: any RandomSource) throws -> OIDCKey {
        struct StoredOIDC: Codable {
            var kid: String
            var pem: String
        }
        let path = URL(fileURLWithPath: directory).appendingPathComponent("emulator-oidc-key.json").path
        if let data = FileManager.default.contents(atPath: path), let stored = try? JSONDecoder().decode(StoredOIDC.self, from: data) {
            return OIDCKey(kid: stored.kid, privateKey: try P256.Signing.PrivateKey(pemRepresentation: stored.pem))
        }
        let key = P256.Signing.PrivateKey()
        let stored = StoredOIDC(kid: "emu-oidc-" + random.hexString(byteCount: 4), pem: key.pemRepresentation)
        try SecretFile.createDirectory(atPath: directory)
        try SecretFile.writeOnce(try JSONEncoder().encode(stored), to: path)
        // Another process may have won the race: what is in the file is the key.
        guard let data = FileManager.default.contents(atPath: path), let written = try? JSONDecoder().decode(StoredOIDC.self, from: data)
        else { throw CocoaError(.fileReadCorruptFile) }
        return OIDCKey(kid: written.kid, privateKey: try P256.Signing.PrivateKey(pemRepresentation: written.pem))
    }

    /// The .p8-style P-256 key a dev server signs Apple `client_secret`s with (the emulator checks them against it),
    /// made once in the data directory.
    public static func loadOrCreateAppleTeamKey(directory: String) throws -> String {
        let path = URL(fileURLWithPath: directory).appendingPathComponent("apple-team-key.p8").path
        if let data = FileManager.default.contents(atPath: path) { return String(decoding: data, as: UTF8.self) }
        try SecretFile.createDirectory(atPath: directory)
        try SecretFile.writeOnce(Data(P256.Signing.PrivateKey().pemRepresentation.utf8), to: path)
        return String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }
}
