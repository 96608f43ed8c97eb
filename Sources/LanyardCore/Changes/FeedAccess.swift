import Foundation
import LanyardStore

/// Whether a live reader of an account's feed may go on reading: its session active and its account neither
/// disabled, deleted nor merged away. Read when the reader is woken by an access signal and periodically, so a
/// session ended on any instance ends the streams on every one (reference section 13).
public enum FeedAccess: Sendable, Equatable {
    case open
    case sessionEnded
    case accountDisabled
    case accountDeleted
    case accountMerged(into: String)

    public static func check(userID: String, sessionID: String, _ dependencies: CoreDependencies) async throws -> FeedAccess {
        let now = dependencies.clock.now()
        let (user, session) = try await dependencies.database.read { connection in
            (try await UserStore(connection).find(id: userID), try await SessionStore(connection).find(id: sessionID))
        }
        guard let user else { return .accountDeleted }
        if let into = user.mergedInto { return .accountMerged(into: into) }
        if user.disabledAt != nil { return .accountDisabled }
        guard let session, session.userID == userID, session.isActive(at: now) else { return .sessionEnded }
        return .open
    }
}
