// Android source set. NOT COMPILED IN THIS REPOSITORY: android.jar and androidx are not on its build machine.
// Written against the documented APIs (android.security.keystore, javax.crypto, SharedPreferences) and built by
// SDKs/kotlin/lanyard-android's Gradle build in an app's own project.
package dev.lanyard.android

import android.content.Context
import android.content.SharedPreferences
import android.security.keystore.KeyGenParameterSpec
import android.security.keystore.KeyProperties
import android.util.Base64
import dev.lanyard.SessionStore
import java.security.KeyStore
import javax.crypto.Cipher
import javax.crypto.KeyGenerator
import javax.crypto.SecretKey
import javax.crypto.spec.GCMParameterSpec

/**
 * A [SessionStore] whose values (the session's tokens and user, the change feeds' places) are encrypted with an
 * AES-256-GCM key that lives in the Android Keystore and never leaves it (hardware-backed where the device has it).
 * The ciphertexts sit in a private SharedPreferences file; a copied file is useless without this device's key.
 *
 * ```kotlin
 * class App : Application() {
 *     val lanyard by lazy { LanyardClient("https://auth.example.com", KeystoreSessionStore(this)) }
 * }
 * ```
 *
 * A value that no longer decrypts (the key was removed with the app's data, or a backup was restored onto another
 * device) reads as absent: the person signs in again, nothing crashes. Exclude the preferences file from Auto Backup.
 *
 * @param context any context; the application's is kept.
 * @param name the preferences file and the Keystore key's alias.
 */
class KeystoreSessionStore(context: Context, private val name: String = "dev.lanyard.session") : SessionStore {
    private val preferences: SharedPreferences = context.applicationContext.getSharedPreferences(name, Context.MODE_PRIVATE)
    private val lock = Any()

    override fun read(key: String): String? = synchronized(lock) {
        val stored = preferences.getString(key, null) ?: return null
        try {
            val bytes = Base64.decode(stored, Base64.NO_WRAP)
            val cipher = Cipher.getInstance(TRANSFORMATION)
            cipher.init(Cipher.DECRYPT_MODE, key(), GCMParameterSpec(TAG_BITS, bytes, 0, IV_BYTES))
            cipher.updateAAD(key.toByteArray())
            String(cipher.doFinal(bytes, IV_BYTES, bytes.size - IV_BYTES), Charsets.UTF_8)
        } catch (e: Exception) {
            preferences.edit().remove(key).apply()
            null
        }
    }

    override fun write(key: String, value: String?) = synchronized(lock) {
        if (value == null) {
            preferences.edit().remove(key).apply()
            return@synchronized
        }
        val cipher = Cipher.getInstance(TRANSFORMATION)
        // The Keystore picks a fresh random IV for every encryption (callers may not choose one).
        cipher.init(Cipher.ENCRYPT_MODE, key())
        // The key name is authenticated too, so a value cannot be moved to another key.
        cipher.updateAAD(key.toByteArray())
        val sealed = cipher.iv + cipher.doFinal(value.toByteArray(Charsets.UTF_8))
        // commit(), not apply(): a rotated refresh token must be on disk before the next request uses it.
        preferences.edit().putString(key, Base64.encodeToString(sealed, Base64.NO_WRAP)).commit()
        Unit
    }

    private fun key(): SecretKey {
        val keyStore = KeyStore.getInstance(KEYSTORE).apply { load(null) }
        (keyStore.getEntry(name, null) as? KeyStore.SecretKeyEntry)?.let { return it.secretKey }
        val generator = KeyGenerator.getInstance(KeyProperties.KEY_ALGORITHM_AES, KEYSTORE)
        generator.init(
            KeyGenParameterSpec.Builder(name, KeyProperties.PURPOSE_ENCRYPT or KeyProperties.PURPOSE_DECRYPT)
                .setBlockModes(KeyProperties.BLOCK_MODE_GCM)
                .setEncryptionPaddings(KeyProperties.ENCRYPTION_PADDING_NONE)
                .setKeySize(256)
                .setRandomizedEncryptionRequired(true)
                .build(),
        )
        return generator.generateKey()
    }

    private companion object {
        const val KEYSTORE = "AndroidKeyStore"
        const val TRANSFORMATION = "AES/GCM/NoPadding"
        const val IV_BYTES = 12
        const val TAG_BITS = 128
    }
}
