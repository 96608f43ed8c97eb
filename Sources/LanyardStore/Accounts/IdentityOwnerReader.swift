/// Reads an identity by provider and subject with its account and the account's identities: a sign-in's
/// first read, which decides its writes. Batched on PostgreSQL (`BatchedRead`), one batcher per provider since a
/// batch shares its provider; a sign-in reads it before its transaction there, where the read never was inside
/// one (read committed, before the first write). SQLite reads it inside the transaction, on the writer.
public struct IdentityOwnerReader: Sendable {
    private let byProvider: [String: BatchedRead<IdentityWithOwner>]

    /// - Parameter providers: the provider names that are batched.
    public init(database: any Database, providers: [String]) {
        var byProvider: [String: BatchedRead<IdentityWithOwner>] = [:]
        for provider in providers {
            byProvider[provider] = BatchedRead(database: database) { connection, subjects in
                try await IdentityStore(connection).findWithOwners(provider: provider, providerUserIDs: subjects)
            }
        }
        self.byProvider = byProvider
    }

    /// The batched read for `provider`, or `nil` where reads are not batched (SQLite) or the provider unknown.
    public func batched(provider: String) -> BatchedRead<IdentityWithOwner>? {
        byProvider[provider].flatMap { $0.isBatched ? $0 : nil }
    }
}
