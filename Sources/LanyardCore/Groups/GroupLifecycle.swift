import Foundation
import LanyardStore
import LanyardWire

/// What happens to an account's groups when the account ends (reference section 14): deleted, its memberships go
/// in the deletion's transaction and each group it owned follows its `on_owner_deleted`; merged (a guest signing
/// in), its memberships follow it into the account, the higher role kept and never two owners.
enum GroupLifecycle {
    /// Inside the deletion's transaction, after the account row's lock: each group's row is locked in turn.
    /// Returns the accounts whose feeds change (the other members of dissolved groups).
    static func accountDeleting(_ userID: String, _ connection: any DatabaseConnection, _ dependencies: CoreDependencies,
                                clientIP: String?) async throws -> [String] {
        var affected: [String] = []
        let members = GroupMemberStore(connection)
        let audit = dependencies.audit(connection, at: dependencies.clock.now(), clientIP: clientIP)
        // Groups locked in id order, as every multi-group change takes them, so two such changes never deadlock.
        for listed in try await members.memberships(userID: userID).sorted(by: { $0.groupID < $1.groupID }) {
            guard let group = try await GroupStore(connection).findForUpdate(id: listed.groupID),
                  // Read again under the group's lock: a hand-over or removal may have committed since the list.
                  let membership = try await members.find(groupID: group.id, userID: userID) else { continue }
            guard membership.role == GroupRole.owner.rawValue else {
                try await members.remove(groupID: group.id, userID: userID)
                try await GroupMembers.revokeInvites(madeBy: userID, groupID: group.id, connection, dependencies,
                                                     now: dependencies.clock.now())
                try await audit.write(.groupMemberRemoved, userID: userID, details: [
                    "group_id": group.id, "actor": userID, "role": membership.role, "reason": "account_deleted"])
                continue
            }
            let others = try await members.list(groupID: group.id).filter { $0.userID != userID }
            let successor = GroupPermissions.successor(others.compactMap { member in
                GroupRole(rawValue: member.role).map { (member.userID, $0, member.joinedAt) }
            })
            if group.onOwnerDeleted == LanyardGroup.OwnerDeletion.dissolve.rawValue || successor == nil {
                affected += try await Groups.remove(group, actor: userID, connection, dependencies, clientIP: clientIP)
                continue
            }
            try await members.remove(groupID: group.id, userID: userID)
            try await GroupMembers.revokeInvites(madeBy: userID, groupID: group.id, connection, dependencies,
                                                 now: dependencies.clock.now())
            try await GroupMembers.handOver(groupID: group.id, from: nil, to: successor!, connection)
            try await audit.write(.groupMemberRemoved, userID: userID, details: [
                "group_id": group.id, "actor": userID, "role": membership.role, "reason": "account_deleted"])
            try await audit.write(.groupOwnershipTransferred, userID: successor!, details: [
                "group_id": group.id, "actor": userID, "from": userID, "to": successor!, "reason": "owner_deleted"])
            affected.append(successor!)
        }
        return affected.filter { $0 != userID }
    }
}
