import Foundation
import LanyardStore
import LanyardSupport

/// An account's free-form metadata (what Supabase calls `user_metadata`): a JSON object the app writes about
/// its user. Updates merge key by key; a key set to `null` is removed.
public struct UserMetadata: Sendable {
    public static let maximumBytes = 16 * 1024

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// `current` with `patch` applied: keys of the patch replace the account's, `null` removes a key.
    public static func merged(_ current: [String: JSONValue], with patch: [String: JSONValue]) -> [String: JSONValue] {
        var result = current
        for (key, value) in patch {
            if value == .null { result.removeValue(forKey: key) } else { result[key] = value }
        }
        return result
    }

    /// The JSON text stored for `metadata`; `INVALID_REQUEST` (field `data`) when it is over the limit.
    public static func encoded(_ metadata: [String: JSONValue]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(metadata), as: UTF8.self)
        guard text.utf8.count <= maximumBytes else {
            throw LanyardError.invalidRequest(field: "data", "data is larger than \(maximumBytes / 1024) KiB")
        }
        return text
    }

    static func decoded(_ text: String?) -> [String: JSONValue] {
        guard let text, case .object(let members)? = try? JSONParser.parse(Array(text.utf8)) else { return [:] }
        return members
    }

    /// Applies `patch` to `userID`'s metadata and answers the result.
    @discardableResult
    public func update(userID: String, with patch: [String: JSONValue]) async throws -> [String: JSONValue] {
        let dependencies = self.dependencies
        return try await dependencies.database.transaction { connection in
            let store = UserMetadataStore(connection)
            guard try await UserStore(connection).findForUpdate(id: userID) != nil else {
                throw LanyardError.unauthorized("This account no longer exists")
            }
            let result = Self.merged(Self.decoded(try await store.find(userID: userID)), with: patch)
            let now = dependencies.clock.now()
            try await store.save(userID: userID, data: try Self.encoded(result), at: now)
            try await dependencies.audit(connection, at: now, clientIP: nil)
                .write(.userUpdated, userID: userID, details: ["field": "user_metadata"])
            return result
        }
    }
}
