import Foundation
import LanyardWire

extension GroupRole {
    /// `field`'s role, one of `allowed`.
    static func parse(_ text: String, field: String, allowed: [GroupRole]) throws -> GroupRole {
        guard let role = GroupRole(rawValue: text), allowed.contains(role) else {
            throw LanyardError.invalidRequest(field: field, "\(field) must be one of \(allowed.map(\.rawValue).joined(separator: ", "))")
        }
        return role
    }
}

extension GroupPolicy.Write {
    /// The lowest role that writes, where a role decides (`author` asks authorship too).
    var role: GroupRole? {
        switch self {
        case .member: .member
        case .admin: .admin
        case .owner: .owner
        case .author: nil
        }
    }
}

/// The rules of a collection's policy (reference section 14): `read` at least `viewer`, `member` or `admin`; `write`
/// a role at least, or `author` (members write only what they created, admins anything).
extension GroupPolicy {
    static let readRoles: [GroupRole] = [.viewer, .member, .admin]

    func mayRead(_ role: GroupRole) -> Bool { role >= read }

    /// Whether `role` (the account `userID`) may write `existing` (`nil`: a new record).
    func mayWrite(_ role: GroupRole, userID: String, existingCreatedBy: String?) -> Bool {
        if let needed = write.role { return role >= needed }
        return role >= .admin || (role >= .member && (existingCreatedBy == nil || existingCreatedBy == userID))
    }

    /// The role a refused writer lacks, for `INSUFFICIENT_ROLE`'s `details.required`.
    var writeRequirement: GroupRole { write.role ?? .member }
}

/// The pure rules of who may do what to whom in a group.
enum GroupPermissions {
    /// Owner and admins invite; members too when the group allows it. Never for a role above the inviter's, nor owner.
    static func mayInvite(_ role: GroupRole, membersCanInvite: Bool) -> Bool {
        role >= .admin || (role == .member && membersCanInvite)
    }

    static func mayGrant(_ invited: GroupRole, inviter: GroupRole) -> Bool {
        invited != .owner && invited <= inviter
    }

    /// The role an invite grants when it is accepted: at most what its maker may grant now. `nil` when the maker is
    /// no longer a member or may no longer invite (the invite is dead: `revoked`).
    static func grantedAtAccept(_ invited: GroupRole, makerRole: GroupRole?, membersCanInvite: Bool) -> GroupRole? {
        guard let makerRole, mayInvite(makerRole, membersCanInvite: membersCanInvite) else { return nil }
        return min(invited, makerRole == .owner ? .admin : makerRole)
    }

    /// The owner removes anyone but themself; admins remove members and viewers.
    static func mayRemove(_ target: GroupRole, remover: GroupRole) -> Bool {
        switch remover {
        case .owner: target != .owner
        case .admin: target < .admin
        default: false
        }
    }

    /// Who takes over from a deleted owner: the longest-standing admin, else the longest-standing member; `nil`
    /// when neither is left (viewers never inherit a group: it dissolves).
    static func successor(_ members: [(userID: String, role: GroupRole, joinedAt: Date)]) -> String? {
        func first(_ role: GroupRole) -> String? {
            members.filter { $0.role == role }.min { ($0.joinedAt, $0.userID) < ($1.joinedAt, $1.userID) }?.userID
        }
        return first(.admin) ?? first(.member)
    }
}

extension LanyardError {
    public static func insufficientRole(_ required: GroupRole) -> LanyardError {
        LanyardError(.insufficientRole, "This needs the \(required.rawValue) role in the group",
                     details: ["required": .string(required.rawValue)])
    }

    public static func inviteUnusable(_ reason: String) -> LanyardError {
        let message = switch reason {
        case "expired": "This invite has expired"
        case "revoked": "This invite was revoked"
        default: "This invite has been used as many times as it may"
        }
        return LanyardError(.inviteUnusable, message, details: ["reason": .string(reason)])
    }

    public static func groupLimit(_ reason: String, limit: Int) -> LanyardError {
        let message = switch reason {
        case "group_full": "This group has as many members as it may (\(limit))"
        case "too_many_groups": "An account may belong to at most \(limit) groups"
        default: "A group may have at most \(limit) pending invites"
        }
        return LanyardError(.groupLimit, message, details: ["reason": .string(reason), "limit": .number(Double(limit))])
    }

    public static let ownerMustTransfer = LanyardError(
        .ownerMustTransfer, "The owner cannot leave the group; transfer it to another member first")

    public static let noSuchGroup = LanyardError(.notFound, "No such group")
}
