/// Reads an identity by provider and subject with its account and the account's identities: a sign-in's or a
/// link's first read, which decides its writes. The store decides how. On PostgreSQL the read for a
/// transaction's first attempt is made before the transaction, shared with the reads of concurrent requests
/// (`BatchedRead`, one batcher per provider since a batch shares its provider): at read committed a plain read
/// before the first write means the same inside a transaction or outside. A retry reads again inside. SQLite
/// reads inside the transaction, on the writer.
public struct IdentityOwnerReader: Sendable {
    private let byProvider: [String: BatchedRead<IdentityWithOwner>]

    /// - Parameter providers: the provider names that are read.
    public init(database: any Database, providers: [String]) {
        var byProvider: [String: BatchedRead<IdentityWithOwner>] = [:]
        for provider in providers {
            byProvider[provider] = BatchedRead(database: database) { connection, subjects in
                try await IdentityStore(connection).findWithOwners(provider: provider, providerUserIDs: subjects)
            }
        }
        self.byProvider = byProvider
    }

    /// The lookup of one identity for the attempts of one transaction.
    public func lookup(provider: String, subject: String) async throws -> IdentityLookup {
        guard let shared = byProvider[provider], shared.isBatched else {
            return IdentityLookup(provider: provider, subject: subject, readAhead: nil)
        }
        return IdentityLookup(provider: provider, subject: subject, readAhead: FirstAttempt(try await shared.read(subject)))
    }
}

/// One identity's read with its owner, for each attempt of a transaction (`IdentityOwnerReader.lookup`).
public final class IdentityLookup: Sendable {
    private let provider: String
    private let subject: String
    private let readAhead: FirstAttempt<IdentityWithOwner?>?

    init(provider: String, subject: String, readAhead: FirstAttempt<IdentityWithOwner?>?) {
        self.provider = provider
        self.subject = subject
        self.readAhead = readAhead
    }

    /// What was read for the first attempt before the transaction began, the first time it is asked for; `nil`
    /// when the store reads inside the transaction, or after the first attempt.
    public func takeReadAhead() -> IdentityWithOwner?? {
        readAhead?.take()
    }

    /// The identity with its owner for this attempt of the transaction on `connection`.
    public func read(on connection: any DatabaseConnection) async throws -> IdentityWithOwner? {
        if let ahead = takeReadAhead() { return ahead }
        return try await IdentityStore(connection).findWithOwner(provider: provider, providerUserID: subject)
    }
}
