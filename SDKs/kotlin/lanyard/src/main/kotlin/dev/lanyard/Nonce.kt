package dev.lanyard

import java.security.MessageDigest
import java.security.SecureRandom
import java.util.Base64

/**
 * A nonce for an ID-token sign-in: hand [raw] to the provider's request (Credential Manager's
 * `GetGoogleIdOption.Builder().setNonce(raw)`) and to Lanyard (`signInWithGoogle(idToken, raw)`). Lanyard accepts a
 * token whose `nonce` claim is the raw value or its SHA-256 hex ([hashed], what Apple's iOS API asks for), so a token
 * replayed from another sign-in is refused.
 *
 * ```kotlin
 * val nonce = Nonce.generate()
 * val option = GetGoogleIdOption.Builder().setServerClientId(webClientId).setNonce(nonce.raw).build()
 * // … after Credential Manager answers:
 * client.signInWithGoogle(googleIdToken, nonce.raw)
 * ```
 */
class Nonce private constructor(
    /** 32 random bytes, base64url: what the app keeps and sends to Lanyard. */
    val raw: String,
) {
    /** The raw nonce's SHA-256, lower-case hex: what a provider that wants it hashed is given. */
    val hashed: String
        get() = MessageDigest.getInstance("SHA-256").digest(raw.toByteArray()).joinToString("") { "%02x".format(it) }

    companion object {
        private val random = SecureRandom()

        /**
         * A fresh nonce.
         *
         * ```kotlin
         * val nonce = Nonce.generate()
         * ```
         */
        fun generate(): Nonce {
            val bytes = ByteArray(32).also(random::nextBytes)
            return Nonce(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes))
        }

        /**
         * A nonce the app already made (restored after the provider's sheet, say).
         *
         * ```kotlin
         * val nonce = Nonce.of(savedInstanceState.getString("nonce")!!)
         * ```
         */
        fun of(raw: String) = Nonce(raw)
    }
}
