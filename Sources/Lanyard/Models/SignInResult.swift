/// What a sign-in did.
///
/// ```swift
/// let result = try await client.signInWithApple(idToken: token, rawNonce: nonce.raw)
/// if let guestID = result.mergedFrom { print("guest \(guestID) was merged into \(result.user.id)") }
/// ```
public struct SignInResult: Sendable, Equatable {
    /// The account now signed in.
    public var user: User
    /// True when this sign-in created the account.
    public var isNewUser: Bool
    /// The id of the guest account whose data was merged into `user`, when the guest's sign-in method already
    /// had an account.
    public var mergedFrom: User.ID?
}
