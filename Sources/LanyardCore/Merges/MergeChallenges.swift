import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

/// `POST /v1/users/me/merge/challenge` (reference section 15): a nonce the app hands the other account's sign-in
/// sheet, so the ID token it gets back proves both accounts at once. Single use, 5 minutes, bound to the session.
public struct MergeChallenges: Sendable {
    public static let lifetime: TimeInterval = 300

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func issue(caller: Caller) async throws -> MergeChallenge {
        guard !caller.isAnonymous else { throw MergeDecision.anonymousRefusal }
        try Authenticator(dependencies).requireRecentSignIn(caller)
        // Counted apart from links and merges, at the same rate: issuing challenges costs the database a row each.
        try await dependencies.rateLimiter.check(.link, key: "merge-challenge:" + caller.userID)
        let now = dependencies.clock.now()
        let nonce = Base64URL.encode(dependencies.random.bytes(32))
        let id = dependencies.random.newID(at: now)
        try await dependencies.database.transaction { connection in
            try await MergeStore(connection).insertChallenge(id: id, sessionID: caller.sessionID, nonce: nonce, at: now,
                                                             expiresAt: now.addingTimeInterval(Self.lifetime))
        }
        return MergeChallenge(nonce: nonce, expiresIn: Int(Self.lifetime))
    }
}
