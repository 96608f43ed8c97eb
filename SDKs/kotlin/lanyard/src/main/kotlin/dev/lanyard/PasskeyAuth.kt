package dev.lanyard

import java.time.Instant
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject

/**
 * What makes and uses passkeys on this device. WebAuthn's JSON goes in and out as text, which is exactly what
 * Android's Credential Manager takes (`CreatePublicKeyCredentialRequest(requestJson)`,
 * `GetPublicKeyCredentialOption(requestJson)`) and gives (`registrationResponseJson`, `authenticationResponseJson`).
 * The Android source set's `CredentialManagerPasskeys` is one; a test's software authenticator is another.
 *
 * ```kotlin
 * class MyAuthenticator : PasskeyAuthenticator {
 *     override suspend fun create(requestJson: String): String = TODO("RegistrationResponseJSON")
 *     override suspend fun get(requestJson: String): String = TODO("AuthenticationResponseJSON")
 * }
 * ```
 */
interface PasskeyAuthenticator {
    /** Makes a passkey for `PublicKeyCredentialCreationOptionsJSON`; answers `RegistrationResponseJSON`. */
    suspend fun create(requestJson: String): String

    /** Signs a discoverable challenge (`PublicKeyCredentialRequestOptionsJSON`); answers `AuthenticationResponseJSON`. */
    suspend fun get(requestJson: String): String
}

/**
 * The passkey calls (reference section 19): the two ceremonies, each an options request, the authenticator and the
 * server's check, and the account's list. Refusals arrive as [LanyardException.InvalidPasskey] with the reason.
 *
 * ```kotlin
 * val passkey = client.passkeys.register("Pixel 9", CredentialManagerPasskeys(activity))
 * val result = client.passkeys.signIn(CredentialManagerPasskeys(activity))
 * ```
 */
class PasskeyAuth internal constructor(private val client: LanyardClient) {
    /**
     * Makes a passkey for the signed-in account and adds it (a guest is upgraded in place). A full account's sign-in
     * must be recent: [LanyardException.ReauthenticationRequired] otherwise.
     *
     * ```kotlin
     * val passkey = client.passkeys.register("Ada's Pixel", CredentialManagerPasskeys(activity))
     * ```
     */
    suspend fun register(name: String?, authenticator: PasskeyAuthenticator): Passkey =
        register(authenticator.create(registrationOptions()), name)

    /**
     * The options for a new passkey (`PublicKeyCredentialCreationOptionsJSON`), for an authenticator this SDK does not
     * drive: `CreatePublicKeyCredentialRequest(client.passkeys.registrationOptions())`.
     *
     * ```kotlin
     * val request = CreatePublicKeyCredentialRequest(client.passkeys.registrationOptions())
     * ```
     */
    suspend fun registrationOptions(): String =
        client.sendAuthorized(ApiRequest("POST", "v1/auth/passkeys/register/options")).text

    /**
     * Adds a passkey an authenticator made for [registrationOptions] (its `RegistrationResponseJSON`).
     *
     * ```kotlin
     * client.passkeys.register(response.registrationResponseJson, name = "YubiKey")
     * ```
     */
    suspend fun register(registrationResponseJson: String, name: String? = null): Passkey {
        val body = buildJsonObject {
            put("credential", parse(registrationResponseJson))
            name?.let { put("name", JsonPrimitive(it)) }
        }.toString()
        val registered = client.sendAuthorized(ApiRequest("POST", "v1/auth/passkeys/register", body), PasskeyRegistered.serializer())
        client.update(registered.user, listOf(AuthEvent.Linked(Provider.Passkey)))
        return registered.passkey
    }

    /**
     * Signs in with a passkey the person picks; no account is named. A guest's data comes along (upgraded or merged).
     *
     * ```kotlin
     * val result = client.passkeys.signIn(CredentialManagerPasskeys(activity))
     * ```
     */
    suspend fun signIn(authenticator: PasskeyAuthenticator): SignInResult = signIn(authenticator.get(signInOptions()))

