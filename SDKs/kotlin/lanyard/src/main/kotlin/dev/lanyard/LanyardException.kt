package dev.lanyard

import java.io.IOException
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.doubleOrNull
import kotlinx.serialization.json.intOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * Everything a [LanyardClient] call can fail with: one case per error code of the server's catalogue (reference
 * section 3, and sections 14, 15, 18, 19 and 23), the failures that happen before the server answers, and
 * [Unknown] for a code this version of the SDK does not know yet. [message] is fit to show a person.
 *
 * ```kotlin
 * try {
 *     client.link(ProviderCredential.google(idToken))
 * } catch (e: LanyardException.ProviderConflict) {
 *     if (e.reason == ProviderConflictReason.IDENTITY_IN_USE) showAlert("That Google account has its own account")
 * } catch (e: LanyardException) {
 *     showAlert(e.message)
 * }
 * ```
 */
sealed class LanyardException(message: String, cause: Throwable? = null) : Exception(message, cause) {
    /** The catalogue's code (`PROVIDER_CONFLICT`), or null for a failure before the server answered. */
    open val code: String? get() = null

    /** The server's request id, as in its log (null when the server did not answer). */
    var requestId: String? = null
        internal set

    /** No session is held: sign in first. */
    class NotSignedIn : LanyardException("You're not signed in.")

    /** `INVALID_REQUEST`: a field the server refused ([field]), and why. */
    class InvalidRequest(val field: String?, val reason: String?, serverMessage: String) : LanyardException(serverMessage) {
        override val code get() = "INVALID_REQUEST"
    }

    /** `PAYLOAD_TOO_LARGE`: the body (a record, say) is over the server's limit. */
    class PayloadTooLarge : LanyardException("That's too large to save.") {
        override val code get() = "PAYLOAD_TOO_LARGE"
    }

    /** `UNSUPPORTED_PROVIDER`: the server does not offer this provider. */
    class UnsupportedProvider(val provider: String?) :
        LanyardException("Signing in with ${provider?.let { Provider(it).displayName } ?: "that provider"} isn't available.") {
        override val code get() = "UNSUPPORTED_PROVIDER"
    }

    /** `INVALID_PROVIDER_TOKEN`: the ID token failed verification; [reason] is the server's (`expired`, `nonce_mismatch`…). */
    class InvalidProviderToken(val reason: String) : LanyardException(
        if (reason == "expired") "That sign-in took too long. Please try again." else "The sign-in couldn't be verified. Please try again."
    ) {
        override val code get() = "INVALID_PROVIDER_TOKEN"
    }

    /** `PROVIDER_UNAVAILABLE`: the provider's keys cannot be reached right now. */
    class ProviderUnavailable : LanyardException("Signing in is temporarily unavailable. Please try again in a moment.") {
        override val code get() = "PROVIDER_UNAVAILABLE"
    }

    /** `UNAUTHORIZED`: the access token was refused even after a refresh. */
    class Unauthorized : LanyardException("Please sign in again.") {
        override val code get() = "UNAUTHORIZED"
    }

    /** `INVALID_REFRESH_TOKEN`: the session ended (expired, revoked, signed out elsewhere). The client has signed out. */
    class InvalidRefreshToken : LanyardException("Your session has ended. Please sign in again.") {
        override val code get() = "INVALID_REFRESH_TOKEN"
    }

    /** `REFRESH_TOKEN_REUSED`: a used refresh token came back, so the server ended the session. The client has signed out. */
    class RefreshTokenReused : LanyardException("For your security you've been signed out. Please sign in again.") {
        override val code get() = "REFRESH_TOKEN_REUSED"
    }

    /** `PROVIDER_CONFLICT`: linking would put one provider account on two accounts; [mergeAvailable]: a guest may sign in with it. */
    class ProviderConflict(val reason: ProviderConflictReason, val rawReason: String?, val mergeAvailable: Boolean) :
        LanyardException(
            when (reason) {
                ProviderConflictReason.ALREADY_LINKED -> "That account is already linked."
                ProviderConflictReason.PROVIDER_ALREADY_LINKED -> "Your account already has one of those linked. Unlink it first to switch."
                else -> "That account is already used by a different account."
            }
        ) {
        override val code get() = "PROVIDER_CONFLICT"
    }

    /** `CANNOT_UNLINK_ONLY_PROVIDER`: the last sign-in method cannot be removed. */
    class CannotUnlinkOnlyProvider : LanyardException("You can't remove your only way to sign in.") {
        override val code get() = "CANNOT_UNLINK_ONLY_PROVIDER"
    }

