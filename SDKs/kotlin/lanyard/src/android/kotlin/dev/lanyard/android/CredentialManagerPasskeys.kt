// Android source set. NOT COMPILED IN THIS REPOSITORY: android.jar and androidx are not on its build machine.
// Written against the documented APIs of androidx.credentials 1.5, and built by SDKs/kotlin/lanyard-android's
// Gradle build in an app's own project.
package dev.lanyard.android

import android.content.Context
import androidx.credentials.CreatePublicKeyCredentialRequest
import androidx.credentials.CreatePublicKeyCredentialResponse
import androidx.credentials.CredentialManager
import androidx.credentials.GetCredentialRequest
import androidx.credentials.GetPublicKeyCredentialOption
import androidx.credentials.PublicKeyCredential
import dev.lanyard.PasskeyAuthenticator

/**
 * Passkeys through Android's Credential Manager: the server's WebAuthn options JSON goes in as it is
 * (`CreatePublicKeyCredentialRequest`, `GetPublicKeyCredentialOption`), and the authenticator's response JSON comes
 * back as it is (`registrationResponseJson`, `authenticationResponseJson`). Pass an Activity as [context]: the system
 * sheet is shown over it.
 *
 * The passkeys bind to the server's domain (`LANYARD_WEBAUTHN_RP_ID`); the app proves it may use them through the
 * `assetlinks.json` Lanyard serves from `LANYARD_ANDROID_APPS` (see the Android guide).
 *
 * ```kotlin
 * val passkeys = CredentialManagerPasskeys(activity)
 * client.passkeys.register("Pixel 9", passkeys)
 * client.passkeys.signIn(passkeys)
 * ```
 */
class CredentialManagerPasskeys(private val context: Context) : PasskeyAuthenticator {
    private val credentialManager = CredentialManager.create(context)

    override suspend fun create(requestJson: String): String {
        val response = credentialManager.createCredential(context, CreatePublicKeyCredentialRequest(requestJson))
        check(response is CreatePublicKeyCredentialResponse) { "Credential Manager answered a ${response.type}, not a passkey" }
        return response.registrationResponseJson
    }

    override suspend fun get(requestJson: String): String {
        val request = GetCredentialRequest.Builder().addCredentialOption(GetPublicKeyCredentialOption(requestJson)).build()
        val credential = credentialManager.getCredential(context, request).credential
        check(credential is PublicKeyCredential) { "Credential Manager answered a ${credential.type}, not a passkey" }
        return credential.authenticationResponseJson
    }
}
