import Foundation

public struct IdentityRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var provider: String
    public var providerUserID: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var linkedAt: Date
    public var lastSignInAt: Date?

    public init(id: String, userID: String, provider: String, providerUserID: String, email: String?,
                emailVerified: Bool, isPrivateEmail: Bool, linkedAt: Date, lastSignInAt: Date?) {
        self.id = id
        self.userID = userID
        self.provider = provider
        self.providerUserID = providerUserID
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.linkedAt = linkedAt
        self.lastSignInAt = lastSignInAt
    }

    init(row: SQLRow) throws {
        id = try row.string("id")
        userID = try row.string("user_id")
        provider = try row.string("provider")
        providerUserID = try row.string("provider_user_id")
        email = try row.optionalString("email")
        emailVerified = try row.bool("email_verified")
        isPrivateEmail = try row.bool("is_private_email")
        linkedAt = try row.date("linked_at")
        lastSignInAt = try row.optionalDate("last_sign_in_at")
    }
}

public struct IdentityWithOwner: Sendable {
    public var identity: IdentityRecord
    public var ownerLastActiveAt: Date
    public var ownerIsNamed: Bool
}

/// The `identities` table. Its unique constraints are what keep a provider account on one Lanyard account.
public struct IdentityStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// - Throws: `StoreError.uniqueViolation` when the provider account or this provider is already taken
    ///   (on PostgreSQL possibly only when the transaction commits: the insert is held back, see `enqueueWrite`).
    public func insert(_ identity: IdentityRecord) async throws {
        try await connection.enqueueWrite("""
            INSERT INTO identities (id, user_id, provider, provider_user_id, email, email_verified,
                                    is_private_email, linked_at, last_sign_in_at, link_position)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
                    (SELECT COALESCE(MAX(link_position), 0) + 1 FROM identities WHERE user_id = $2))
            """, [.text(identity.id), .text(identity.userID), .text(identity.provider), .text(identity.providerUserID),
                  .optionalText(identity.email), .bool(identity.emailVerified), .bool(identity.isPrivateEmail),
                  .date(identity.linkedAt), .optionalDate(identity.lastSignInAt)])
    }

    public func find(provider: String, providerUserID: String) async throws -> IdentityRecord? {
        try await connection.first("SELECT * FROM identities WHERE provider = $1 AND provider_user_id = $2",
                                    [.text(provider), .text(providerUserID)]).map(IdentityRecord.init(row:))
    }

    /// The identity with what sign-in decides its account's writes from: when the account was last active,
    /// and whether it has a name.
    public func findWithOwner(provider: String, providerUserID: String) async throws -> IdentityWithOwner? {
        guard let row = try await connection.first("""
            SELECT i.*, u.last_active_at AS owner_last_active_at, u.display_name IS NOT NULL AS owner_is_named
            FROM identities i JOIN users u ON u.id = i.user_id WHERE i.provider = $1 AND i.provider_user_id = $2
            """, [.text(provider), .text(providerUserID)]) else { return nil }
        return IdentityWithOwner(identity: try IdentityRecord(row: row),
                                 ownerLastActiveAt: try row.date("owner_last_active_at"),
                                 ownerIsNamed: try row.bool("owner_is_named"))
    }

    /// The account's identities, oldest link first (by position, so links in the same millisecond keep their order).
    public func list(userID: String) async throws -> [IdentityRecord] {
        try await connection.query("SELECT * FROM identities WHERE user_id = $1 ORDER BY link_position",
                                   [.text(userID)]).map(IdentityRecord.init(row:))
    }

    /// Records a sign-in and refreshes what the provider now says about the email.
    public func recordSignIn(id: String, at date: Date, email: String?, emailVerified: Bool, isPrivateEmail: Bool) async throws {
        try await connection.enqueueWrite("""
            UPDATE identities SET last_sign_in_at = $2, email = COALESCE($3, email), email_verified = $4,
                                  is_private_email = $5
            WHERE id = $1
            """, [.text(id), .date(date), .optionalText(email), .bool(emailVerified), .bool(isPrivateEmail)])
    }

    /// - Returns: whether an identity was removed.
    @discardableResult
    public func delete(userID: String, provider: String) async throws -> Bool {
        !(try await connection.query("DELETE FROM identities WHERE user_id = $1 AND provider = $2 RETURNING id",
                                     [.text(userID), .text(provider)]).isEmpty)
    }
}