    /** `PROVIDER_NOT_LINKED`: the account has no identity of that provider. */
    class ProviderNotLinked(val provider: String?) :
        LanyardException("No ${provider?.let { Provider(it).displayName } ?: "such"} account is linked.") {
        override val code get() = "PROVIDER_NOT_LINKED"
    }

    /** `REAUTHENTICATION_REQUIRED`: sign in again with one of the account's methods ([LanyardClient.reauthenticate]), then retry. */
    class ReauthenticationRequired : LanyardException("Please sign in again to confirm it's you.") {
        override val code get() = "REAUTHENTICATION_REQUIRED"
    }

    /** `RATE_LIMITED`: too many attempts; try again after [retryAfterSeconds]. */
    class RateLimited(val retryAfterSeconds: Double?) : LanyardException(
        retryAfterSeconds?.let { "Too many attempts. Try again in ${kotlin.math.ceil(it).toLong()} seconds." }
            ?: "Too many attempts. Try again later."
    ) {
        override val code get() = "RATE_LIMITED"
    }

    /** `NOT_FOUND`: no such object (or, for a group, not a member of it). */
    class NotFound : LanyardException("That couldn't be found.") {
        override val code get() = "NOT_FOUND"
    }

    /** `FORBIDDEN`: not allowed ([reason] when the server gives one). */
    class Forbidden(val reason: String?) : LanyardException("That isn't allowed.") {
        override val code get() = "FORBIDDEN"
    }

    /** `FORBIDDEN` with reason `identity_not_on_account`: [LanyardClient.reauthenticate] got someone else's credential. */
    class IdentityNotOnAccount : LanyardException("That account isn't linked to you. Sign in with one of your account's sign-in methods.") {
        override val code get() = "FORBIDDEN"
    }

    /** `VERSION_CONFLICT`: the record changed since it was read; [currentVersion] is the server's. */
    class VersionConflict(val currentVersion: Int?) : LanyardException("This changed on another device. Reload and try again.") {
        override val code get() = "VERSION_CONFLICT"
    }

    /** `ACCOUNT_DISABLED`: an operator disabled the account. The client has signed out. */
    class AccountDisabled : LanyardException("This account has been disabled.") {
        override val code get() = "ACCOUNT_DISABLED"
    }

    /** `ACCOUNT_DISABLED` with reason `other_account`: the account a merge proved is disabled; this one stays signed in. */
    class OtherAccountDisabled : LanyardException("The other account has been disabled, so it can't be merged.") {
        override val code get() = "ACCOUNT_DISABLED"
    }

    /** `SERVICE_UNAVAILABLE`: the server cannot reach its database right now; try again after [retryAfterSeconds]. */
    class ServiceUnavailable(val retryAfterSeconds: Double?) :
        LanyardException("The service is temporarily unavailable. Please try again in a moment.") {
        override val code get() = "SERVICE_UNAVAILABLE"
    }

    /** `INVITE_UNUSABLE`: the invite expired, was revoked or used up ([reason]: `expired`, `revoked`, `used_up`). */
    class InviteUnusable(val reason: String) : LanyardException(
        when (reason) {
            "expired" -> "This invite has expired. Ask for a new one."
            "revoked" -> "This invite was cancelled. Ask for a new one."
            else -> "This invite has already been used. Ask for a new one."
        }
    ) {
        override val code get() = "INVITE_UNUSABLE"
    }

    /** `GROUP_LIMIT`: `group_full`, `too_many_groups` or `too_many_invites`, with the [limit]. */
    class GroupLimit(val reason: String, val limit: Int?) : LanyardException(
        when (reason) {
            "group_full" -> "This group is full."
            "too_many_groups" -> "You're in as many groups as you can be. Leave one first."
            else -> "This group has too many open invites. Cancel some first."
        }
    ) {
        override val code get() = "GROUP_LIMIT"
    }

    /** `INSUFFICIENT_ROLE`: the account's role in the group is below [required]. */
    class InsufficientRole(val required: GroupRole?) : LanyardException("You don't have permission to do that in this group.") {
        override val code get() = "INSUFFICIENT_ROLE"
    }

    /** `OWNER_MUST_TRANSFER`: the owner cannot leave; transfer the group first. */
    class OwnerMustTransfer : LanyardException("Hand the group to another member before you leave it.") {
        override val code get() = "OWNER_MUST_TRANSFER"
    }

