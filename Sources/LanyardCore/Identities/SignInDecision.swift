/// What a sign-in does, decided from what the transaction read (reference section 5): the account of the
/// identity, if any, and the guest whose bearer came with it. `SignIn` reads, asks `decide`, then does it.
enum SignInDecision: Equatable, Sendable {
    /// Into the identity's account; a signed-in (not anonymous) bearer changes nothing.
    case signIn(userID: String)
    /// A new account for an identity nobody has.
    case signUp
    /// The guest keeps its id and everything attached to it, and gains the identity.
    case upgradeGuest(guestID: String)
    /// The identity has an account: the guest is merged into it, atomically.
    case mergeGuest(guestID: String, into: String)
    /// The guest was merged into the identity's account already (a retry after a lost answer): land there
    /// again and merge nothing twice.
    case landMergedGuest(guestID: String, into: String)

    /// The bearer's account as the transaction read it, locked.
    struct Guest: Equatable, Sendable {
        var id: String
        var isAnonymous: Bool
        /// Where this guest was merged, if it was.
        var mergedInto: String?
    }

    /// - Parameters:
    ///   - guest: the bearer's account, `nil` without a bearer or when its account is gone.
    ///   - bearerEndedByMerge: the bearer's session ended with a merge of its guest (known from the session).
    ///   - identityOwner: the account that holds the identity, `nil` for an identity nobody has.
    static func decide(guest: Guest?, bearerEndedByMerge: Bool,
                       identityOwner: String?) throws(LanyardError) -> SignInDecision {
        if let guest, guest.isAnonymous {
            if let target = guest.mergedInto {
                // Only the identity the guest was merged for may land there again.
                guard identityOwner == target else { throw .sessionEnded }
                return .landMergedGuest(guestID: guest.id, into: target)
            }
            if let identityOwner { return .mergeGuest(guestID: guest.id, into: identityOwner) }
            return .upgradeGuest(guestID: guest.id)
        }
        if bearerEndedByMerge { throw .sessionEnded }
        if let identityOwner { return .signIn(userID: identityOwner) }
        return .signUp
    }
}
