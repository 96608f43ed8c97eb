import Foundation
import LanyardStore
import LanyardWire
import LanyardSupport

/// Operators' view of groups (reference section 14): `/v1/admin/groups`, the console's Groups page and
/// `lanyard groups`. Members are shown as groups show them to members: an email only where the member shares it,
/// never an Apple relay address.
public struct GroupAdministration: Sendable {
    public static let maximumLimit = 200

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// Groups whose name or id contains `query`, newest first.
    public func groups(query: String?, limit: Int?) async throws -> GroupList {
        let limit = limit ?? 50
        guard (1...Self.maximumLimit).contains(limit) else {
            throw LanyardError.invalidRequest(field: "limit", "limit must be from 1 to \(Self.maximumLimit)")
        }
        let rows = try await dependencies.database.read { try await GroupStore($0).search(query: query, limit: limit) }
        return GroupList(groups: rows.map { LanyardGroup($0.group, memberCount: $0.memberCount, role: nil) })
    }

    /// A group with its members and pending invites (never their codes).
    public func group(id: String) async throws -> AdminGroupDetails {
        let now = dependencies.clock.now()
        return try await dependencies.database.read { connection in
            guard let group = try await GroupStore(connection).find(id: id) else { throw LanyardError.noSuchGroup }
            let members = try await GroupMemberStore(connection).listing(groupID: id).map(GroupMember.init)
            let invites = try await GroupInviteStore(connection).pending(groupID: id, at: now).map { GroupInvite($0) }
            return AdminGroupDetails(group: LanyardGroup(group, memberCount: members.count, role: nil, members: members),
                                     invites: invites)
        }
    }

    public func dissolve(id: String, client: ClientInfo) async throws {
        try await Groups(dependencies).dissolveByAdmin(id, client: client)
    }
}