    /** `MERGE_CONFLICT`: `same_account`, `anonymous`, `already_merged` ([mergedInto]), `provider_collision` ([providers]), `reverted`. */
    class MergeConflict(val reason: String, val mergedInto: String?, val providers: List<String>) : LanyardException(
        when (reason) {
            "same_account" -> "That's the account you're signed in to."
            "already_merged" -> "That account was already merged into another."
            "provider_collision" -> "Both accounts use a different account of the same provider. Choose which one to let go."
            "reverted" -> "That merge was undone by support. Ask them before trying again."
            else -> "Sign in to an account first; a guest's data joins an account when you sign in."
        }
    ) {
        override val code get() = "MERGE_CONFLICT"
    }

    /** `ACCOUNT_MERGED`: this account was merged into [into] on another device. The client has signed out. */
    class AccountMerged(val into: String) : LanyardException("This account was merged into another. Please sign in again.") {
        override val code get() = "ACCOUNT_MERGED"
    }

    /** `INVALID_CODE`: an email code was wrong (`wrong_code`, [attemptsLeft]) or its flow is over (`expired`, `flow_dead`, `used`, `undeliverable`). */
    class InvalidCode(val reason: String, val attemptsLeft: Int) : LanyardException(
        when (reason) {
            "wrong_code" -> if (attemptsLeft == 1) "That code isn't right. One try left." else "That code isn't right. $attemptsLeft tries left."
            "expired" -> "That code has expired. Ask for a new one."
            "undeliverable" -> "We couldn't deliver the mail. Check the address and try again."
            else -> "That code can't be used any more. Ask for a new one."
        }
    ) {
        override val code get() = "INVALID_CODE"
    }

    /** `EMAIL_NOT_CONFIRMED`: the mail's link was not confirmed within the wait. */
    class EmailNotConfirmed : LanyardException("Open the link in the mail we sent, then come back.") {
        override val code get() = "EMAIL_NOT_CONFIRMED"
    }

    /** `INVALID_PASSKEY`: the server refused a passkey ceremony; [reason] names the check (`challenge`, `origin`, `signature`…). */
    class InvalidPasskey(val reason: String) : LanyardException(
        when (reason) {
            "unknown_credential" -> "This passkey is no longer on any account. Sign in another way."
            "challenge" -> "That took too long. Try again."
            "counter" -> "This passkey looks copied. Sign in another way and remove it."
            else -> "That passkey couldn't be used. Try again."
        }
    ) {
        override val code get() = "INVALID_PASSKEY"
    }

    /** `INVALID_REDIRECT_URI` (redirect sign-in, reference section 23): the redirect URI is not one the server lists. */
    class InvalidRedirectUri : LanyardException("This app isn't set up to sign in that way.") {
        override val code get() = "INVALID_REDIRECT_URI"
    }

    /**
     * `INVALID_GRANT` (redirect sign-in): the code `expired`, was `used`, or the `verifier` or `redirect_uri` is not the
     * flow's; or, from the client itself, `state`: the URL answers no flow this device started (another device's, one
     * already finished), and nothing was sent. Start the sign-in again.
     */
    class InvalidGrant(val reason: String) : LanyardException(
        when (reason) {
            "expired" -> "That sign-in took too long. Please try again."
            "state" -> "This sign-in wasn't started here, or it already finished. Please start again."
            else -> "That sign-in can't be finished. Please start again."
        }
    ) {
        override val code get() = "INVALID_GRANT"
    }

    /**
     * Redirect sign-in: the person declined at the provider's page ([error] is the provider's, `access_denied` or Apple's
     * `user_cancelled_authorize`). Nothing changed; no server code stands for it.
     */
    class SignInCancelled(val error: String) : LanyardException("The sign-in was cancelled.")

    /** `INTERNAL_ERROR`: something went wrong on the server. */
    class InternalError : LanyardException("Something went wrong on our side. Please try again.") {
        override val code get() = "INTERNAL_ERROR"
    }

    /** A code this version of the SDK does not know, with the server's [status] and message. */
    class Unknown(private val unknownCode: String, val status: Int, serverMessage: String) : LanyardException(serverMessage) {
        override val code get() = unknownCode
    }

    /** The request did not reach the server, or its answer did not arrive. The session is kept. */
    class Network(cause: IOException) : LanyardException("You appear to be offline. Check your connection and try again.", cause)

    /** The server answered something that is not Lanyard's API (a proxy's error page, say). */
    class InvalidResponse(val status: Int) : LanyardException("The server sent an unexpected answer. Please try again.")

