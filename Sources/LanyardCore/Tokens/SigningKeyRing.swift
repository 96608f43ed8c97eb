import Crypto
import Foundation
import LanyardStore
import LanyardSupport
import Synchronization

/// Lanyard's ES256 keys for access tokens: created on first start, stored in the database (so every instance
/// shares them) with the private key sealed by the master key. Old public keys stay published after a rotation
/// until the tokens they signed have expired.
public final class SigningKeyRing: Sendable {
    struct Keys: Sendable {
        var signingKID: String
        var signingKey: P256.Signing.PrivateKey
        var publicKeys: [String: P256.Signing.PublicKey]
        var jwks: JWKS
        var loadedAt: Date
    }

    private let database: any Database
    private let masterKey: MasterKey
    private let clock: any LanyardClock
    private let random: any RandomSource
    private let accessTokenTTL: TimeInterval
    private let keys: Mutex<Keys>

    public static func load(database: any Database, masterKey: MasterKey, clock: any LanyardClock,
                            random: any RandomSource, accessTokenTTL: TimeInterval) async throws -> SigningKeyRing {
        let keys = try await loadKeys(database: database, masterKey: masterKey, clock: clock, random: random,
                                      accessTokenTTL: accessTokenTTL)
        return SigningKeyRing(database: database, masterKey: masterKey, clock: clock, random: random,
                              accessTokenTTL: accessTokenTTL, keys: keys)
    }

    private init(database: any Database, masterKey: MasterKey, clock: any LanyardClock, random: any RandomSource,
                 accessTokenTTL: TimeInterval, keys: Keys) {
        self.database = database
        self.masterKey = masterKey
        self.clock = clock
        self.random = random
        self.accessTokenTTL = accessTokenTTL
        self.keys = Mutex(keys)
    }

    public var jwks: JWKS { keys.withLock { $0.jwks } }

    public func signingKey() -> (kid: String, key: P256.Signing.PrivateKey) {
        keys.withLock { ($0.signingKID, $0.signingKey) }
    }

    /// The public key for `kid`; reloads from the database (at most every 5 s) when another instance rotated.
    public func publicKey(kid: String) async -> P256.Signing.PublicKey? {
        let (known, loadedAt) = keys.withLock { ($0.publicKeys[kid], $0.loadedAt) }
        if let known { return known }
        guard clock.now().timeIntervalSince(loadedAt) > 5 else { return nil }
        try? await reload()
        return keys.withLock { $0.publicKeys[kid] }
    }

    public func reload() async throws {
        let fresh = try await Self.loadKeys(database: database, masterKey: masterKey, clock: clock, random: random,
                                            accessTokenTTL: accessTokenTTL)
        keys.withLock { $0 = fresh }
    }

    /// Makes a new signing key and retires the current one, which stays published until its tokens expire.
    public func rotate() async throws {
        let now = clock.now()
        let record = try Self.newKeyRecord(masterKey: masterKey, random: random, now: now)
        try await database.transaction { connection in
            let store = SigningKeyStore(connection)
            for key in try await store.all() where key.retiredAt == nil {
                try await store.retire(kid: key.kid, at: now)
            }
            try await store.insert(record)
        }
        try await reload()
    }

    private static func loadKeys(database: any Database, masterKey: MasterKey, clock: any LanyardClock,
                                 random: any RandomSource, accessTokenTTL: TimeInterval) async throws -> Keys {
        let now = clock.now()
        let records = try await database.transaction { connection in
            let store = SigningKeyStore(connection)
            try await store.deleteRetired(before: now.addingTimeInterval(-accessTokenTTL - 60))
            var records = try await store.all()
            if !records.contains(where: { $0.retiredAt == nil }) {
                let record = try newKeyRecord(masterKey: masterKey, random: random, now: now)
                try await store.insert(record)
                records.append(record)
            }
            return records
        }
        // Instances that raced on first start each inserted a key; all of them sign with the oldest active one.
        guard let active = records.first(where: { $0.retiredAt == nil }) else {
            throw SigningKeyError.noActiveKey
        }
        let sealedKey: [UInt8]
        do {
            sealedKey = try masterKey.open(active.sealedPrivateKey)
        } catch {
            // The usual cause: another key than the one the database's keys were sealed with (a lost or
            // regenerated master.key, or an instance configured differently from the others).
            throw ConfigurationError(variable: "LANYARD_MASTER_KEY", problem: """
                cannot decrypt the signing keys stored in the database: it is not the master key they were stored \
                with (every instance, and every restart, needs that same key)
                """)
        }
        let privateKey = try P256.Signing.PrivateKey(rawRepresentation: sealedKey)
        var publicKeys: [String: P256.Signing.PublicKey] = [:]
        var published: [JWK] = []
        for record in records {
            guard let jwk = try? JSONDecoder().decode(JWK.self, from: Data(record.publicJWK.utf8)),
                  let key = jwk.p256PublicKey() else { continue }
            publicKeys[record.kid] = key
            published.append(jwk)
        }
        return Keys(signingKID: active.kid, signingKey: privateKey, publicKeys: publicKeys,
                    jwks: JWKS(keys: published), loadedAt: now)
    }

    private static func newKeyRecord(masterKey: MasterKey, random: any RandomSource, now: Date) throws -> SigningKeyRecord {
        let key = P256.Signing.PrivateKey()
        let kid = random.hexString(byteCount: 8)
        let jwk = JWK.p256(key.publicKey, kid: kid)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return SigningKeyRecord(
            kid: kid, algorithm: "ES256",
            publicJWK: String(decoding: try encoder.encode(jwk), as: UTF8.self),
            sealedPrivateKey: try masterKey.seal(key.rawRepresentation),
            createdAt: now)
    }
}

enum SigningKeyError: Error {
    case noActiveKey
}
