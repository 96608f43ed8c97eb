import Foundation
import LanyardStore

/// The caller's membership in a group, read from the database on every request (a token's `groups` claim is never
/// trusted): a removed member is refused on the next request whatever its token says.
struct GroupMembership: Sendable {
    let group: GroupRow
    let role: GroupRole

    /// The caller's membership; `404 NOT_FOUND` for a group that does not exist or that the caller is not in, so
    /// non-members learn nothing of it. `lock` takes the group row's lock first (every change to the group does).
    static func require(_ groupID: String, userID: String, _ connection: any DatabaseConnection,
                        lock: Bool = false) async throws -> GroupMembership {
        let groups = GroupStore(connection)
        guard let group = lock ? try await groups.findForUpdate(id: groupID) : try await groups.find(id: groupID),
              let member = try await GroupMemberStore(connection).find(groupID: groupID, userID: userID),
              let role = GroupRole(rawValue: member.role) else { throw LanyardError.noSuchGroup }
        return GroupMembership(group: group, role: role)
    }

    /// Refuses a role below `needed` with `INSUFFICIENT_ROLE`.
    func require(_ needed: GroupRole) throws {
        guard role >= needed else { throw LanyardError.insufficientRole(needed) }
    }
}
