package dev.lanyard

import java.time.Instant
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable

/**
 * A sign-in provider: [Apple], [Google], [Email], [Passkey], or any name the server configures
 * (`LANYARD_OIDC_PROVIDERS`), such as `Provider("microsoft")`. A value class rather than an enum, so that a server
 * offering a provider this version of the SDK does not know still decodes.
 *
 * ```kotlin
 * if (client.currentUser?.isLinked(Provider.Google) == false) showLinkGoogleButton()
 * ```
 */
@Serializable
@JvmInline
value class Provider(val name: String) {
    /** A name to show a person: "Apple", "Google"; the server's `displayName` ([LanyardClient.providers]) for others. */
    val displayName: String
        get() = when (name) {
            "apple" -> "Apple"
            "google" -> "Google"
            "microsoft" -> "Microsoft"
            "facebook" -> "Facebook"
            else -> name.replaceFirstChar { it.uppercaseChar() }
        }

    override fun toString() = name

    companion object {
        /** Sign in with Apple. */
        val Apple = Provider("apple")

        /** Sign in with Google (Credential Manager's `GetGoogleIdOption` on Android). */
        val Google = Provider("google")

        /** Microsoft Entra ID and personal accounts, when the server configures `microsoft`. */
        val Microsoft = Provider("microsoft")

        /** Facebook Limited Login, when the server configures `facebook`. */
        val Facebook = Provider("facebook")

        /** The email identity: an address proven by a code or a link ([LanyardClient.email]). */
        val Email = Provider("email")

        /** A passkey ([LanyardClient.passkeys]); an account may hold several. */
        val Passkey = Provider("passkey")
    }
}

/**
 * The signed-in account, as the server last described it.
 *
 * ```kotlin
 * val user = client.currentUser ?: return showSignIn()
 * println("${user.displayName ?: "Guest"} ${user.linkedProviders.map { it.provider }}")
 * ```
 */
@Serializable
data class User(
    /** The account's id; it never changes, also not when a guest signs in. */
    val id: String,
    @SerialName("created_at") @Serializable(InstantSerializer::class) val createdAt: Instant,
    /** A guest: no sign-in method yet. */
    @SerialName("is_anonymous") val isAnonymous: Boolean,
    @SerialName("display_name") val displayName: String? = null,
    /** The email of the first identity that has one. */
    val email: String? = null,
    /** The account's sign-in methods, oldest link first. */
    val identities: List<Identity> = emptyList(),
    /**
     * The id the system the app moved from knew this account by (a Firebase uid, a Supabase user id, a Clerk
     * `user_…`), in [LanyardClient.me]'s answer (a sign-in's or a refresh's user leaves it null); null for an account
     * Lanyard made itself (reference section 24).
     *
     * ```kotlin
     * val backendID = client.me().let { it.legacyId ?: it.id }
     * ```
     */
    @SerialName("legacy_id") val legacyId: String? = null,
    /** The system [legacyId] is of: `firebase`, `supabase`, `clerk`, `auth0` or a name of Lanyard's import lines. */
    @SerialName("legacy_source") val legacySource: String? = null,
) {
    /** The sign-in methods as a settings screen lists them, oldest first, the primary one marked. */
    val linkedProviders: List<LinkedProvider>
        get() = identities.mapIndexed { index, identity ->
            LinkedProvider(
                identity.provider,
                identity.primary || (index == 0 && identities.none { it.primary }),
                identity.linkedAt,
                identity.email,
            )
        }

    /**
     * Whether [provider] is one of the account's sign-in methods.
     *
     * ```kotlin
     * val canLinkGoogle = !user.isLinked(Provider.Google)
     * ```
     */
    fun isLinked(provider: Provider) = identities.any { it.provider == provider }
}

/** One provider account attached to the user. */
@Serializable
data class Identity(
    val provider: Provider,
    val email: String? = null,
    @SerialName("email_verified") val emailVerified: Boolean = false,
    /** An Apple private relay address. */
    @SerialName("is_private_email") val isPrivateEmail: Boolean = false,
    @SerialName("linked_at") @Serializable(InstantSerializer::class) val linkedAt: Instant,
    @SerialName("last_sign_in_at") @Serializable(InstantSerializer::class) val lastSignInAt: Instant? = null,
    /** The account's primary sign-in method. */
    val primary: Boolean = false,
)

/** A sign-in method as a settings screen lists it ([User.linkedProviders]). */
data class LinkedProvider(val provider: Provider, val isPrimary: Boolean, val linkedAt: Instant, val email: String?)

