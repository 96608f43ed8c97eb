import Crypto
import Foundation
import LanyardStore
import LanyardSupport
import Synchronization

/// Lanyard's ES256 keys for access tokens: created on first start, stored in the database (so every instance
/// shares them) with the private key sealed by the master key.
///
/// A rotation (reference section 8) adds the new key at once and schedules the current one's retirement
/// `LANYARD_KEY_PUBLISH_DELAY` later: every instance publishes the new key as soon as it reads it (the JWKS is
/// read again when older than a second, and `SigningKeyRefresher` reads every few seconds), and every instance
/// signs with it from the same moment, the old key's retirement, so caches downstream know it before any token
/// uses it. Old public keys stay published until the tokens they signed have expired.
public final class SigningKeyRing: Sendable {
    /// A key that signs now or will, until its retirement (when the next one takes over).
    struct Signer: Sendable {
        var kid: String
        var key: P256.Signing.PrivateKey
        var retiresAt: Date?
    }

    struct Keys: Sendable {
        /// In signing order: the first one not yet retired signs.
        var signers: [Signer]
        var publicKeys: [String: P256.Signing.PublicKey]
        var jwks: JWKS
        var loadedAt: Date
        var loadedAtInstant: ContinuousClock.Instant
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

    /// The published keys as the database now has them (read again when the copy is older than a second), so a
    /// rotation on another instance is published here at once.
    public func currentJWKS() async -> JWKS {
        let age = keys.withLock { ContinuousClock.now - $0.loadedAtInstant }
        if age > .seconds(1) { try? await reload() }
        return jwks
    }

