package dev.lanyard

/**
 * Whether the client holds a session, as [LanyardClient.authState] tells it: restored from the [SessionStore] at
 * once when the client is made, then changed by every sign-in and sign-out.
 *
 * ```kotlin
 * client.authState.collect { state ->
 *     when (state) {
 *         is AuthState.SignedIn -> showHome(state.user)
 *         AuthState.SignedOut -> showSignIn()
 *     }
 * }
 * ```
 */
sealed interface AuthState {
    /** A session is held for [user] (a guest when `user.isAnonymous`). */
    data class SignedIn(val user: User) : AuthState

    /** No session is held. */
    data object SignedOut : AuthState
}

/**
 * What happened to the client's session, in order ([LanyardClient.authEvents]).
 *
 * ```kotlin
 * client.authEvents.collect { event ->
 *     if (event is AuthEvent.SignedOut && event.reason == SignOutReason.RefreshTokenReused) showBanner("Signed out for safety")
 * }
 * ```
 */
sealed interface AuthEvent {
    /** A sign-in succeeded ([isNewUser]: it made the account). */
    data class SignedIn(val user: User, val isNewUser: Boolean) : AuthEvent

    /** The session ended on this device, and why. */
    data class SignedOut(val reason: SignOutReason) : AuthEvent

    /** The guest account [guestId] was merged into the account now signed in (its data came along). */
    data class MergedFrom(val guestId: String) : AuthEvent

    /** The access token was renewed. */
    data object Refreshed : AuthEvent

    /** The user's details changed (profile, sign-in methods, or [LanyardClient.me]). */
    data class UserUpdated(val user: User) : AuthEvent

    /** A sign-in method was linked. */
    data class Linked(val provider: Provider) : AuthEvent

    /** A sign-in method was unlinked. */
    data class Unlinked(val provider: Provider) : AuthEvent
}

/**
 * Why the client signed out.
 *
 * ```kotlin
 * if (event.reason is SignOutReason.AccountMerged) showSignIn("This account now lives in another one")
 * ```
 */
sealed interface SignOutReason {
    /** The app called [LanyardClient.signOut] or revoked this device's session. */
    data object UserRequested : SignOutReason

    /** The account was deleted. */
    data object AccountDeleted : SignOutReason

    /** The server no longer knows the session: expired, revoked or signed out elsewhere (`INVALID_REFRESH_TOKEN`). */
    data object SessionEnded : SignOutReason

    /** A used refresh token came back, so the server ended the session for safety (`REFRESH_TOKEN_REUSED`). */
    data object RefreshTokenReused : SignOutReason

    /** An operator disabled the account (`ACCOUNT_DISABLED`). */
    data object AccountDisabled : SignOutReason

    /** The account was merged into [into] from another device (`ACCOUNT_MERGED`): sign in again to reach it. */
    data class AccountMerged(val into: String) : SignOutReason
}
