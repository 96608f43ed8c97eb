import Foundation
import LanyardProviders
import LanyardStore
import LanyardWire
import LanyardSupport

/// Everything a merge decides before it runs.
struct MergePlan: Sendable {
    var mergeID: String
    var into: String
    var from: String
    var kind: MergeDecision.Kind
    /// Who asked: the requesting account's id, or `admin`.
    var actor: String
    /// Whether the requesting session's own account survives: clashes are named from its side (`current`/`other`).
    var currentIsInto: Bool
    var onConflict: MergeConflictRule = .newer
    /// Providers of the absorbed account to detach where the survivor has one of its own.
    var release: Set<String> = []
    var dryRun = false
    var at: Date
    /// What finds the merge again for a retried request (a person's full merge).
    var request: MergeRequestKeys?
}

/// How a retried request finds its merge: the same account with the same `Idempotency-Key`, or the same proof.
struct MergeRequestKeys: Sendable {
    var requestedBy: String
    var sessionID: String
    var idempotencyKey: String?
    var proofKey: String
    /// The request's body, hashed: a key sent again with another body is refused.
    var requestHash: String
}

/// The one merge engine (reference sections 5 and 15), used by guest merges at sign-in (`SignIn`), a person's full
/// merge (`AccountMerges`) and an operator's (`MergeAdministration`). Inside the caller's transaction: both accounts
/// locked in id order (so A into B and B into A racing end in one merge: the second finds its account merged),
/// `MergeDecision` asked, then every move: identities, records (`MergeRecords`), group memberships, profile gaps,
/// metadata, sessions; the absorbed account's row stays as a tombstone pointing at the survivor, whose id never
/// changes. Every step runs or none does.
struct MergeEngine {
    let dependencies: CoreDependencies
    let connection: any DatabaseConnection
    let audit: AuditLog

    func run(_ plan: MergePlan) async throws -> (MergeResult, MergeUndo) {
        let users = UserStore(connection)
        var locked: [String: UserRecord] = [:]
        for id in Set([plan.into, plan.from]).sorted() {
            guard let user = try await users.findForUpdate(id: id) else { throw LanyardError.notFound("No such account") }
            locked[id] = user
        }
        guard let into = locked[plan.into], let from = locked[plan.from] else { throw LanyardError.notFound("No such account") }
        try MergeDecision.check(plan.kind, into: Self.facts(into), from: Self.facts(from))

        var report = MergeResult(mergeID: plan.dryRun ? nil : plan.mergeID, into: User.ID(plan.into), from: User.ID(plan.from))
        report.dryRun = plan.dryRun
        var undo = MergeUndo()
        try await moveIdentities(plan, &report, &undo)
        try await MergeRecords(connection: connection, audit: audit).move(plan, &report, &undo)
        report.groups = try await moveMemberships(plan)
        if let name = from.displayName { try await users.setDisplayNameIfEmpty(id: plan.into, to: name, at: plan.at) }
        try await UserMetadataStore(connection).copyIfMissing(from: plan.from, to: plan.into, at: plan.at)
        try await SessionStore(connection).revokeAll(userID: plan.from, reason: "merged", at: plan.at)
        try await users.markMerged(id: plan.from, into: plan.into, at: plan.at, kind: plan.kind.tombstone)
        try await audit.write(.accountMerged, userID: plan.into, details: [
            "from": plan.from, "to": plan.into, "kind": plan.kind.tombstone, "merge_id": plan.mergeID, "actor": plan.actor])
        if !plan.dryRun {
            try await MergeStore(connection).insertMerge(MergeRowDraft(
                id: plan.mergeID, into: plan.into, from: plan.from, kind: plan.kind.tombstone, actor: plan.actor,
                requestedBy: plan.request?.requestedBy, requestedSession: plan.request?.sessionID,
                idempotencyKey: plan.request?.idempotencyKey, proofKey: plan.request?.proofKey,
                requestHash: plan.request?.requestHash, at: plan.at, report: report.stored, undo: undo.json))
        }
        return (report, undo)
    }

