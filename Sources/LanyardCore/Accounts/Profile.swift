import Foundation
import LanyardStore
import LanyardSupport
import struct LanyardWire.User
import struct LanyardWire.AccountResponse

/// `GET` / `PATCH /v1/users/me`.
public struct Profile: Sendable {
    public static let maximumDisplayNameLength = 200

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// Sets or clears (`nil`) the display name.
    public func setDisplayName(_ name: String?, caller: Caller) async throws -> AccountResponse {
        let trimmed = name?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let trimmed, trimmed.count > Self.maximumDisplayNameLength {
            throw LanyardError.invalidRequest(field: "display_name",
                                              "display_name is longer than \(Self.maximumDisplayNameLength) characters")
        }
        let dependencies = self.dependencies
        return try await dependencies.database.transaction { connection in
            let now = dependencies.clock.now()
            try await UserStore(connection).setDisplayName(id: caller.userID, to: trimmed?.isEmpty == true ? nil : trimmed,
                                                           at: now)
            try await dependencies.audit(connection, at: now, clientIP: nil)
                .write(.userUpdated, userID: caller.userID, sessionID: caller.sessionID, details: ["field": "display_name"])
            let account = try await User.loadWithGroups(userID: caller.userID, connection: connection)
            let legacy = try await ImportStore(connection).legacyID(userID: caller.userID)
            return AccountResponse(user: account.user, legacyID: legacy?.id, legacySource: legacy?.source)
        }
    }
}
