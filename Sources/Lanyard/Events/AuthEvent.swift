/// What happened to the client's session, in order, from `LanyardClient.authEvents`.
///
/// ```swift
/// for await event in client.authEvents {
///     switch event {
///     case .restored(let user), .userUpdated(let user?): showAccount(user)
///     case .signedOut(let reason): showSignIn(reason == .refreshTokenReused ? "Signed out for safety" : nil)
///     default: break
///     }
/// }
/// ```
public enum AuthEvent: Sendable, Equatable {
    /// The first event of every stream: the state the client is in (the session restored from storage on launch,
    /// or `nil` when signed out).
    case restored(User?)
    /// A sign-in succeeded.
    case signedIn(User)
    /// The session ended on this device, and why.
    case signedOut(SignOutReason)
    /// The access token was renewed.
    case tokenRefreshed
    /// The user's details changed (profile, sign-in methods, or a `refreshUser()`).
    case userUpdated(User)
    /// A sign-in method was linked.
    case linked(Provider)
    /// A sign-in method was unlinked.
    case unlinked(Provider)
    /// The guest account `from` was merged into the account now signed in (its data came along).
    case merged(from: User.ID)
}

/// Why the client signed out.
///
/// ```swift
/// if case .signedOut(.sessionEnded) = event { banner = "Your session ended on another device" }
/// ```
public enum SignOutReason: Sendable, Equatable {
    /// The app called `signOut(scope:)` or revoked this device's session.
    case userRequested
    /// The account was deleted.
    case accountDeleted
    /// The server no longer knows the session: it expired, was revoked or signed out elsewhere
    /// (`INVALID_REFRESH_TOKEN`).
    case sessionEnded
    /// A used refresh token came back, so the server ended the session for safety (`REFRESH_TOKEN_REUSED`).
    case refreshTokenReused
    /// An operator disabled the account (`ACCOUNT_DISABLED`).
    case accountDisabled
    /// The account was merged into another (`ACCOUNT_MERGED`, from another device): sign in again to reach `into`.
    case accountMerged(into: User.ID)
}
