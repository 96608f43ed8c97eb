import Foundation
import LanyardStore
import LanyardWire

/// The caller's membership in a group, read from the database on every request (a token's `groups` claim is never
/// trusted): a removed member is refused on the next request whatever its token says.
struct GroupMembership: Sendable {
    let group: GroupRow
    let role: GroupRole
    /// The collection's policy in force, when the check named a collection.
    var policy = GroupPolicy.standard

    /// The caller's membership; `404 NOT_FOUND` for a group that does not exist or that the caller is not in, so
    /// non-members learn nothing of it. `lock` takes the group row's lock first (every change to the group does).
    /// With `collection`, the collection's policy comes in the same query.
    static func require(_ groupID: String, userID: String, _ connection: any DatabaseConnection,
                        collection: String? = nil, lock: Bool = false) async throws -> GroupMembership {
        guard let found = try await GroupStore(connection).membership(groupID: groupID, userID: userID,
                                                                      collection: collection, lock: lock),
              let role = GroupRole(rawValue: found.role) else { throw LanyardError.noSuchGroup }
        var membership = GroupMembership(group: found.group, role: role)
        if let stored = found.policy, let read = GroupRole(rawValue: stored.read), let write = GroupPolicy.Write(rawValue: stored.write) {
            membership.policy = GroupPolicy(read: read, write: write)
        }
        return membership
    }

    /// Refuses a role below `needed` with `INSUFFICIENT_ROLE`.
    func require(_ needed: GroupRole) throws {
        guard role >= needed else { throw LanyardError.insufficientRole(needed) }
    }
}
