import Foundation

/// A row of `passkeys` with the identity it belongs to: the credential id is the identity's subject, the
/// account its owner.
public struct PasskeyRecord: Sendable, Equatable {
    public var identityID: String
    public var userID: String
    /// base64url, as the identity's `provider_user_id`.
    public var credentialID: String
    /// base64url of the WebAuthn `user.id` the authenticator stored with the credential.
    public var userHandle: String
    /// base64url of the COSE key as the authenticator wrote it.
    public var publicKey: String
    public var algorithm: Int64
    public var signCount: Int64
    public var name: String
    /// Hex of the authenticator's AAGUID (all zeros when it does not say).
    public var aaguid: String
    /// Comma-separated, as the client reported them (`internal`, `hybrid`, `usb`…).
    public var transports: String?
    public var backupEligible: Bool
    public var backedUp: Bool
    public var createdAt: Date
    public var lastUsedAt: Date?

    public init(identityID: String, userID: String, credentialID: String, userHandle: String, publicKey: String,
                algorithm: Int64, signCount: Int64, name: String, aaguid: String, transports: String?,
                backupEligible: Bool, backedUp: Bool, createdAt: Date) {
        (self.identityID, self.userID, self.credentialID, self.userHandle) = (identityID, userID, credentialID, userHandle)
        (self.publicKey, self.algorithm, self.signCount, self.name) = (publicKey, algorithm, signCount, name)
        (self.aaguid, self.transports, self.backupEligible, self.backedUp) = (aaguid, transports, backupEligible, backedUp)
        (self.createdAt, self.lastUsedAt) = (createdAt, nil)
    }

    init(row: SQLRow) throws {
        identityID = try row.string("identity_id")
        userID = try row.string("user_id")
        credentialID = try row.string("provider_user_id")
        userHandle = try row.string("user_handle")
        publicKey = try row.string("public_key")
        algorithm = try row.integer("algorithm")
        signCount = try row.integer("sign_count")
        name = try row.string("name")
        aaguid = try row.string("aaguid")
        transports = try row.optionalString("transports")
        backupEligible = try row.bool("backup_eligible")
        backedUp = try row.bool("backed_up")
        createdAt = try row.date("created_at")
        lastUsedAt = try row.optionalDate("last_used_at")
    }
}

/// A challenge handed out by an options request, until a ceremony takes it (once) or it expires.
public struct PasskeyChallengeRecord: Sendable, Equatable {
    /// `register` or `signin`.
    public var purpose: String
    /// For `register`: the account and session that asked, and the user handle the options named.
    public var userID: String?
    public var sessionID: String?
    public var userHandle: String?
    public var expiresAt: Date

    public init(purpose: String, userID: String?, sessionID: String?, userHandle: String?, expiresAt: Date) {
        (self.purpose, self.userID, self.sessionID, self.userHandle, self.expiresAt) = (purpose, userID, sessionID, userHandle, expiresAt)
    }
}

/// The `passkeys` and `passkey_challenges` tables.
public struct PasskeyStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    private static let select = """
        SELECT p.*, i.user_id, i.provider_user_id FROM passkeys p JOIN identities i ON i.id = p.identity_id
        """

    /// Written after the identity it belongs to, in the same transaction (held like the identity's insert).
    public func insert(_ record: PasskeyRecord) async throws {
        try await connection.enqueueWrite("""
            INSERT INTO passkeys (identity_id, user_handle, public_key, algorithm, sign_count, name, aaguid, transports,
                                  backup_eligible, backed_up, created_at, last_used_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL)
            """, [.text(record.identityID), .text(record.userHandle), .text(record.publicKey), .integer(record.algorithm),
                  .integer(record.signCount), .text(record.name), .text(record.aaguid), .optionalText(record.transports),
                  .bool(record.backupEligible), .bool(record.backedUp), .date(record.createdAt)])
    }

    public func find(credentialID: String) async throws -> PasskeyRecord? {
        try await connection.first(Self.select + " WHERE i.provider = 'passkey' AND i.provider_user_id = $1",
                                    [.text(credentialID)]).map(PasskeyRecord.init(row:))
    }

    /// An account's passkeys, oldest first.
    public func list(userID: String) async throws -> [PasskeyRecord] {
        try await connection.query(Self.select + " WHERE i.user_id = $1 ORDER BY p.created_at, i.link_position",
                                   [.text(userID)]).map(PasskeyRecord.init(row:))
    }

    /// The user handle the account's passkeys already carry, if it has any.
    public func userHandle(userID: String) async throws -> String? {
        try await connection.first("""
            SELECT p.user_handle FROM passkeys p JOIN identities i ON i.id = p.identity_id
            WHERE i.user_id = $1 ORDER BY p.created_at LIMIT 1
            """, [.text(userID)]).map { try $0.string("user_handle") }
    }

    /// - Returns: false when the account has no such passkey.
    public func rename(identityID: String, userID: String, to name: String) async throws -> Bool {
        try await connection.first("""
            UPDATE passkeys SET name = $3
            WHERE identity_id = $1 AND identity_id IN (SELECT id FROM identities WHERE user_id = $2) RETURNING identity_id
            """, [.text(identityID), .text(userID), .text(name)]) != nil
    }

    /// Records a sign-in's counter, but only over the one read before it: two sign-ins that race with the same
    /// counter cannot both pass (a replayed assertion is refused here even when it raced the original).
    /// - Returns: false when the stored counter moved on meanwhile.
    public func recordUse(identityID: String, readCount: Int64, signCount: Int64, backedUp: Bool, at date: Date) async throws -> Bool {
        try await connection.first("""
            UPDATE passkeys SET sign_count = $3, backed_up = $4, last_used_at = $5
            WHERE identity_id = $1 AND sign_count = $2 RETURNING identity_id
            """, [.text(identityID), .integer(readCount), .integer(signCount), .bool(backedUp), .date(date)]) != nil
    }

    // MARK: challenges

    public func insertChallenge(hash: String, _ record: PasskeyChallengeRecord) async throws {
        try await connection.query("""
            INSERT INTO passkey_challenges (challenge_hash, purpose, user_id, session_id, user_handle, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [.text(hash), .text(record.purpose), .optionalText(record.userID), .optionalText(record.sessionID),
                  .optionalText(record.userHandle), .date(record.expiresAt)])
    }

    /// Takes the challenge: deleted as it is read, so only one ceremony ever gets it.
    public func takeChallenge(hash: String, purpose: String) async throws -> PasskeyChallengeRecord? {
        try await connection.first("""
            DELETE FROM passkey_challenges WHERE challenge_hash = $1 AND purpose = $2
            RETURNING purpose, user_id, session_id, user_handle, expires_at
            """, [.text(hash), .text(purpose)]).map { row in
            PasskeyChallengeRecord(purpose: try row.string("purpose"), userID: try row.optionalString("user_id"),
                                   sessionID: try row.optionalString("session_id"),
                                   userHandle: try row.optionalString("user_handle"), expiresAt: try row.date("expires_at"))
        }
    }

    public func deleteExpiredChallenges(before date: Date) async throws {
        try await connection.query("DELETE FROM passkey_challenges WHERE expires_at < $1", [.date(date)])
    }
}
