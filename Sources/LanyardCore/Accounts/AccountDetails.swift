import Foundation
import LanyardStore
import LanyardSupport

/// Everything stored about an account that an API may show: the account, its identities (oldest link first,
/// with their ids and provider subjects) and its metadata. For surfaces richer than the reference's `User`, such as
/// the GoTrue-compatible one.
public struct AccountDetails: Sendable {
    public var user: UserRecord
    public var identities: [IdentityRecord]
    public var metadata: [String: JSONValue]

    public static func load(userID: String, _ dependencies: CoreDependencies) async throws -> AccountDetails {
        try await dependencies.database.read { connection in
            guard let (user, identities) = try await UserStore(connection).findWithIdentities(id: userID) else {
                throw LanyardError.unauthorized("This account no longer exists")
            }
            let metadata = UserMetadata.decoded(try await UserMetadataStore(connection).find(userID: userID))
            return AccountDetails(user: user, identities: identities, metadata: metadata)
        }
    }
}
