import Foundation
import LanyardStore

/// One kind of data an account owns that must follow a guest into the account they sign into.
/// New data kinds plug in here by adding a step to `AccountMerge.steps`.
public protocol MergeStep: Sendable {
    func move(from anonymousID: String, into targetID: String, connection: any DatabaseConnection,
              audit: AuditLog, now: Date) async throws
}

/// Merges an anonymous account into another, inside the caller's transaction: every step runs or none does.
public struct AccountMerge: Sendable {
    public var steps: [any MergeStep]

    public init(steps: [any MergeStep] = AccountMerge.defaultSteps) {
        self.steps = steps
    }

    public static let defaultSteps: [any MergeStep] = [ProfileMergeStep(), UserMetadataMergeStep(), RecordsMergeStep(),
                                                       GroupsMergeStep(), SessionsMergeStep()]

    func merge(anonymous: UserRecord, into targetID: String, connection: any DatabaseConnection,
               audit: AuditLog, now: Date) async throws {
        for step in steps {
            try await step.move(from: anonymous.id, into: targetID, connection: connection, audit: audit, now: now)
        }
        try await UserStore(connection).markMerged(id: anonymous.id, into: targetID, at: now)
        try await audit.write(.accountMerged, userID: targetID, details: ["from": anonymous.id, "to": targetID,
                                                                          "kind": "guest"])
    }
}

/// The guest's display name fills the target's when the target has none.
struct ProfileMergeStep: MergeStep {
    func move(from anonymousID: String, into targetID: String, connection: any DatabaseConnection,
              audit: AuditLog, now: Date) async throws {
        let users = UserStore(connection)
        if let name = try await users.find(id: anonymousID)?.displayName {
            try await users.setDisplayNameIfEmpty(id: targetID, to: name, at: now)
        }
    }
}

/// The guest's sessions end: the device now holds the target account's session instead.
struct SessionsMergeStep: MergeStep {
    func move(from anonymousID: String, into targetID: String, connection: any DatabaseConnection,
              audit: AuditLog, now: Date) async throws {
        try await SessionStore(connection).revokeAll(userID: anonymousID, reason: "merged", at: now)
    }
}
