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

    /// How precisely `last_sign_in_at` is kept. A sign-in within this long of the recorded one that says
    /// nothing new about the email writes nothing (the audit log and the session keep its exact time), so
    /// one identity signing in many times at once (a shared demo account, a client retrying in a loop, a
    /// load test) does not turn its row into a queue of updates; on PostgreSQL every update of a row also
    /// leaves a version behind that each later read of it steps over until it is cleaned up.
    public static let signInResolution: TimeInterval = 1

    /// Whether a sign-in at `date` with these claims changes what this record says: the email, its flags,
    /// or a last sign-in at least `signInResolution` old. A missing email keeps the stored one.
    public func signInChanges(at date: Date, email: String?, emailVerified: Bool, isPrivateEmail: Bool) -> Bool {
        if let email, email != self.email { return true }
        if emailVerified != self.emailVerified || isPrivateEmail != self.isPrivateEmail { return true }
        guard let lastSignInAt else { return true }
        return date.timeIntervalSince(lastSignInAt) >= Self.signInResolution
    }

    /// What `IdentityStore.recordSignIn` writes, applied to this record, so a sign-in can answer with the
    /// account it read without reading it again.
    public mutating func recordSignIn(at date: Date, email: String?, emailVerified: Bool, isPrivateEmail: Bool) {
        lastSignInAt = date
        self.email = email ?? self.email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
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

/// An identity with its account and all of the account's identities (oldest link first, `identity` among them).
public struct IdentityWithOwner: Sendable {
    public var identity: IdentityRecord
    public var owner: UserRecord
    public var ownerIdentities: [IdentityRecord]
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
        try await insert(identity, sql: Self.insertWithOwnerID)
    }

    /// Inserts the first identity of an account this transaction creates: first in the account's order,
    /// without reading it, so that on PostgreSQL concurrent sign-ups share their commit (`GroupCommit`).
    /// Held back and throwing like `insert`.
    public func insertFirst(_ identity: IdentityRecord) async throws {
        try await insert(identity, sql: Self.insertFirstWithOwnerID)
    }

    /// Inserts an identity at `position` in its account's order, for an account this transaction creates with
    /// several (an import). Held back and throwing like `insert`.
    public func insert(_ identity: IdentityRecord, at position: Int64) async throws {
        try await insert(identity, sql: Self.insertAtPositionWithOwnerID, position: position)
    }

    /// Inserts an identity into an account that must still be live, checked in the insert itself, so the
    /// caller need not lock the account when it reads it: the owner is looked up inside the statement, on
    /// PostgreSQL under `FOR NO KEY UPDATE`, which waits for a merge or deletion of the account in progress and
    /// then reads its outcome. An account merged away or deleted since the caller read it leaves `user_id`
    /// NULL, which the column refuses, and every write held with this one is undone with it. Held back like
    /// `insert`; it must be the first write held, so that in the combined statement the owner is locked
    /// before another held write touches the account's row.
    ///
    /// With `position` (the place after the account's last identity, as the caller read it) the insert does
    /// not read the account's identities, so that on PostgreSQL links to different accounts share their commit
    /// (`GroupCommit`); without it, the insert takes the place after the last one as it writes.
    /// - Throws: `StoreError.notNullViolation` when the account is gone or merged; `StoreError.uniqueViolation`
    ///   as `insert`, and when a concurrent link took the same place in the account's order (retry, reading
    ///   again).
    public func link(_ identity: IdentityRecord, at position: Int64? = nil) async throws {
        let owner = "(SELECT id FROM users WHERE id = $2 AND merged_into IS NULL\(connection.dialect.forNoKeyUpdate))"
        let sql = position == nil ? Self.insertStatement(owner: owner) : Self.insertStatement(owner: owner, position: "$10")
        try await insert(identity, sql: sql, position: position)
    }

    /// The insert with `owner` as the SQL of the `user_id` value and `position` as that of `link_position`
    /// (by default after the account's last); `$2` is the identity's account id.
    private static func insertStatement(
        owner: String,
        position: String = "(SELECT COALESCE(MAX(link_position), 0) + 1 FROM identities WHERE user_id = $2)"
    ) -> String {
        """
        INSERT INTO identities (id, user_id, provider, provider_user_id, email, email_verified,
                                is_private_email, linked_at, last_sign_in_at, link_position)
        VALUES ($1, \(owner), $3, $4, $5, $6, $7, $8, $9, \(position))
        """
    }

    /// Built once for sign-ins, which insert new identities far more often than links do.
    private static let insertWithOwnerID = insertStatement(owner: "$2")
    private static let insertFirstWithOwnerID = insertStatement(owner: "$2", position: "1")
    private static let insertAtPositionWithOwnerID = insertStatement(owner: "$2", position: "$10")

    private func insert(_ identity: IdentityRecord, sql: String, position: Int64? = nil) async throws {
        try await connection.enqueueWrite(sql, [
            .text(identity.id), .text(identity.userID), .text(identity.provider), .text(identity.providerUserID),
            .optionalText(identity.email), .bool(identity.emailVerified), .bool(identity.isPrivateEmail),
            .date(identity.linkedAt), .optionalDate(identity.lastSignInAt),
        ] + (position.map { [.integer($0)] } ?? []))
    }

    public func find(id: String) async throws -> IdentityRecord? {
        try await connection.first("SELECT * FROM identities WHERE id = $1", [.text(id)]).map(IdentityRecord.init(row:))
    }

    public func find(provider: String, providerUserID: String) async throws -> IdentityRecord? {
        try await connection.first("SELECT * FROM identities WHERE provider = $1 AND provider_user_id = $2",
                                    [.text(provider), .text(providerUserID)]).map(IdentityRecord.init(row:))
    }

    /// The identity with its account and the account's identities: what sign-in decides its writes from and
    /// answers with, in one query.
    public func findWithOwner(provider: String, providerUserID: String) async throws -> IdentityWithOwner? {
        try await findWithOwners(provider: provider, providerUserIDs: [providerUserID])[providerUserID]
    }

    /// `findWithOwner` for up to `BatchedKeys.maximum` accounts of one provider, in one query (batched on
    /// PostgreSQL, `IdentityOwnerReader`). Those not found are left out.
    public func findWithOwners(provider: String, providerUserIDs: [String]) async throws -> [String: IdentityWithOwner] {
        try await BatchedKeys.rows(Self.identitiesWithOwners, keys: providerUserIDs, shared: [.text(provider)],
                                   column: "lookup_provider_user_id", on: connection).mapValues { rows in
            let identities = try UserStore.identities(in: rows)
            let subject = try rows[0].string("lookup_provider_user_id")
            guard let identity = identities.first(where: { $0.provider == provider && $0.providerUserID == subject }) else {
                throw StoreError.unexpectedValue(column: "lookup_provider_user_id")
            }
            return IdentityWithOwner(identity: identity, owner: try UserRecord(row: rows[0]), ownerIdentities: identities)
        }
    }

    /// Built once (the statement caches are keyed by the text).
    private static let identitiesWithOwners = BatchedKeys.Statements(orderBy: "identity_link_position", shared: 1) { subject in
        """
        SELECT u.*, \(UserStore.identityColumns), i.link_position AS identity_link_position,
               m.provider_user_id AS lookup_provider_user_id
        FROM identities m JOIN users u ON u.id = m.user_id JOIN identities i ON i.user_id = u.id
        WHERE m.provider = $1 AND m.provider_user_id = \(subject)
        """
    }

    /// Moves an identity to another account, after that account's last (a full merge, reference section 15).
    public func move(identityID: String, to userID: String) async throws {
        try await connection.query("""
            UPDATE identities SET user_id = $2,
                link_position = (SELECT COALESCE(MAX(link_position), 0) + 1 FROM identities WHERE user_id = $2)
            WHERE id = $1
            """, [.text(identityID), .text(userID)])
    }

    /// Detaches an identity from its account (a merge's `release`).
    /// How many identities of `provider` the account holds.
    public func count(userID: String, provider: String) async throws -> Int {
        Int(try await connection.first("SELECT count(*) AS n FROM identities WHERE user_id = $1 AND provider = $2",
                                       [.text(userID), .text(provider)])?.integer("n") ?? 0)
    }

    public func delete(id: String) async throws {
        try await connection.query("DELETE FROM identities WHERE id = $1", [.text(id)])
    }

    /// The account's identities, oldest link first (by position, so links in the same millisecond keep their order).
    public func list(userID: String) async throws -> [IdentityRecord] {
        try await connection.query("SELECT * FROM identities WHERE user_id = $1 ORDER BY link_position",
                                   [.text(userID)]).map(IdentityRecord.init(row:))
    }

    /// Records a sign-in of `identity` (as the transaction read it) and refreshes what the provider now says
    /// about the email (`IdentityRecord.recordSignIn` is the same change to a record in memory); writes nothing
    /// when `IdentityRecord.signInChanges` says the sign-in changes nothing.
    public func recordSignIn(of identity: IdentityRecord, at date: Date, email: String?, emailVerified: Bool,
                             isPrivateEmail: Bool) async throws {
        guard identity.signInChanges(at: date, email: email, emailVerified: emailVerified, isPrivateEmail: isPrivateEmail) else {
            return
        }
        try await connection.enqueueWrite("""
            UPDATE identities SET last_sign_in_at = $2, email = COALESCE($3, email), email_verified = $4,
                                  is_private_email = $5
            WHERE id = $1
            """, [.text(identity.id), .date(date), .optionalText(email), .bool(emailVerified), .bool(isPrivateEmail)])
    }

    /// - Returns: whether an identity was removed.
    @discardableResult
    public func delete(userID: String, provider: String) async throws -> Bool {
        !(try await connection.query("DELETE FROM identities WHERE user_id = $1 AND provider = $2 RETURNING id",
                                     [.text(userID), .text(provider)]).isEmpty)
    }
}