    static func facts(_ user: UserRecord) -> MergeDecision.Account {
        MergeDecision.Account(id: user.id, isAnonymous: user.isAnonymous, mergedInto: user.mergedInto,
                              isDisabled: user.disabledAt != nil)
    }

    /// The absorbed account's identities join the survivor's, after its own (its primary stays primary); one of a
    /// provider the survivor also has is refused, or detached when the plan releases that provider (an Apple one
    /// owes its token revocation).
    private func moveIdentities(_ plan: MergePlan, _ report: inout MergeResult, _ undo: inout MergeUndo) async throws {
        let identities = IdentityStore(connection)
        let survivor = try await identities.list(userID: plan.into).map(\.provider)
        let absorbed = try await identities.list(userID: plan.from)
        let methods = dependencies.signInMethods
        let collisions = MergeRules.collisions(survivor: survivor, absorbed: absorbed.map(\.provider), release: plan.release,
                                               allowsSeveral: methods.allowsSeveral)
        guard collisions.isEmpty else {
            throw LanyardError.mergeConflict(
                "provider_collision", "Both accounts have a different \(collisions.joined(separator: " and ")) account; "
                    + "release one to merge", details: ["providers": .array(collisions.map(JSONValue.string))])
        }
        let released = MergeRules.released(survivor: survivor, absorbed: absorbed.map(\.provider), release: plan.release,
                                           allowsSeveral: methods.allowsSeveral)
        for identity in absorbed {
            if released.contains(identity.provider) {
                if methods.owesAppleRevocation(identity.provider) {
                    try await AppleTokenStore(connection).scheduleRevocation(userID: plan.from, at: plan.at)
                }
                try await identities.delete(id: identity.id)
                report.identitiesReleased.append(identity.provider)
            } else {
                try await identities.move(identityID: identity.id, to: plan.into)
                report.identitiesMoved.append(identity.provider)
                undo.identities.append(identity.id)
            }
        }
    }

    /// The absorbed account's memberships follow it into the survivor: where both are members the higher role is
    /// kept, and an owner hands the group to the survivor (the absorbed membership goes first, so there is never a
    /// second owner). Refused when the survivor would end in more groups than an account may belong to. The groups
    /// the absorbed account was in.
    private func moveMemberships(_ plan: MergePlan) async throws -> [String] {
        let members = GroupMemberStore(connection)
        let absorbed = try await members.memberships(userID: plan.from).sorted { $0.groupID < $1.groupID }
        let survivors = try await members.memberships(userID: plan.into)
        try MergeDecision.checkGroups(after: Set(absorbed.map(\.groupID) + survivors.map(\.groupID)).count,
                                      limit: dependencies.groupsPerAccount)
        for listed in absorbed {
            // Both roles read again under the group's lock: a removal, demotion or hand-over may have committed since
            // the lists above (they lock only the group).
            guard try await GroupStore(connection).findForUpdate(id: listed.groupID) != nil,
                  let membership = try await members.find(groupID: listed.groupID, userID: plan.from),
                  let absorbedRole = GroupRole(rawValue: membership.role) else { continue }
            let existing = try await members.find(groupID: membership.groupID, userID: plan.into)
            let existingRole = existing.flatMap { GroupRole(rawValue: $0.role) }
            try await members.remove(groupID: membership.groupID, userID: plan.from)
            if let existingRole {
                if absorbedRole > existingRole {
                    try await members.setRole(groupID: membership.groupID, userID: plan.into, role: absorbedRole.rawValue)
                }
            } else {
                try await members.insert(GroupMemberRow(groupID: membership.groupID, userID: plan.into,
                                                        role: membership.role, joinedAt: membership.joinedAt,
                                                        shareEmail: false))
            }
            try await audit.write(.groupMemberJoined, userID: plan.into, details: [
                "group_id": membership.groupID, "actor": plan.actor,
                "role": max(absorbedRole, existingRole ?? absorbedRole).rawValue, "merged_from": plan.from,
                "merge_id": plan.mergeID])
        }
        return absorbed.map(\.groupID)
    }
}