    internal companion object {
        /** The error an answer of the server stands for; null for a 2xx. */
        fun fromResponse(status: Int, body: String, retryAfterHeader: String?): LanyardException? {
            if (status in 200..299) return null
            val error = runCatching { WireJson.parseToJsonElement(body).jsonObject["error"]?.jsonObject }.getOrNull()
            val code = error?.string("code") ?: return InvalidResponse(status)
            val details = error["details"] as? JsonObject ?: JsonObject(emptyMap())
            val message = error.string("message") ?: ""
            val reason = details.string("reason")
            val retryAfter = retryAfterHeader?.trim()?.toDoubleOrNull() ?: details.number("retry_after")
            val exception = when (code) {
                "INVALID_REQUEST" -> InvalidRequest(details.string("field"), reason, message)
                "PAYLOAD_TOO_LARGE" -> PayloadTooLarge()
                "UNSUPPORTED_PROVIDER" -> UnsupportedProvider(details.string("provider"))
                "INVALID_PROVIDER_TOKEN" -> InvalidProviderToken(reason ?: "")
                "PROVIDER_UNAVAILABLE" -> ProviderUnavailable()
                "UNAUTHORIZED" -> Unauthorized()
                "INVALID_REFRESH_TOKEN" -> InvalidRefreshToken()
                "REFRESH_TOKEN_REUSED" -> RefreshTokenReused()
                "PROVIDER_CONFLICT" -> ProviderConflict(
                    ProviderConflictReason.of(reason), reason, (details["merge_available"] as? JsonPrimitive)?.booleanOrNull ?: false
                )
                "CANNOT_UNLINK_ONLY_PROVIDER" -> CannotUnlinkOnlyProvider()
                "PROVIDER_NOT_LINKED" -> ProviderNotLinked(details.string("provider"))
                "REAUTHENTICATION_REQUIRED" -> ReauthenticationRequired()
                "RATE_LIMITED" -> RateLimited(retryAfter)
                "NOT_FOUND" -> NotFound()
                "FORBIDDEN" -> if (reason == "identity_not_on_account") IdentityNotOnAccount() else Forbidden(reason)
                "VERSION_CONFLICT" -> VersionConflict(details.number("current_version")?.toInt())
                "ACCOUNT_DISABLED" -> if (reason == "other_account") OtherAccountDisabled() else AccountDisabled()
                "SERVICE_UNAVAILABLE" -> ServiceUnavailable(retryAfter)
                "INVITE_UNUSABLE" -> InviteUnusable(reason ?: "")
                "GROUP_LIMIT" -> GroupLimit(reason ?: "", details.number("limit")?.toInt())
                "INSUFFICIENT_ROLE" -> InsufficientRole(details.string("required")?.let(GroupRole::of))
                "OWNER_MUST_TRANSFER" -> OwnerMustTransfer()
                "MERGE_CONFLICT" -> MergeConflict(
                    reason ?: "", details.string("merged_into"),
                    (details["providers"] as? JsonArray)?.mapNotNull { it.jsonPrimitive.contentOrNull } ?: emptyList()
                )
                "ACCOUNT_MERGED" -> AccountMerged(details.string("merged_into") ?: "")
                "INVALID_CODE" -> InvalidCode(reason ?: "", details.number("attempts_left")?.toInt() ?: 0)
                "EMAIL_NOT_CONFIRMED" -> EmailNotConfirmed()
                "INVALID_PASSKEY" -> InvalidPasskey(reason ?: "")
                "INVALID_REDIRECT_URI" -> InvalidRedirectUri()
                "INVALID_GRANT" -> InvalidGrant(reason ?: "")
                "INTERNAL_ERROR" -> InternalError()
                else -> Unknown(code, status, message)
            }
            exception.requestId = error.string("request_id")
            return exception
        }

        private fun JsonObject.string(key: String): String? = (this[key] as? JsonPrimitive)?.takeIf { it.isString }?.content

        private fun JsonObject.number(key: String): Double? = (this[key] as? JsonPrimitive)?.let { it.doubleOrNull ?: it.intOrNull?.toDouble() }
    }
}

/**
 * Why a [LanyardException.ProviderConflict] happened.
 *
 * ```kotlin
 * if (e.reason == ProviderConflictReason.PROVIDER_ALREADY_LINKED) offerToUnlinkTheOldOne()
 * ```
 */
enum class ProviderConflictReason {
    /** That provider account is already on this account. */
    ALREADY_LINKED,

    /** This account already has another account of that provider. */
    PROVIDER_ALREADY_LINKED,

    /** That provider account belongs to another Lanyard account. */
    IDENTITY_IN_USE,

    /** A reason this version of the SDK does not know (see `rawReason`). */
    OTHER;

    internal companion object {
        fun of(reason: String?) = when (reason) {
            "already_linked" -> ALREADY_LINKED
            "provider_already_linked" -> PROVIDER_ALREADY_LINKED
            "identity_in_use" -> IDENTITY_IN_USE
            else -> OTHER
        }
    }
}
