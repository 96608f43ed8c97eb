package dev.lanyard

import java.io.Closeable
import java.io.IOException
import java.net.URLEncoder
import java.util.Base64
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.cancel
import kotlinx.coroutines.channels.BufferOverflow
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableSharedFlow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asSharedFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.serialization.DeserializationStrategy
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.SerializationException
import kotlinx.serialization.builtins.ListSerializer
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.serializer

/**
 * Settings of a [LanyardClient] beyond the server's address and the storage.
 *
 * ```kotlin
 * val options = LanyardOptions(transport = HttpUrlConnectionTransport(readTimeoutMillis = 10_000))
 * val client = LanyardClient("https://auth.example.com", store, options)
 * ```
 *
 * @param transport how requests reach the server; `java.net.HttpURLConnection` by default.
 * @param refreshLeewaySeconds an access token this close to its expiry is refreshed before use.
 * @param clock the time in milliseconds since 1970 that expiry is read against (tests move it).
 * @param log where the client says what its live connection does (connects, ends, pauses); never a token.
 */
class LanyardOptions(
    val transport: Transport = HttpUrlConnectionTransport(),
    val refreshLeewaySeconds: Long = 60,
    val clock: () -> Long = System::currentTimeMillis,
    val log: ((String) -> Unit)? = null,
)

/**
 * Your app's connection to a Lanyard server: signs the person in with Google, Apple, an email code, a passkey or as
 * a guest, keeps the session across launches and bad networks, calls the API with fresh tokens, syncs typed records
 * and delivers their changes live.
 *
 * Make one per server and keep it for the life of the app (an Android `Application`, or a DI singleton):
 *
 * ```kotlin
 * val client = LanyardClient("https://auth.example.com", KeystoreSessionStore(context))
 *
 * // Google through Credential Manager, with the nonce Lanyard checks (see the Android guide)
 * val nonce = Nonce.generate()
 * val result = client.signInWithGoogle(googleIdToken, nonce.raw)
 * println("${result.user.id} new: ${result.isNewUser}")
 *
 * // Your own backend, as that user
 * connection.setRequestProperty("Authorization", "Bearer ${client.accessToken()}")
 * ```
 *
 * Every function is safe to call from any coroutine at once. A network failure throws
 * [LanyardException.Network] and keeps the session; only the server ending the session signs the client out.
 *
 * @param baseUrl the server, such as `https://auth.example.com`.
 * @param sessionStore where the session and the change feeds' places are kept.
 */
