import Foundation
@testable import LanyardCore
@testable import LanyardStore
import LanyardWire
import Testing

/// Who may read, write, invite, remove and inherit in a group (reference section 14), and which of a group's changes
/// reach a member's feed: the pure rules, case by case.
@Suite struct GroupRuleTests {
    @Test func aPolicyReadsFromItsRoleUpAndWritesByRoleOrAuthorship() {
        let secrets = GroupPolicy(read: .admin, write: .owner)
        #expect(!secrets.mayRead(.viewer) && !secrets.mayRead(.member) && secrets.mayRead(.admin) && secrets.mayRead(.owner))
        #expect(!secrets.mayWrite(.admin, userID: "a", existingCreatedBy: nil) && secrets.mayWrite(.owner, userID: "o", existingCreatedBy: "x"))
        let diary = GroupPolicy(read: .viewer, write: .author)
        #expect(diary.mayWrite(.member, userID: "m", existingCreatedBy: nil))
        #expect(diary.mayWrite(.member, userID: "m", existingCreatedBy: "m"))
        #expect(!diary.mayWrite(.member, userID: "m", existingCreatedBy: "other"))
        #expect(diary.mayWrite(.admin, userID: "a", existingCreatedBy: "other"))
        #expect(!diary.mayWrite(.viewer, userID: "v", existingCreatedBy: nil))
        #expect(GroupPolicy.standard.mayRead(.viewer) && !GroupPolicy.standard.mayWrite(.viewer, userID: "v", existingCreatedBy: nil))
    }

    @Test func invitesGrantAtMostTheMakersRoleNeverOwner() {
        #expect(GroupPermissions.mayGrant(.admin, inviter: .owner) && !GroupPermissions.mayGrant(.owner, inviter: .owner))
        #expect(!GroupPermissions.mayGrant(.admin, inviter: .member) && GroupPermissions.mayGrant(.viewer, inviter: .member))
        #expect(GroupPermissions.mayInvite(.member, membersCanInvite: true) && !GroupPermissions.mayInvite(.member, membersCanInvite: false))
        #expect(!GroupPermissions.mayInvite(.viewer, membersCanInvite: true))
    }

    @Test func anAcceptedInviteGrantsWhatItsMakerMayGrantNow() {
        #expect(GroupPermissions.grantedAtAccept(.admin, makerRole: .admin, membersCanInvite: false) == .admin)
        #expect(GroupPermissions.grantedAtAccept(.admin, makerRole: .owner, membersCanInvite: false) == .admin)
        // Demoted since: no more than the maker's role now.
        #expect(GroupPermissions.grantedAtAccept(.admin, makerRole: .member, membersCanInvite: true) == .member)
        // Gone, or no longer allowed to invite: nothing.
        #expect(GroupPermissions.grantedAtAccept(.member, makerRole: nil, membersCanInvite: true) == nil)
        #expect(GroupPermissions.grantedAtAccept(.member, makerRole: .member, membersCanInvite: false) == nil)
        #expect(GroupPermissions.grantedAtAccept(.viewer, makerRole: .viewer, membersCanInvite: true) == nil)
    }

    @Test func onlyTheOwnerAndAdminsRemoveAndNeverUpwards() {
        #expect(GroupPermissions.mayRemove(.admin, remover: .owner) && !GroupPermissions.mayRemove(.owner, remover: .owner))
        #expect(GroupPermissions.mayRemove(.member, remover: .admin) && !GroupPermissions.mayRemove(.admin, remover: .admin))
        #expect(!GroupPermissions.mayRemove(.viewer, remover: .member))
    }

    @Test func theLongestStandingAdminElseMemberInheritsAndViewersNever() {
        let day = { (n: Double) in Date(timeIntervalSince1970: n * 86_400) }
        #expect(GroupPermissions.successor([("m", .member, day(1)), ("a2", .admin, day(3)), ("a1", .admin, day(2))]) == "a1")
        #expect(GroupPermissions.successor([("v", .viewer, day(1)), ("m2", .member, day(3)), ("m1", .member, day(2))]) == "m1")
        #expect(GroupPermissions.successor([("v1", .viewer, day(1)), ("v2", .viewer, day(2))]) == nil)
        #expect(GroupPermissions.successor([]) == nil)
    }

    @Test func theFeedPassesOverWhatTheMemberMayNotReadAndSaysWhatWasTakenAway() {
        let row = { (collection: String) in
            FeedChange(RecordRow(ownerID: "g1", collection: collection, recordID: "r", version: 1, updatedAt: Date(),
                                 changeSequence: 1, feedSequence: 1, deleted: false, data: "{}"), source: .group("g1"))
        }
        let before = FeedSources(groups: ["g1", "g2"], shares: [], unreadable: ["g1": ["secrets"]])
        #expect(!before.mayRead(row("secrets")) && before.mayRead(row("shopping")))
        let after = FeedSources(groups: ["g1", "g2"], shares: [], unreadable: ["g1": ["secrets", "shopping"], "g2": ["budget"]])
        #expect(after.accessRemoved(since: before).map { "\($0.group)/\($0.collection)" } == ["g1/shopping", "g2/budget"])
        #expect(before.accessRemoved(since: after).isEmpty, "access given back is not a removal")
        // A group joined since is not a removal either: its unreadable collections simply never arrive.
        let joined = FeedSources(groups: ["g1", "g2", "g3"], shares: [], unreadable: ["g1": ["secrets"], "g3": ["x"]])
        #expect(joined.accessRemoved(since: before).isEmpty)
    }
}