/**
 * One provider the server offers (`GET /v1/providers`): which sign-in buttons to show.
 *
 * ```kotlin
 * val buttons = client.providers().map { it.displayName } // ["Apple", "Google", "Email", "Passkey"]
 * ```
 */
@Serializable
data class OfferedProvider(
    val name: Provider,
    @SerialName("display_name") val displayName: String,
    /** `apple`, `google`, `oidc`, `email` or `passkey`. */
    val kind: String,
)

/**
 * What a sign-in did.
 *
 * ```kotlin
 * val result = client.signInWithGoogle(idToken, nonce.raw)
 * result.mergedFrom?.let { guest -> println("the guest $guest was merged into ${result.user.id}") }
 * ```
 */
data class SignInResult(
    /** The account now signed in. */
    val user: User,
    /** This sign-in made the account. */
    val isNewUser: Boolean,
    /** The guest account whose data was merged into [user], when its sign-in method already had an account. */
    val mergedFrom: String?,
)

/**
 * What a provider's SDK handed the app, for [LanyardClient.link], [LanyardClient.reauthenticate] and merges.
 *
 * ```kotlin
 * client.link(ProviderCredential.google(googleIdTokenCredential.idToken, nonce.raw))
 * ```
 */
data class ProviderCredential(
    val provider: Provider,
    /** The provider's ID token (a JWT). */
    val idToken: String,
    /** The raw nonce the app generated, if any (Lanyard accepts it raw or as Apple's SHA-256 hex). */
    val nonce: String? = null,
) {
    companion object {
        /** An Apple ID token (Sign in with Apple through a web flow on Android), with the raw nonce. */
        fun apple(idToken: String, rawNonce: String? = null) = ProviderCredential(Provider.Apple, idToken, rawNonce)

        /** A Google ID token from Credential Manager, with the nonce given to `GetGoogleIdOption`. */
        fun google(idToken: String, nonce: String? = null) = ProviderCredential(Provider.Google, idToken, nonce)
    }
}

/**
 * A person's name as Apple shares it, once, on the first authorization.
 *
 * ```kotlin
 * client.signInWithApple(idToken, nonce.raw, FullName("Ada", "Lovelace"))
 * ```
 */
data class FullName(val givenName: String?, val familyName: String?)

/**
 * One signed-in device of the account ([LanyardClient.sessions]).
 *
 * ```kotlin
 * client.sessions().filterNot { it.isCurrent }.forEach { client.revokeSession(it.id) }
 * ```
 */
@Serializable
data class DeviceSession(
    val id: String,
    @SerialName("created_at") @Serializable(InstantSerializer::class) val createdAt: Instant,
    @SerialName("last_refreshed_at") @Serializable(InstantSerializer::class) val lastRefreshedAt: Instant,
    @SerialName("expires_at") @Serializable(InstantSerializer::class) val expiresAt: Instant,
    @SerialName("auth_time") @Serializable(InstantSerializer::class) val authTime: Instant,
    /** How it signed in: `apple`, `google`, `anonymous`… */
    val method: String,
    @SerialName("client_ip") val clientIp: String? = null,
    @SerialName("user_agent") val userAgent: String? = null,
    /** This device. */
    @SerialName("current") val isCurrent: Boolean = false,
)

/**
 * Which sessions [LanyardClient.signOut] ends.
 *
 * ```kotlin
 * client.signOut(SignOutScope.OTHERS) // every other device; this one stays signed in
 * ```
 */
enum class SignOutScope(internal val wire: String) {
    /** This device only. */
    LOCAL("local"),

    /** Every device, this one included. */
    GLOBAL("global"),

    /** Every device but this one. */
    OTHERS("others"),
}

// Shapes only the SDK reads or writes.

@Serializable
internal data class SessionResponse(
    @SerialName("access_token") val accessToken: String,
    @SerialName("expires_in") val expiresIn: Long,
    @SerialName("refresh_token") val refreshToken: String,
    val user: User,
    @SerialName("is_new_user") val isNewUser: Boolean = false,
    @SerialName("merged_from") val mergedFrom: String? = null,
)

@Serializable
internal data class LinkResponse(val user: User? = null, val message: String? = null)

@Serializable
internal data class SessionList(val sessions: List<DeviceSession>)

@Serializable
internal data class SignInBody(
    @SerialName("id_token") val idToken: String,
    val nonce: String? = null,
    @SerialName("given_name") val givenName: String? = null,
    @SerialName("family_name") val familyName: String? = null,
)

@Serializable
internal data class ProviderTokenBody(@SerialName("id_token") val idToken: String, val nonce: String? = null)

@Serializable
internal data class RefreshBody(@SerialName("refresh_token") val refreshToken: String)

@Serializable
internal data class SignOutBody(val scope: String)
