package dev.lanyard

import java.net.URLDecoder
import java.security.MessageDigest
import java.security.SecureRandom
import java.util.Base64
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.async
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.builtins.MapSerializer
import kotlinx.serialization.builtins.serializer

/**
 * What a redirect sign-in does once the browser comes back ([LanyardClient.authorizationUrl]).
 *
 * ```kotlin
 * val url = client.authorizationUrl(Provider.Apple, "com.example.app:/callback", RedirectIntent.LINK)
 * ```
 */
enum class RedirectIntent(internal val wire: String) {
    /** Signs in (or up); a held guest session upgrades or merges. */
    SIGNIN("signin"),

    /** Adds the provider to the signed-in account (the flow is started with its bearer and finished by it). */
    LINK("link"),
}

/**
 * Redirect sign-in's two halves (reference section 23), platform-neutral: the URL to open in a browser, with a PKCE
 * verifier and a `state` kept in the client's [SessionStore] meanwhile (so a process Android ended while the browser
 * was in front still finishes), and the exchange of the URL the browser comes back to.
 */
internal class RedirectSignIn(private val client: LanyardClient) {
    private val lock = Any()
    private var inFlight: Pair<String, Deferred<SignInResult>>? = null

    suspend fun authorizationUrl(provider: Provider, redirectUri: String, intent: RedirectIntent): String {
        val verifier = token(32)
        val challenge = Base64.getUrlEncoder().withoutPadding()
            .encodeToString(MessageDigest.getInstance("SHA-256").digest(verifier.toByteArray(Charsets.US_ASCII)))
        val state = token(16)
        val path = "v1/auth/authorize/${LanyardClient.segment(provider.name)}"
        val url = when (intent) {
            RedirectIntent.LINK -> {
                // A link acts on the signed-in account: the flow is bound to this session by its bearer.
                val body = client.json(AuthorizeBody.serializer(), AuthorizeBody(redirectUri, challenge, state = state, intent = intent.wire))
                client.sendAuthorized(ApiRequest("POST", path, body), AuthorizeAnswer.serializer()).url
            }
            RedirectIntent.SIGNIN -> client.url(
                path, listOf("redirect_uri" to redirectUri, "code_challenge" to challenge, "code_challenge_method" to "S256", "state" to state),
            )
        }
        synchronized(lock) {
            val now = client.options.clock()
            val kept = flows().filterValues { now - it.startedAtMillis < LIFETIME_MILLIS }
            store(kept + (state to PendingFlow(provider.name, verifier, redirectUri, intent.wire, now)))
        }
        return url
    }

    suspend fun complete(fromUrl: String): SignInResult {
        val answer = parameters(fromUrl)
        require("code" in answer || "error" in answer) { "$fromUrl carries no redirect sign-in answer (no code, no error)" }
        // The same answer handled twice at once (an activity recreated, onCreate and onNewIntent) is exchanged once,
        // in the client's scope: a caller that gives up must not lose the session its code was traded for.
        val running = synchronized(lock) {
            inFlight?.takeIf { it.first == fromUrl }?.second
                ?: client.scope.async { finish(answer) }.also { inFlight = fromUrl to it }
        }
        return running.await()
    }

    private suspend fun finish(answer: Map<String, String>): SignInResult {
        val state = answer["state"]
        // The code is single-use: whatever happens next, the flow is not kept for a second try.
        val flow = synchronized(lock) {
            val all = flows()
            all[state]?.also { store(all - state!!) }
        } ?: throw LanyardException.InvalidGrant("state")
        answer["error"]?.let { throw refusal(it, answer["error_description"]) }
        val body = client.json(TokenBody.serializer(), TokenBody(code = answer["code"] ?: "", codeVerifier = flow.verifier, redirectUri = flow.redirectUri))
        val request = ApiRequest("POST", "v1/auth/token", body)
        if (flow.intent != RedirectIntent.LINK.wire) return client.adopt(client.sendWithGuestBearer(request))
        // A link is finished by the session that started it, and its code is presented once: no retry that would
        // find it spent.
        val linked = client.decode(client.send(request, client.accessToken()), LinkResponse.serializer())
        val user = linked.user ?: client.fetchUser()
        client.update(user, listOf(AuthEvent.Linked(Provider(flow.provider))))
        return SignInResult(user, false, null)
    }

    private fun flows(): Map<String, PendingFlow> = runCatching {
        client.sessionStore.read(KEY)?.let { WireJson.decodeFromString(serializer, it) }
    }.getOrNull() ?: emptyMap()

    private fun store(flows: Map<String, PendingFlow>) {
        client.sessionStore.write(KEY, if (flows.isEmpty()) null else WireJson.encodeToString(serializer, flows))
    }

    /** What an OAuth `error` sent back to the app stands for (RFC 6749 4.1.2.1, as Lanyard's callback passes it on). */
    private fun refusal(error: String, description: String?): LanyardException = when {
        // The provider's ID token was refused (another audience, another nonce): the description is the reason.
        error == "access_denied" && description != null -> LanyardException.InvalidProviderToken(description)
        error == "access_denied" || error == "user_cancelled_authorize" -> LanyardException.SignInCancelled(error)
        error == "temporarily_unavailable" || error == "server_error" -> LanyardException.ProviderUnavailable()
        else -> LanyardException.InvalidRequest(null, error, description ?: "The provider refused the sign-in ($error).")
    }

    private val serializer = MapSerializer(String.serializer(), PendingFlow.serializer())

    internal companion object {
        /** Where flows wait for their answer in the [SessionStore], by state. */
        const val KEY = "redirect-flows"

        /** How long a started flow is worth keeping: the server's flow lives 10 minutes. */
        const val LIFETIME_MILLIS = 15 * 60_000L

        private val random = SecureRandom()

        /** [bytes] random bytes, base64url: a PKCE verifier (32 bytes: 43 characters) or a state. */
        fun token(bytes: Int): String =
            Base64.getUrlEncoder().withoutPadding().encodeToString(ByteArray(bytes).also(random::nextBytes))

        /**
         * The query of [url], decoded: an https page, an app's own scheme (`com.example.app:/callback?…`, which
         * `java.net.URI` reads as opaque when it has no slash) or a universal link alike.
         */
        fun parameters(url: String): Map<String, String> {
            val query = url.substringBefore('#').substringAfter('?', "")
            if (query.isEmpty()) return emptyMap()
            return query.split('&').filter { it.isNotEmpty() }.associate { pair ->
                val name = pair.substringBefore('=')
                val value = pair.substringAfter('=', "")
                URLDecoder.decode(name, "UTF-8") to URLDecoder.decode(value, "UTF-8")
            }
        }
    }
}

/** A started flow, as kept until its answer arrives. */
@Serializable
internal data class PendingFlow(
    val provider: String,
    val verifier: String,
    @SerialName("redirect_uri") val redirectUri: String,
    val intent: String,
    @SerialName("started_at_ms") val startedAtMillis: Long,
)

@Serializable
internal data class AuthorizeBody(
    @SerialName("redirect_uri") val redirectUri: String,
    @SerialName("code_challenge") val codeChallenge: String,
    @SerialName("code_challenge_method") val codeChallengeMethod: String = "S256",
    val state: String? = null,
    val intent: String? = null,
)

@Serializable
internal data class AuthorizeAnswer(val url: String)

@Serializable
internal data class TokenBody(
    @SerialName("grant_type") val grantType: String = "authorization_code",
    val code: String,
    @SerialName("code_verifier") val codeVerifier: String,
    @SerialName("redirect_uri") val redirectUri: String,
)