    /// The key that signs at `now`: the oldest one not yet retired.
    public func signingKey(at now: Date) -> (kid: String, key: P256.Signing.PrivateKey) {
        keys.withLock { keys in
            let signer = keys.signers.first { $0.retiresAt.map { $0 > now } ?? true } ?? keys.signers[keys.signers.count - 1]
            return (signer.kid, signer.key)
        }
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

    /// Makes a new key, published at once, and retires the current one `publishDelay` from now, when the new
    /// one starts signing; the old one stays published until its tokens expire.
    /// - Returns: the new key's id and when it starts signing.
    @discardableResult
    public func rotate(publishDelay: TimeInterval) async throws -> (kid: String, signsFrom: Date) {
        let now = clock.now()
        let record = try Self.newKeyRecord(masterKey: masterKey, random: random, now: now)
        let switchover = now.addingTimeInterval(publishDelay)
        try await database.transaction { connection in
            let store = SigningKeyStore(connection)
            for key in try await store.all() where key.retiredAt == nil {
                try await store.retire(kid: key.kid, at: switchover)
            }
            try await store.insert(record)
        }
        try await reload()
        return (record.kid, switchover)
    }

    /// Every stored key with what it does at `now`, oldest first (`lanyard keys list`).
    public func describe() async throws -> [SigningKeyState] {
        let now = clock.now()
        let records = Self.inSigningOrder(try await database.read { try await SigningKeyStore($0).all() },
                                          retiresAt: \.retiredAt)
        let signing = records.first { $0.retiredAt.map { $0 > now } ?? true }?.kid
        return records.enumerated().map { index, record in
            let state: SigningKeyState.State = if record.kid == signing {
                .signing
            } else if let retiredAt = record.retiredAt, retiredAt <= now {
                .retired
            } else {
                .next
            }
            // A key signs from the retirement of the one before it (or from its creation, the first one).
            let previous = index > 0 ? records[index - 1].retiredAt : nil
            return SigningKeyState(kid: record.kid, state: state, createdAt: record.createdAt,
                                   signsFrom: previous ?? record.createdAt, retiredAt: record.retiredAt,
                                   publishedUntil: record.retiredAt?.addingTimeInterval(accessTokenTTL))
        }
    }

    private static func loadKeys(database: any Database, masterKey: MasterKey, clock: any LanyardClock,
                                 random: any RandomSource, accessTokenTTL: TimeInterval) async throws -> Keys {
        let now = clock.now()
        let records = try await currentRecords(database: database, masterKey: masterKey, random: random, now: now,
                                               expired: now.addingTimeInterval(-accessTokenTTL - 60))
        let signers = try Self.signers(of: records, masterKey: masterKey, now: now)
        var publicKeys: [String: P256.Signing.PublicKey] = [:]
        var published: [JWK] = []
        for record in records {
            guard let jwk = try? JSONDecoder().decode(JWK.self, from: Data(record.publicJWK.utf8)),
                  let key = jwk.p256PublicKey() else { continue }
            publicKeys[record.kid] = key
            published.append(jwk)
        }
        return Keys(signers: signers, publicKeys: publicKeys, jwks: JWKS(keys: published), loadedAt: now,
                    loadedAtInstant: ContinuousClock.now)
    }

    /// The stored keys. Usually a plain read (it runs for JWKS requests and every few seconds); a write only to
    /// make the first key or to drop keys whose tokens have all expired.
    private static func currentRecords(database: any Database, masterKey: MasterKey, random: any RandomSource,
                                       now: Date, expired: Date) async throws -> [SigningKeyRecord] {
        let records = try await database.read { try await SigningKeyStore($0).all() }
        let hasSigner = records.contains { $0.retiredAt == nil }
        guard !hasSigner || records.contains(where: { $0.retiredAt.map { $0 < expired } ?? false }) else { return records }
        return try await database.transaction { connection in
            let store = SigningKeyStore(connection)
            try await store.deleteRetired(before: expired)
            var records = try await store.all()
            if !records.contains(where: { $0.retiredAt == nil }) {
                let record = try newKeyRecord(masterKey: masterKey, random: random, now: now)
                try await store.insert(record)
                records.append(record)
            }
            return records
        }
    }

    /// Keys that sign now or will: those not retired yet (a rotation schedules the retirement), in signing order.
    /// Instances that raced on first start each inserted a key; all of them sign with the oldest one.
    private static func signers(of records: [SigningKeyRecord], masterKey: MasterKey, now: Date) throws -> [Signer] {
        var signers: [Signer] = []
        for record in records where record.retiredAt.map({ $0 > now }) ?? true {
            let sealedKey: [UInt8]
            do {
                sealedKey = try masterKey.open(record.sealedPrivateKey)
            } catch {
                // The usual cause: another key than the one the database's keys were sealed with (a lost or
                // regenerated master.key, or an instance configured differently from the others).
                throw ConfigurationError(variable: "LANYARD_MASTER_KEY", problem: """
                    cannot decrypt the signing keys stored in the database: it is not the master key they were stored \
                    with (every instance, and every restart, needs that same key)
                    """)
            }
            signers.append(Signer(kid: record.kid, key: try P256.Signing.PrivateKey(rawRepresentation: sealedKey),
                                  retiresAt: record.retiredAt))
        }
        guard !signers.isEmpty else { throw SigningKeyError.noActiveKey }
        return Self.inSigningOrder(signers, retiresAt: \.retiresAt)
    }

    /// Keys in the order they sign: those with a retirement (scheduled or past) first, earliest retirement
    /// first, then the others (the newest rotation's key last). Creation order alone could tie within a
    /// millisecond; a rotation always sets the retirement of the keys it replaces, so this order never does.
    /// The stored order (oldest created first) breaks the remaining ties, as on a first start several
    /// instances raced.
    static func inSigningOrder<Key>(_ keys: [Key], retiresAt: (Key) -> Date?) -> [Key] {
        keys.enumerated().sorted { lhs, rhs in
            let left = retiresAt(lhs.element) ?? .distantFuture, right = retiresAt(rhs.element) ?? .distantFuture
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element)
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

/// A stored signing key and what it does now.
public struct SigningKeyState: Sendable, Encodable {
    public enum State: String, Sendable, Encodable {
        /// Signs access tokens now.
        case signing
        /// Published, signs from `signsFrom` (after a rotation's publish delay).
        case next
        /// No longer signs; published until its tokens have expired.
        case retired
    }

    public var kid: String
    public var state: State
    public var createdAt: Date
    public var signsFrom: Date
    public var retiredAt: Date?
    public var publishedUntil: Date?

    enum CodingKeys: String, CodingKey {
        case kid, state
        case createdAt = "created_at", signsFrom = "signs_from", retiredAt = "retired_at", publishedUntil = "published_until"
    }
}
