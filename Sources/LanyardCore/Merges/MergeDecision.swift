import Foundation
import LanyardSupport

/// Whether a merge may happen, decided from what its transaction read (reference sections 5 and 15), and whether
/// an earlier merge may be answered again. Pure: `MergeEngine` reads the accounts and asks; every refusal a merge
/// can meet is stated here once, for guest merges at sign-in, a person's full merge and an operator's.
enum MergeDecision {
    /// Who asks for the merge.
    enum Kind: String, Sendable {
        /// A guest signing in with an identity that already has an account (reference section 5).
        case guest
        /// A person proving two full accounts (reference section 15).
        case full
        /// An operator (`POST /v1/admin/merges`): no proof, and a ban does not stop it (it is audited).
        case admin

        /// What the absorbed account's tombstone says: a guest's session just ended; a full merge's tokens answer
        /// `ACCOUNT_MERGED`.
        var tombstone: String { self == .guest ? "guest" : "full" }
    }

    /// An account as the merge's transaction read it, locked.
    struct Account: Equatable, Sendable {
        var id: String
        var isAnonymous: Bool
        var mergedInto: String?
        var isDisabled: Bool
    }

    /// `ACCOUNT_DISABLED` for the account a merge would take in or hand over; the requester stays signed in.
    static let otherAccountDisabled = LanyardError(.accountDisabled, "The other account has been disabled",
                                                   details: ["reason": "other_account"])

    static let anonymousRefusal = LanyardError.mergeConflict(
        "anonymous", "A guest's data joins an account when the guest signs in with it; merging is for two signed-in accounts")

    /// Refuses a merge of `from` into `into` that must not happen.
    static func check(_ kind: Kind, into: Account, from: Account) throws(LanyardError) {
        guard into.id != from.id else {
            throw .mergeConflict("same_account", "Both sign-ins are of this same account")
        }
        for account in [into, from] {
            if let mergedInto = account.mergedInto {
                throw .mergeConflict("already_merged", "That account was already merged into another",
                                     details: ["merged_into": .string(mergedInto)])
            }
        }
        // An operator's ban holds against everyone but an operator. The requester's own account is not disabled (its
        // bearer would have been refused): the ban is the other account's.
        if kind != .admin, into.isDisabled || from.isDisabled { throw otherAccountDisabled }
        if into.isAnonymous { throw anonymousRefusal }
        switch kind {
        case .guest:
            guard from.isAnonymous else { throw anonymousRefusal }
        case .full, .admin:
            if from.isAnonymous { throw anonymousRefusal }
        }
    }

    /// The survivor ends in every group either was in: no more than an account may belong to.
    static func checkGroups(after merged: Int, limit: Int) throws(LanyardError) {
        guard merged <= limit else { throw .groupLimit("too_many_groups", limit: limit) }
    }

    /// How long a merge's answer can be had again.
    static let replayWindow: TimeInterval = 86_400

    /// An earlier merge found for a request of the same account, by its `Idempotency-Key` or its proof.
    struct Earlier: Equatable, Sendable {
        var createdAt: Date
        var revertedAt: Date?
        /// Whether it was found by the key (then the body must be the same) rather than by the proof.
        var foundByKey: Bool
        var requestHash: String?
    }

    enum Replay: Equatable, Sendable {
        /// Answer the earlier merge again.
        case answer
        /// Too old to answer again: the request is taken as a new one (and meets what became of its challenge).
        case expired
    }

    /// Whether `earlier` is answered again for a request whose body hashes to `requestHash`, at `now`.
    static func replay(_ earlier: Earlier, requestHash: String, at now: Date) throws(LanyardError) -> Replay {
        if earlier.foundByKey, let stored = earlier.requestHash, stored != requestHash {
            var error = LanyardError(.invalidRequest, "This Idempotency-Key was used for another request",
                                     details: ["field": "Idempotency-Key", "reason": "idempotency_key_reused"])
            error.statusOverride = 422
            throw error
        }
        if earlier.revertedAt != nil {
            throw .mergeConflict("reverted", "That merge was reverted by an operator")
        }
        return now.timeIntervalSince(earlier.createdAt) > replayWindow ? .expired : .answer
    }
}