class LanyardClient(
    baseUrl: String,
    val sessionStore: SessionStore = MemorySessionStore(),
    val options: LanyardOptions = LanyardOptions(),
) : Closeable {
    /** The server's base URL, without a trailing slash. */
    val baseUrl: String = baseUrl.trimEnd('/')

    /** Owns the client's long-lived work: the refresh in flight and the live connection. */
    internal val scope = CoroutineScope(SupervisorJob() + Dispatchers.IO)
    private val lock = Any()
    private var session: StoredSession? = restore()
    private var refreshing: Deferred<StoredSession>? = null

    private val state = MutableStateFlow(session?.let { AuthState.SignedIn(it.user) } ?: AuthState.SignedOut)
    private val events = MutableSharedFlow<AuthEvent>(extraBufferCapacity = 256, onBufferOverflow = BufferOverflow.DROP_OLDEST)

    /** The one live connection to the account's change feed, shared by every collector. */
    internal val liveFeed = LiveFeed(this)

    /**
     * Signed in (with the user as last seen) or signed out, restored at once from the [sessionStore].
     *
     * ```kotlin
     * val signedIn = client.authState.value is AuthState.SignedIn
     * ```
     */
    val authState: StateFlow<AuthState> = state.asStateFlow()

    /**
     * What happens to the session from now on: [AuthEvent.SignedIn], [AuthEvent.SignedOut] with its reason,
     * [AuthEvent.MergedFrom], [AuthEvent.Refreshed]… A hot flow: collect it before the calls whose events you want.
     *
     * ```kotlin
     * scope.launch {
     *     client.authEvents.collect { if (it is AuthEvent.SignedOut) navigateToSignIn(it.reason) }
     * }
     * ```
     */
    val authEvents: Flow<AuthEvent> = events.asSharedFlow()

    /**
     * Whether the shared live connection has caught up with the account's feed and delivers changes as they happen.
     *
     * ```kotlin
     * client.isLive.collect { syncing -> spinner.isVisible = !syncing }
     * ```
     */
    val isLive: StateFlow<Boolean> get() = liveFeed.isLive

    /**
     * The signed-in user as last seen, or null.
     *
     * ```kotlin
     * if (client.currentUser?.isAnonymous != false) showSignInButtons()
     * ```
     */
    val currentUser: User? get() = synchronized(lock) { session?.user }

    /** Email codes and links (reference section 18): `client.email.start("ada@example.com")`. */
    val email: EmailAuth = EmailAuth(this)

    /** Passkeys (reference section 19): the server's options JSON out, the authenticator's response JSON in. */
    val passkeys: PasskeyAuth = PasskeyAuth(this)

    /** Groups for family sharing (reference section 14). */
    val groups: LanyardGroups = LanyardGroups(this)

    /** Redirect sign-in's flows, kept in the [sessionStore] while the browser is away. */
    private val redirects = RedirectSignIn(this)

    // Sign-in

    /**
     * Exchanges a Google ID token (Credential Manager's `GoogleIdTokenCredential.idToken`) for a Lanyard session. Pass
     * the nonce given to `GetGoogleIdOption.Builder().setNonce(…)`. A guest session held by the client is upgraded,
     * or merged into the account that Google account already has ([SignInResult.mergedFrom]).
     *
     * ```kotlin
     * val nonce = Nonce.generate()
     * val option = GetGoogleIdOption.Builder().setServerClientId(webClientId).setNonce(nonce.raw).build()
     * // … credentialManager.getCredential(…) …
     * client.signInWithGoogle(GoogleIdTokenCredential.createFrom(credential.data).idToken, nonce.raw)
     * ```
     */
    suspend fun signInWithGoogle(idToken: String, rawNonce: String? = null): SignInResult =
        signIn(Provider.Google, SignInBody(idToken, rawNonce))

    /**
     * Exchanges an Apple identity token for a Lanyard session; [fullName] is sent because Apple shares the name only on
     * the first authorization. A held guest session is upgraded or merged.
     *
     * ```kotlin
     * client.signInWithApple(idToken, nonce.raw, FullName("Ada", "Lovelace"))
     * ```
     */
    suspend fun signInWithApple(idToken: String, rawNonce: String? = null, fullName: FullName? = null): SignInResult =
        signIn(Provider.Apple, SignInBody(idToken, rawNonce, fullName?.givenName, fullName?.familyName))

    /**
     * Exchanges an ID token of any provider the server offers (Microsoft, Facebook, the team's own OpenID Connect
     * issuer) for a Lanyard session; a held guest session is upgraded or merged.
     *
     * ```kotlin
     * client.signIn(Provider.Microsoft, msalResult.account.idToken!!, nonce.raw)
     * ```
     */
    suspend fun signIn(provider: Provider, idToken: String, nonce: String? = null): SignInResult =
        signIn(provider, SignInBody(idToken, nonce))

    /**
     * Starts a guest session: an account with no sign-in method, which keeps its data when the person signs in later.
     *
     * ```kotlin
     * if (client.currentUser == null) client.signInAnonymously()
     * ```
     */
    suspend fun signInAnonymously(): SignInResult =
        adopt(decode(send(ApiRequest("POST", "v1/auth/anonymous"), null), SessionResponse.serializer()))

    // Switching day (reference section 24)

    /**
     * The bridge from Firebase Auth: sends the signed-in user's current Firebase ID token once
     * (`POST /v1/auth/migrate/firebase`) and signs in with the Lanyard session it answers, as any sign-in does (stored,
     * [AuthEvent.SignedIn]), with no sign-in screen. The account imported with that uid answers; otherwise one is made
     * from the token's Apple and Google identities, and an anonymous Firebase user comes across as a guest.
     * [me]'s [User.legacyId] is then the Firebase uid your backend keys its data by.
     *
     * A signed-in (not guest) session held already crossed, or signed in another way: it is answered as is
     * (`isNewUser` false) and nothing is sent, so the app may call this on every start until it drops the Firebase SDK.
     * A guest held is refused with [LanyardException.InvalidRequest] (field `session`, reason `guest_session`): the
     * bridge cannot bring a guest's data along, so bridge before starting a guest, or sign the guest out first.
     * Throws [LanyardException.InvalidProviderToken] (`expired`, `issuer` for another project, `signature`,
     * `malformed`…), [LanyardException.NotFound] (a user no import brought and the token cannot describe),
     * [LanyardException.ProviderConflict] (its identities are another legacy account's),
     * [LanyardException.AccountDisabled], [LanyardException.UnsupportedProvider] (no Firebase project configured).
     *
     * ```kotlin
     * val old = Firebase.auth.currentUser
     * if (old != null && client.currentUser == null) {
     *     client.migrateFromFirebase(old.getIdToken(false).await().token!!)
     *     Firebase.auth.signOut() // the old session's work is done
     * }
     * ```
     */
    suspend fun migrateFromFirebase(idToken: String): SignInResult = migrate("firebase", "id_token", idToken)

    /**
     * The bridge from Supabase Auth, as [migrateFromFirebase] (the same rules for a session held): the signed-in user's
     * current access token. An anonymous Supabase user comes across as a guest; the anon key is refused
     * ([LanyardException.InvalidProviderToken] with reason `role`).
     *
     * ```kotlin
     * supabase.auth.currentSessionOrNull()?.let { client.migrateFromSupabase(it.accessToken) }
     * ```
     */
    suspend fun migrateFromSupabase(accessToken: String): SignInResult = migrate("supabase", "access_token", accessToken)

    /**
     * The bridge from Clerk, as [migrateFromFirebase] (the same rules for a session held): the signed-in user's current
     * session token. The user must have been imported ([LanyardException.NotFound] otherwise); impersonation, pending
     * sessions and JWT templates' tokens are refused ([LanyardException.InvalidProviderToken]).
     *
     * ```kotlin
     * Clerk.session?.fetchToken()?.jwt?.let { client.migrateFromClerk(it) }
     * ```
     */
    suspend fun migrateFromClerk(sessionToken: String): SignInResult = migrate("clerk", "session_token", sessionToken)

    private suspend fun migrate(source: String, field: String, token: String): SignInResult {
        require(token.isNotEmpty()) { "the old system's token is empty" }
        val held = synchronized(lock) { session }
        if (held != null) {
            if (held.user.isAnonymous) {
                throw LanyardException.InvalidRequest(
                    "session", "guest_session",
                    "A guest session is held: bridge the old session before starting a guest, or sign the guest out first.",
                )
            }
            return SignInResult(held.user, false, null)
        }
        val body = buildJsonObject { put(field, JsonPrimitive(token)) }.toString()
        return adopt(decode(send(ApiRequest("POST", "v1/auth/migrate/$source", body), null), SessionResponse.serializer()))
    }

    /**
     * The providers the server offers, in its order: which sign-in buttons to show.
     *
     * ```kotlin
     * val names = client.providers().map { it.displayName }
     * ```
     */
    suspend fun providers(): List<OfferedProvider> =
        decode(send(ApiRequest("GET", "v1/providers"), null), ListSerializer(OfferedProvider.serializer()))

    /**
     * Redirect sign-in (reference section 23), its first half: the URL of [provider]'s own sign-in page to open in a
     * browser (Custom Tabs on Android, the system browser on a desktop), for providers without a native button here:
     * Apple on Android, a company's Microsoft tenant. A PKCE verifier and a `state` wait in the [sessionStore] until
     * [completeSignIn] (so an app the system ended meanwhile still finishes); only the verifier's SHA-256 leaves the
     * device. [redirectUri] is the app's own address the browser comes back to, exactly one of the server's
     * `LANYARD_REDIRECT_URIS` (`com.example.app:/callback`, or an App Link). With [RedirectIntent.LINK] the flow is
     * started with the session's bearer and adds the provider to the signed-in account; an unlisted [redirectUri]
     * then throws [LanyardException.InvalidRedirectUri] (a sign-in's browser shows the server's page naming it).
     *
     * ```kotlin
     * val url = client.authorizationUrl(Provider.Apple, "com.example.app:/callback")
     * CustomTabsIntent.Builder().build().launchUrl(activity, Uri.parse(url))
     * ```
     */
    suspend fun authorizationUrl(provider: Provider, redirectUri: String, intent: RedirectIntent = RedirectIntent.SIGNIN): String =
        redirects.authorizationUrl(provider, redirectUri, intent)

    /**
     * Redirect sign-in's second half: [fromUrl] is the address the browser came back to
     * (`com.example.app:/callback?code=…&state=…`). Its `state` must be of a flow this device started
     * ([LanyardException.InvalidGrant] with reason `state` otherwise, before anything is sent); its `code` is traded,
     * with the kept verifier, for a session (a held guest upgrades or merges, [SignInResult.mergedFrom]) or, for a
     * link, the provider joins the account ([AuthEvent.Linked]). The flow is forgotten whatever the outcome; the same
     * URL handed over twice is exchanged once. Throws [LanyardException.SignInCancelled] when the person declined at
     * the provider, [LanyardException.InvalidGrant] (`expired`, `used`, `verifier`, `redirect_uri`),
     * [LanyardException.InvalidProviderToken], [LanyardException.ProviderConflict] (a link to someone else's account),
     * and `IllegalArgumentException` for a URL that carries no answer at all.
     *
     * ```kotlin
     * override fun onNewIntent(intent: Intent) {
     *     super.onNewIntent(intent)
     *     val url = intent.data?.toString() ?: return
     *     lifecycleScope.launch { runCatching { client.completeSignIn(url) }.onFailure { showError(it.message) } }
     * }
     * ```
     */
    suspend fun completeSignIn(fromUrl: String): SignInResult = redirects.complete(fromUrl)

    private suspend fun signIn(provider: Provider, body: SignInBody): SignInResult {
        val request = ApiRequest("POST", "v1/auth/signin/${segment(provider.name)}", json(SignInBody.serializer(), body))
        return adopt(sendWithGuestBearer(request))
    }

    /**
     * Sends a sign-in with the guest's bearer when a guest session is held (the server upgrades or merges it), else
     * without one. A guest whose session ended on the server signs in as anyone else does.
     */
    internal suspend fun sendWithGuestBearer(request: ApiRequest): SessionResponse {
        val guest = synchronized(lock) { session }?.takeIf { it.user.isAnonymous }
        val bearer = if (guest == null) null else try {
            accessToken()
        } catch (e: LanyardException.InvalidRefreshToken) {
            null
        } catch (e: LanyardException.RefreshTokenReused) {
            null
        } catch (e: LanyardException.NotSignedIn) {
            null
        }
        val response = if (bearer != null) sendAuthorized(request, firstBearer = bearer) else send(request, null)
        return decode(response, SessionResponse.serializer())
    }

    /** Holds the session an answer carries, and tells the listeners. */
    internal fun adopt(payload: SessionResponse): SignInResult {
        val stored = StoredSession.of(payload, options.clock())
        hold(stored, listOfNotNull(AuthEvent.SignedIn(stored.user, payload.isNewUser), payload.mergedFrom?.let { AuthEvent.MergedFrom(it) }))
        return SignInResult(stored.user, payload.isNewUser, payload.mergedFrom)
    }

    // Tokens for the app's own backend

    /**
     * A valid access token, refreshed first when it has expired or is about to (one refresh however many callers ask
     * at once). For the app's own backend, which verifies it with the server's JWKS.
     *
     * ```kotlin
     * connection.setRequestProperty("Authorization", "Bearer ${client.accessToken()}")
     * ```
     */
    suspend fun accessToken(): String {
        val current = synchronized(lock) { session } ?: throw LanyardException.NotSignedIn()
        if (current.expiresAtMillis - options.clock() > options.refreshLeewaySeconds * 1000) return current.accessToken
        return refreshedSession(current.accessToken).accessToken
    }

    /**
     * The session after one refresh, shared by every caller that needs it at the same time. When the held session
     * already has another access token than [staleAccessToken], a refresh happened meanwhile: it is answered as is.
     */
    internal suspend fun refreshedSession(staleAccessToken: String): StoredSession {
        val running = synchronized(lock) {
            refreshing ?: run {
                val current = session ?: throw LanyardException.NotSignedIn()
                if (current.accessToken != staleAccessToken) return current
                // In the client's scope, not the caller's: a caller that gives up must not lose the rotated token.
                scope.async { refresh(current) }.also { task ->
                    refreshing = task
                    task.invokeOnCompletion { synchronized(lock) { if (refreshing === task) refreshing = null } }
                }
            }
        }
        return running.await()
    }

    /**
     * Rotates [current]'s refresh token. The answer is held only when [current] is still the held session (a sign-in
     * or sign-out meanwhile wins). The server ending the session signs out; a network failure keeps it.
     */
    private suspend fun refresh(current: StoredSession): StoredSession {
        val payload = try {
            decode(
                send(ApiRequest("POST", "v1/auth/refresh", json(RefreshBody.serializer(), RefreshBody(current.refreshToken))), null),
                SessionResponse.serializer(),
            )
        } catch (e: LanyardException) {
            val reason = signOutReason(e)
            if (reason != null) {
                synchronized(lock) { if (session?.refreshToken == current.refreshToken) hold(null, listOf(AuthEvent.SignedOut(reason))) }
            }
            throw e
        }
        val renewed = StoredSession.of(payload, options.clock())
        synchronized(lock) {
            if (session?.refreshToken != current.refreshToken) return session ?: throw LanyardException.NotSignedIn()
            hold(renewed, listOfNotNull(AuthEvent.Refreshed, AuthEvent.UserUpdated(renewed.user).takeIf { renewed.user != current.user }))
        }
        return renewed
    }

    private fun signOutReason(error: LanyardException): SignOutReason? = when (error) {
        is LanyardException.InvalidRefreshToken -> SignOutReason.SessionEnded
        is LanyardException.RefreshTokenReused -> SignOutReason.RefreshTokenReused
        is LanyardException.AccountDisabled -> SignOutReason.AccountDisabled
        is LanyardException.AccountMerged -> SignOutReason.AccountMerged(error.into)
        else -> null
    }

    // Sign-in methods

    /**
     * Adds a sign-in method to the signed-in account (never signs anyone out). A provider account that belongs to
     * another account throws [LanyardException.ProviderConflict] with the reason.
     *
     * ```kotlin
     * try {
     *     client.link(ProviderCredential.google(idToken, nonce.raw))
     * } catch (e: LanyardException.ProviderConflict) {
     *     showAlert(e.message)
     * }
     * ```
     */
    suspend fun link(credential: ProviderCredential): User {
        val request = ApiRequest(
            "POST", "v1/auth/link/${segment(credential.provider.name)}",
            json(ProviderTokenBody.serializer(), ProviderTokenBody(credential.idToken, credential.nonce)),
        )
        val user = sendAuthorized(request, LinkResponse.serializer()).user ?: fetchUser()
        update(user, listOf(AuthEvent.Linked(credential.provider)))
        return user
    }

    /**
     * Removes a sign-in method. Needs a recent sign-in (else [LanyardException.ReauthenticationRequired]: call
     * [reauthenticate] and retry); the last method cannot go ([LanyardException.CannotUnlinkOnlyProvider]).
     *
     * ```kotlin
     * try {
     *     client.unlink(Provider.Google)
     * } catch (e: LanyardException.ReauthenticationRequired) {
     *     client.reauthenticate(ProviderCredential.google(freshIdToken, nonce.raw))
     *     client.unlink(Provider.Google)
     * }
     * ```
     */
    suspend fun unlink(provider: Provider): User {
        sendAuthorized(ApiRequest("DELETE", "v1/auth/link/${segment(provider.name)}"))
        val user = fetchUser()
        update(user, listOf(AuthEvent.Unlinked(provider)))
        return user
    }

    /**
     * Proves again that the person is who they are, with a fresh credential of one of the account's methods; unlinking
     * and deleting the account need it when the last sign-in is older than the server's window. The session is renewed.
     *
     * ```kotlin
     * client.reauthenticate(ProviderCredential.google(idToken, nonce.raw))
     * client.deleteAccount()
     * ```
     */
    suspend fun reauthenticate(credential: ProviderCredential): User {
        val request = ApiRequest(
            "POST", "v1/auth/reauthenticate/${segment(credential.provider.name)}",
            json(ProviderTokenBody.serializer(), ProviderTokenBody(credential.idToken, credential.nonce)),
        )
        return renew(sendAuthorized(request, SessionResponse.serializer()))
    }

    /** Holds a re-authentication's new session. */
    internal fun renew(payload: SessionResponse): User {
        hold(StoredSession.of(payload, options.clock()), listOf(AuthEvent.Refreshed, AuthEvent.UserUpdated(payload.user)))
        return payload.user
    }

    // Profile

    /**
     * Reads the account from the server (another device may have linked a method or changed the name) and holds it.
     *
     * ```kotlin
     * val user = client.me()
     * ```
     */
    suspend fun me(): User {
        val user = fetchUser()
        update(user)
        return user
    }

    /**
     * Sets the name the account shows; null or blank clears it.
     *
     * ```kotlin
     * client.updateProfile(displayName = "Ada Lovelace")
     * ```
     */
    suspend fun updateProfile(displayName: String?): User {
        val user = sendAuthorized(ApiRequest("PATCH", "v1/users/me", displayNameBody(displayName)), User.serializer())
        update(user)
        return user
    }

    internal suspend fun fetchUser(): User = sendAuthorized(ApiRequest("GET", "v1/users/me"), User.serializer())

    // Sessions

    /**
     * The account's signed-in devices; [DeviceSession.isCurrent] marks this one.
     *
     * ```kotlin
     * val devices = client.sessions()
     * ```
     */
    suspend fun sessions(): List<DeviceSession> = sendAuthorized(ApiRequest("GET", "v1/sessions"), SessionList.serializer()).sessions

    /**
     * Signs the device with session [id] out. Revoking this device's own session signs the client out.
     *
     * ```kotlin
     * client.sessions().firstOrNull { !it.isCurrent }?.let { client.revokeSession(it.id) }
     * ```
     */
    suspend fun revokeSession(id: String) {
        val own = heldSession?.sessionId == id
        sendAuthorized(ApiRequest("DELETE", "v1/sessions/${segment(id)}"))
        if (own) endSession(null, SignOutReason.UserRequested)
    }

    /**
     * Signs out: this device ([SignOutScope.LOCAL], the default), every device ([SignOutScope.GLOBAL]) or every other
     * device ([SignOutScope.OTHERS]). For the first two the client forgets its session even when the server cannot be
     * reached (the error is still thrown, so the app can say other devices may stay signed in).
     *
     * ```kotlin
     * runCatching { client.signOut() }
     * ```
     */
    suspend fun signOut(scope: SignOutScope = SignOutScope.LOCAL) {
        if (heldSession == null) return
        val request = ApiRequest("POST", "v1/auth/signout", json(SignOutBody.serializer(), SignOutBody(scope.wire)))
        try {
            sendAuthorized(request)
        } catch (e: LanyardException) {
            val alreadyEnded = e is LanyardException.Unauthorized || e is LanyardException.InvalidRefreshToken ||
                e is LanyardException.RefreshTokenReused || e is LanyardException.NotSignedIn
            if (!alreadyEnded) {
                if (scope != SignOutScope.OTHERS) endSession(null, SignOutReason.UserRequested)
                throw e
            }
        }
        if (scope != SignOutScope.OTHERS) endSession(null, SignOutReason.UserRequested)
    }

    /**
     * Signs every other device out; this one stays signed in.
     *
     * ```kotlin
     * client.signOutOthers()
     * ```
     */
    suspend fun signOutOthers() = signOut(SignOutScope.OTHERS)

    /**
     * Deletes the account with its sign-in methods, sessions and data, and signs out. Needs a recent sign-in (else
     * [LanyardException.ReauthenticationRequired]).
     *
     * ```kotlin
     * client.deleteAccount()
     * ```
     */
    suspend fun deleteAccount() {
        sendAuthorized(ApiRequest("DELETE", "v1/users/me"))
        endSession(null, SignOutReason.AccountDeleted)
    }

    // Merging two accounts of one person

    /**
     * Merges another account of the same person into this one (or this one into it, with [MergeKeep.OTHER]), proving
     * both: the client asks the server for a single-use nonce, [proving] signs in to the other account with it (the
     * provider's sheet), and the server moves that account's sign-in methods, records and groups in one transaction.
     * Kept the other account: this client adopts its session. The absorbed account's other devices are signed out with
     * [SignOutReason.AccountMerged].
     *
     * ```kotlin
     * val result = client.merge(keep = MergeKeep.CURRENT) { nonce ->
     *     ProviderCredential.google(credentialManagerGoogleIdToken(nonce), nonce)   // the other account
     * }
     * ```
     *
     * Throws [LanyardException.MergeConflict] (the same account, a guest, or both holding a different account of one
     * provider: list it in [release]), [LanyardException.OtherAccountDisabled], [LanyardException.NotFound] (nobody has
     * that provider account: link it instead), [LanyardException.ReauthenticationRequired].
     */
    suspend fun merge(
        keep: MergeKeep = MergeKeep.CURRENT,
        onConflict: MergeConflictRule = MergeConflictRule.NEWER,
        release: List<Provider> = emptyList(),
        dryRun: Boolean = false,
        proving: suspend (nonce: String) -> ProviderCredential,
    ): MergeResult {
        val challenge = sendAuthorized(ApiRequest("POST", "v1/users/me/merge/challenge"), MergeChallenge.serializer())
        val credential = proving(challenge.nonce)
        val proof = proofOf(credential.provider.name, mapOf("id_token" to JsonPrimitive(credential.idToken)))
        return sendMerge(proof, keep, onConflict, release, dryRun)
    }

    /**
     * Merges the account an email address signs in to, proven by the code of a flow this device started with
     * [EmailAuth.start].
     *
     * ```kotlin
     * val flow = client.email.start("ada@work.example")
     * client.mergeProvingEmail(flow, typedCode)
     * ```
     */
    suspend fun mergeProvingEmail(
        flow: EmailFlow, code: String, keep: MergeKeep = MergeKeep.CURRENT,
        onConflict: MergeConflictRule = MergeConflictRule.NEWER, release: List<Provider> = emptyList(), dryRun: Boolean = false,
    ): MergeResult {
        val proof = proofOf(
            "email",
            mapOf(
                "flow_id" to JsonPrimitive(flow.started.flowId), "flow_secret" to JsonPrimitive(flow.started.flowSecret),
                "code" to JsonPrimitive(code),
            ),
        )
        return sendMerge(proof, keep, onConflict, release, dryRun)
    }

    /**
     * Merges the account one of the person's passkeys signs in to, proven by an assertion made now.
     *
     * ```kotlin
     * client.mergeProvingPasskey(CredentialManagerPasskeys(activity))
     * ```
     */
    suspend fun mergeProvingPasskey(
        authenticator: PasskeyAuthenticator, keep: MergeKeep = MergeKeep.CURRENT,
        onConflict: MergeConflictRule = MergeConflictRule.NEWER, release: List<Provider> = emptyList(), dryRun: Boolean = false,
    ): MergeResult {
        val assertion = WireJson.parseToJsonElement(authenticator.get(passkeys.signInOptions()))
        return sendMerge(proofOf("passkey", mapOf("credential" to assertion)), keep, onConflict, release, dryRun)
    }

    // Records and live changes

    /**
     * The signed-in account's records in collection [name] (`[a-z][a-z0-9_-]{0,63}`), as values of [T], which must
     * encode to a JSON object.
     *
     * ```kotlin
     * @Serializable data class Reminder(val title: String, val done: Boolean = false)
     * val reminders = client.collection("reminders", Reminder.serializer())
     * reminders.put("r1", Reminder("Buy milk"))
     * ```
     */
    fun <T> collection(name: String, serializer: KSerializer<T>): LanyardCollection<T> =
        LanyardCollection(this, name, CollectionScope.Personal, serializer)

    /**
     * The same, with the serializer found from [T].
     *
     * ```kotlin
     * val reminders = client.collection<Reminder>("reminders")
     * ```
     */
    inline fun <reified T> collection(name: String): LanyardCollection<T> = collection(name, serializerOf<T>())

    /**
     * The account's changes across its collections and groups, first those since this device last watched (the
     * beginning the first time; when only collections had opened the connection, from the moment this collector joins
     * it), then live as other devices make them, on the client's **one** connection (shared with
     * every collection's [LanyardCollection.changes]). Reconnects with backoff after a dropped connection, refreshes the
     * session when the server says its token expired, and resumes after the last change it delivered (its place is kept
     * in the [sessionStore], per account): nothing is lost, nothing comes twice.
     *
     * Each collector waits on a bounded buffer (1,000 changes); one that falls that far behind ends with
     * [LanyardException.Network]. The flow throws when the session is over (the client signed out).
     *
     * ```kotlin
     * viewModelScope.launch {
     *     client.changes().collect { change -> if (change.isDeleted) db.remove(change.id) else db.upsert(change) }
     * }
     * ```
     */
    fun changes(): Flow<LiveChange> = liveFeed.wholeFeed()

    /**
     * The account's changes after [cursor] (a [LiveChange.cursor]), on a connection of its own that keeps no place.
     *
     * ```kotlin
     * client.changes(since = savedCursor).collect { apply(it); savedCursor = it.cursor }
     * ```
     */
    fun changes(since: String): Flow<LiveChange> = liveFeed.ownConnection(since)

    // Plumbing shared by the parts of the SDK

    /** Sends [request] with a fresh access token; on `401 UNAUTHORIZED`, refreshes once and retries once. */
    internal suspend fun sendAuthorized(request: ApiRequest, firstBearer: String? = null): HttpResponse {
        val bearer = firstBearer ?: accessToken()
        try {
            return try {
                send(request, bearer)
            } catch (e: LanyardException.Unauthorized) {
                send(request, refreshedSession(bearer).accessToken)
            }
        } catch (e: LanyardException.AccountDisabled) {
            // An operator disabled the account: its sessions are over.
            endSession(null, SignOutReason.AccountDisabled)
            throw e
        } catch (e: LanyardException.AccountMerged) {
            // Merged into another account from another device: this session is over.
            endSession(bearer, SignOutReason.AccountMerged(e.into))
            throw e
        }
    }

    internal suspend fun <T> sendAuthorized(request: ApiRequest, deserializer: DeserializationStrategy<T>): T =
        decode(sendAuthorized(request), deserializer)

    /** Sends [request] with [bearer] (or none): the answer when it is a 2xx, else the error it stands for. */
    internal suspend fun send(request: ApiRequest, bearer: String?): HttpResponse {
        val headers = LinkedHashMap<String, String>()
        headers["Accept"] = "application/json"
        headers["X-Client-Info"] = CLIENT_INFO
        if (request.body != null) headers["Content-Type"] = "application/json"
        if (bearer != null) headers["Authorization"] = "Bearer $bearer"
        headers.putAll(request.headers)
        val response = try {
            options.transport.send(HttpRequest(request.method, url(request.path, request.query), headers, request.body?.toByteArray()))
        } catch (e: IOException) {
            throw LanyardException.Network(e)
        }
        LanyardException.fromResponse(response.status, response.text, response.headers["retry-after"])?.let { throw it }
        return response
    }

    internal fun url(path: String, query: List<Pair<String, String>> = emptyList()): String {
        val base = "$baseUrl/$path"
        if (query.isEmpty()) return base
        return base + "?" + query.joinToString("&") { (name, value) -> "$name=${URLEncoder.encode(value, "UTF-8")}" }
    }

    internal fun <T> decode(response: HttpResponse, deserializer: DeserializationStrategy<T>): T = try {
        WireJson.decodeFromString(deserializer, response.text)
    } catch (e: SerializationException) {
        throw LanyardException.InvalidResponse(response.status)
    } catch (e: IllegalArgumentException) {
        throw LanyardException.InvalidResponse(response.status)
    }

    internal fun <T> json(serializer: KSerializer<T>, value: T): String = WireJson.encodeToString(serializer, value)

    /** Replaces the held session (null: signed out), stores it, and sends [events], in order. */
    internal fun hold(next: StoredSession?, events: List<AuthEvent>) = synchronized(lock) {
        session = next
        runCatching { sessionStore.write(SESSION_KEY, next?.let { WireJson.encodeToString(StoredSession.serializer(), it) }) }
        state.value = next?.let { AuthState.SignedIn(it.user) } ?: AuthState.SignedOut
        for (event in events) this.events.tryEmit(event)
    }

    /** Replaces the held session's user and sends [extra], then [AuthEvent.UserUpdated]. */
    internal fun update(user: User, extra: List<AuthEvent> = emptyList()) = synchronized(lock) {
        val current = session ?: return@synchronized
        hold(current.copy(user = user), extra + AuthEvent.UserUpdated(user))
    }

    /** Signs out with [reason] when the held session still uses [bearer] (any session when [bearer] is null). */
    internal fun endSession(bearer: String?, reason: SignOutReason) = synchronized(lock) {
        val current = session ?: return@synchronized
        if (bearer == null || current.accessToken == bearer) hold(null, listOf(AuthEvent.SignedOut(reason)))
    }

    /** The held session's access token and its `sid`, without a request. */
    internal val heldSession: StoredSession? get() = synchronized(lock) { session }

    private fun restore(): StoredSession? = runCatching {
        sessionStore.read(SESSION_KEY)?.let { WireJson.decodeFromString(StoredSession.serializer(), it) }
    }.getOrNull()

    /**
     * Stops the client's live connection and any refresh in flight, for good: make a new client to go on. The session
     * stays in the store.
     *
     * ```kotlin
     * override fun onTerminate() { client.close() }
     * ```
     */
    override fun close() {
        scope.cancel()
    }

    internal companion object {
        const val SESSION_KEY = "session"
        const val VERSION = "0.8.0"
        const val CLIENT_INFO = "lanyard-kotlin/$VERSION"

        fun segment(text: String): String = URLEncoder.encode(text, "UTF-8").replace("+", "%20")
    }
}

