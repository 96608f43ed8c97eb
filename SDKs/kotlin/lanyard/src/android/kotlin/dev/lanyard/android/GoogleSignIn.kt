// Android source set. NOT COMPILED IN THIS REPOSITORY: android.jar and androidx are not on its build machine.
// Written against the documented APIs of androidx.credentials 1.5 and googleid 1.1, and built by
// SDKs/kotlin/lanyard-android's Gradle build in an app's own project.
package dev.lanyard.android

import android.content.Context
import androidx.credentials.CredentialManager
import androidx.credentials.CustomCredential
import androidx.credentials.GetCredentialRequest
import com.google.android.libraries.identity.googleid.GetGoogleIdOption
import com.google.android.libraries.identity.googleid.GoogleIdTokenCredential
import dev.lanyard.LanyardClient
import dev.lanyard.Nonce
import dev.lanyard.ProviderCredential
import dev.lanyard.SignInResult

/**
 * Sign in with Google through Credential Manager's `GetGoogleIdOption`, with a fresh nonce that Lanyard checks: the
 * ID token Google returns carries it, and the same raw value goes to Lanyard, so a token taken from another sign-in is
 * refused.
 *
 * ```kotlin
 * val google = GoogleSignIn(webClientId = getString(R.string.google_web_client_id))
 * lifecycleScope.launch {
 *     try {
 *         val result = google.signIn(activity, client)   // a guest session is upgraded or merged
 *     } catch (e: GetCredentialCancellationException) { /* the person closed the sheet */ }
 * }
 * ```
 *
 * @param webClientId the **web** OAuth client id of the Google Cloud project (Credential Manager names it the server
 *   client id); list it, and the Android client's id, in the server's `LANYARD_GOOGLE_CLIENT_IDS`.
 * @param onlyAuthorizedAccounts true to offer only accounts that signed in to the app before (a quiet returning
 *   sign-in); false to offer every Google account on the device.
 */
class GoogleSignIn(private val webClientId: String, private val onlyAuthorizedAccounts: Boolean = false) {
    /**
     * Shows Google's account sheet and signs the chosen account in to Lanyard.
     *
     * ```kotlin
     * val result = GoogleSignIn(webClientId).signIn(activity, client)
     * ```
     */
    suspend fun signIn(context: Context, client: LanyardClient): SignInResult {
        val credential = credential(context, Nonce.generate())
        return client.signInWithGoogle(credential.idToken, credential.nonce)
    }

    /**
     * Shows Google's account sheet and answers the chosen account's ID token with [nonce], for
     * [LanyardClient.link], [LanyardClient.reauthenticate] and [LanyardClient.merge] (whose nonce comes from the server).
     *
     * ```kotlin
     * client.link(GoogleSignIn(webClientId).credential(activity))
     * client.merge { nonce -> GoogleSignIn(webClientId).credential(activity, Nonce.of(nonce)) }
     * ```
     */
    suspend fun credential(context: Context, nonce: Nonce = Nonce.generate()): ProviderCredential {
        val option = GetGoogleIdOption.Builder()
            .setServerClientId(webClientId)
            .setFilterByAuthorizedAccounts(onlyAuthorizedAccounts)
            .setNonce(nonce.raw)
            .build()
        val request = GetCredentialRequest.Builder().addCredentialOption(option).build()
        val response = CredentialManager.create(context).getCredential(context, request)
        val credential = response.credential
        check(credential is CustomCredential && credential.type == GoogleIdTokenCredential.TYPE_GOOGLE_ID_TOKEN_CREDENTIAL) {
            "Credential Manager answered a ${credential.type}, not a Google ID token"
        }
        val google = GoogleIdTokenCredential.createFrom(credential.data)
        return ProviderCredential.google(google.idToken, nonce.raw)
    }
}
