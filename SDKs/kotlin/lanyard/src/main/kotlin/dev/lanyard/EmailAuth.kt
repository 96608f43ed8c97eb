package dev.lanyard

import kotlin.math.max
import kotlin.math.min
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable

/**
 * Sign-in by a code or a link in one mail, and an email address as a sign-in method (reference section 18): [start]
 * a flow (one mail with a 6-digit code and a link), then finish it on this device with the code ([EmailFlow.verify])
 * or once the link was confirmed on any device ([EmailFlow.awaitConfirmation]). The session only ever comes to the
 * device that started the flow.
 *
 * ```kotlin
 * val flow = client.email.start("ada@example.com")
 * showHint("In the mail, pick ${flow.match}")
 * val result = flow.verify(typedCode)
 * ```
 */
class EmailAuth internal constructor(private val client: LanyardClient) {
    /**
     * Sends a sign-in mail (a guest's session upgrades, or merges into the address's account, when it finishes). The
     * answer is the same whether or not the address has an account.
     *
     * ```kotlin
     * val flow = client.email.start("ada@example.com", redirectTo = "myapp://signed-in")
     * ```
     */
    suspend fun start(address: String, redirectTo: String? = null): EmailFlow =
        startFlow(EmailStartBody(address, EmailIntent.SIGNIN.wire, redirectTo), EmailIntent.SIGNIN)

    /**
     * Sends a mail that adds [address] to the signed-in account as a sign-in method (a way back in if the person loses
     * their Google account), once its code is verified.
     *
     * ```kotlin
     * client.email.link("ada@example.com").verify(typedCode)
     * ```
     */
    suspend fun link(address: String): EmailFlow = startFlow(EmailStartBody(address, EmailIntent.LINK.wire), EmailIntent.LINK)

    /**
     * Sends a mail that proves the person still holds the account's address (before unlinking or deleting).
     *
     * ```kotlin
     * client.email.reauthenticate("ada@example.com").verify(typedCode)
     * ```
     */
    suspend fun reauthenticate(address: String): EmailFlow =
        startFlow(EmailStartBody(address, EmailIntent.REAUTHENTICATE.wire), EmailIntent.REAUTHENTICATE)

    private suspend fun startFlow(body: EmailStartBody, intent: EmailIntent): EmailFlow {
        val request = ApiRequest("POST", "v1/auth/email/start", client.json(EmailStartBody.serializer(), body))
        // A guest's bearer goes along at the finish, not here: starting a sign-in needs no account.
        val response = if (intent == EmailIntent.SIGNIN) client.send(request, null) else client.sendAuthorized(request)
        return EmailFlow(client, client.decode(response, EmailFlowStarted.serializer()), intent)
    }
}

/** What finishing an [EmailFlow] does. */
enum class EmailIntent(internal val wire: String) {
    /** Signs in (or up); a held guest session upgrades or merges. */
    SIGNIN("signin"),

    /** Adds the address to the signed-in account. */
    LINK("link"),

    /** Renews the signed-in account's session with a fresh sign-in time. */
    REAUTHENTICATE("reauthenticate"),
}

/**
 * One mail's flow, held by the device that started it. Show [match]: the page the mail's link opens asks the person
 * to type it, so a stranger's request cannot be confirmed blind.
 *
 * ```kotlin
 * val flow = client.email.start("ada@example.com")
 * val result = flow.verify("123456")
 * ```
 */
class EmailFlow internal constructor(
    private val client: LanyardClient,
    internal val started: EmailFlowStarted,
    /** What finishing it does. */
    val intent: EmailIntent,
) {
    /** The number to show on this device. */
    val match: Int get() = started.match

    /** Seconds the flow lives. */
    val expiresIn: Int get() = started.expiresIn

    /**
     * Finishes with the 6-digit code from the mail. A wrong code throws [LanyardException.InvalidCode] with reason
     * `wrong_code` and the tries left; after five the flow is dead.
     *
     * ```kotlin
     * try { flow.verify(typed) } catch (e: LanyardException.InvalidCode) { showTriesLeft(e.attemptsLeft) }
     * ```
     */
    suspend fun verify(code: String): SignInResult {
        val body = client.json(EmailVerifyBody.serializer(), EmailVerifyBody(started.flowId, started.flowSecret, code))
        return finish(ApiRequest("POST", "v1/auth/email/verify", body))
    }

    /**
     * Waits until the mail's link was confirmed (on this device or any other), then finishes here. Throws
     * [LanyardException.EmailNotConfirmed] when [timeoutSeconds] pass first.
     *
     * ```kotlin
     * val result = flow.awaitConfirmation(timeoutSeconds = 600)
     * ```
     */
    suspend fun awaitConfirmation(timeoutSeconds: Long = 900): SignInResult {
        val deadline = System.currentTimeMillis() + timeoutSeconds * 1000
        while (true) {
            val wait = min(25, max(0, (deadline - System.currentTimeMillis()) / 1000)).toInt()
            val body = client.json(EmailCompleteBody.serializer(), EmailCompleteBody(started.flowId, started.flowSecret, wait))
            try {
                return finish(ApiRequest("POST", "v1/auth/email/complete", body))
            } catch (e: LanyardException.EmailNotConfirmed) {
                if (System.currentTimeMillis() >= deadline) throw e
            }
        }
    }

    /** Sends `verify` or `complete` with the bearer the intent needs, and holds what it answers. */
    private suspend fun finish(request: ApiRequest): SignInResult = when (intent) {
        EmailIntent.SIGNIN -> client.adopt(client.sendWithGuestBearer(request))
        EmailIntent.LINK -> {
            val user = client.sendAuthorized(request, LinkResponse.serializer()).user ?: client.fetchUser()
            client.update(user, listOf(AuthEvent.Linked(Provider.Email)))
            SignInResult(user, false, null)
        }
        EmailIntent.REAUTHENTICATE -> SignInResult(client.renew(client.sendAuthorized(request, SessionResponse.serializer())), false, null)
    }
}

@Serializable
internal data class EmailStartBody(val email: String, val intent: String, @SerialName("redirect_to") val redirectTo: String? = null)

@Serializable
internal data class EmailFlowStarted(
    @SerialName("flow_id") val flowId: String,
    @SerialName("flow_secret") val flowSecret: String,
    val match: Int,
    @SerialName("expires_in") val expiresIn: Int = 900,
    @SerialName("resend_after") val resendAfter: Int = 60,
)

@Serializable
internal data class EmailVerifyBody(@SerialName("flow_id") val flowId: String, @SerialName("flow_secret") val flowSecret: String, val code: String)

@Serializable
internal data class EmailCompleteBody(@SerialName("flow_id") val flowId: String, @SerialName("flow_secret") val flowSecret: String, val wait: Int)