/** One request to the API, before the bearer is added. */
internal class ApiRequest(
    val method: String,
    val path: String,
    val body: String? = null,
    val query: List<Pair<String, String>> = emptyList(),
    val headers: Map<String, String> = emptyMap(),
)

/** The session as it is stored: both tokens, when the access token expires by this device's clock, the user. */
@Serializable
internal data class StoredSession(
    @SerialName("access_token") val accessToken: String,
    @SerialName("refresh_token") val refreshToken: String,
    @SerialName("expires_at_ms") val expiresAtMillis: Long,
    val user: User,
) {
    /** The access token's session id (`sid`), read without verification: only to tell which listed session is this one. */
    val sessionId: String?
        get() = runCatching {
            val payload = accessToken.split('.')[1]
            val claims = WireJson.parseToJsonElement(String(Base64.getUrlDecoder().decode(payload))).jsonObject
            (claims["sid"] as? JsonPrimitive)?.content
        }.getOrNull()

    companion object {
        fun of(payload: SessionResponse, nowMillis: Long) =
            StoredSession(payload.accessToken, payload.refreshToken, nowMillis + payload.expiresIn * 1000, payload.user)
    }
}

/** `{"display_name": value}`, with an explicit null to clear it. */
internal fun displayNameBody(displayName: String?): String =
    buildJsonObject { put("display_name", displayName?.let { JsonPrimitive(it) } ?: JsonNull) }.toString()

/** `serializer<T>()` for the reified helpers. */
@PublishedApi
internal inline fun <reified T> serializerOf(): KSerializer<T> = serializer()