    /**
     * A discoverable sign-in's challenge (`PublicKeyCredentialRequestOptionsJSON`), for an authenticator this SDK does
     * not drive: `GetPublicKeyCredentialOption(client.passkeys.signInOptions())`.
     *
     * ```kotlin
     * val option = GetPublicKeyCredentialOption(client.passkeys.signInOptions())
     * ```
     */
    suspend fun signInOptions(): String = client.send(ApiRequest("POST", "v1/auth/passkeys/signin/options"), null).text

    /**
     * Signs in with an assertion an authenticator gave for [signInOptions] (its `AuthenticationResponseJSON`).
     *
     * ```kotlin
     * client.passkeys.signIn(credential.authenticationResponseJson)
     * ```
     */
    suspend fun signIn(authenticationResponseJson: String): SignInResult {
        val body = buildJsonObject { put("credential", parse(authenticationResponseJson)) }.toString()
        return client.adopt(client.sendWithGuestBearer(ApiRequest("POST", "v1/auth/passkeys/signin", body)))
    }

    /**
     * Proves the person is still there with one of the account's passkeys (before removing a method or deleting the
     * account); the session is renewed.
     *
     * ```kotlin
     * client.passkeys.reauthenticate(CredentialManagerPasskeys(activity))
     * client.deleteAccount()
     * ```
     */
    suspend fun reauthenticate(authenticator: PasskeyAuthenticator): User {
        val assertion = authenticator.get(signInOptions())
        val body = buildJsonObject {
            put("credential", parse(assertion))
            put("intent", JsonPrimitive("reauthenticate"))
        }.toString()
        return client.renew(client.sendAuthorized(ApiRequest("POST", "v1/auth/passkeys/signin", body), SessionResponse.serializer()))
    }

    /**
     * The account's passkeys, oldest first.
     *
     * ```kotlin
     * client.passkeys.list().forEach { println(it.name) }
     * ```
     */
    suspend fun list(): List<Passkey> =
        client.sendAuthorized(ApiRequest("GET", "v1/users/me/passkeys"), PasskeyList.serializer()).passkeys

    /**
     * Renames a passkey.
     *
     * ```kotlin
     * client.passkeys.rename(passkey.id, "Work phone")
     * ```
     */
    suspend fun rename(id: String, name: String): Passkey {
        val body = buildJsonObject { put("name", JsonPrimitive(name)) }.toString()
        return client.sendAuthorized(ApiRequest("PATCH", "v1/users/me/passkeys/${LanyardClient.segment(id)}", body), Passkey.serializer())
    }

    /**
     * Removes a passkey (a recent sign-in; never the account's last way in: [LanyardException.CannotUnlinkOnlyProvider]).
     *
     * ```kotlin
     * client.passkeys.remove(lostPhonesPasskey.id)
     * ```
     */
    suspend fun remove(id: String): User {
        client.sendAuthorized(ApiRequest("DELETE", "v1/users/me/passkeys/${LanyardClient.segment(id)}"))
        val user = client.fetchUser()
        client.update(user, listOf(AuthEvent.Unlinked(Provider.Passkey)))
        return user
    }

    private fun parse(json: String): JsonElement = try {
        WireJson.parseToJsonElement(json)
    } catch (e: SerializationException) {
        throw LanyardException.InvalidPasskey("malformed")
    }
}

/**
 * One of the account's passkeys.
 *
 * ```kotlin
 * println("${passkey.name}, last used ${passkey.lastUsedAt ?: "never"}")
 * ```
 */
@Serializable
data class Passkey(
    val id: String,
    val name: String,
    @SerialName("created_at") @Serializable(InstantSerializer::class) val createdAt: Instant,
    @SerialName("last_used_at") @Serializable(InstantSerializer::class) val lastUsedAt: Instant? = null,
    /** Synced to the person's other devices (Google Password Manager, iCloud Keychain). */
    @SerialName("backed_up") val backedUp: Boolean = false,
)

@Serializable
internal data class PasskeyRegistered(val passkey: Passkey, val user: User)

@Serializable
internal data class PasskeyList(val passkeys: List<Passkey>)
