package dev.lanyard.support

import dev.lanyard.PasskeyAuthenticator
import java.io.ByteArrayOutputStream
import java.math.BigInteger
import java.security.KeyPair
import java.security.KeyPairGenerator
import java.security.MessageDigest
import java.security.SecureRandom
import java.security.Signature
import java.security.interfaces.ECPublicKey
import java.security.spec.ECGenParameterSpec
import java.util.Base64
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * A passkey authenticator in software, as a phone's behaves: P-256 keys (ES256) made and used with java.security,
 * WebAuthn's JSON in and out, exactly what Android's Credential Manager takes and gives. It signs for real, so the
 * server accepts nothing a real key would not make; [breakSignature] flips a bit of the next signature.
 */
class SoftwareAuthenticator(private val origin: String) : PasskeyAuthenticator {
    private class Credential(val id: ByteArray, val keys: KeyPair, val userHandle: String, var counter: Int)

    private val credentials = mutableListOf<Credential>()
    private val random = SecureRandom()
    var breakSignature = false

    override suspend fun create(requestJson: String): String {
        val options = Json.parseToJsonElement(requestJson).jsonObject
        val rpId = options["rp"]!!.jsonObject["id"]!!.jsonPrimitive.content
        val userHandle = options["user"]!!.jsonObject["id"]!!.jsonPrimitive.content
        val id = ByteArray(16).also(random::nextBytes)
        val keys = KeyPairGenerator.getInstance("EC").apply { initialize(ECGenParameterSpec("secp256r1")) }.generateKeyPair()
        val point = (keys.public as ECPublicKey).w
        val coseKey = Cbor.map(
            Cbor.int(1) to Cbor.int(2), // kty: EC2
            Cbor.int(3) to Cbor.int(-7), // alg: ES256
            Cbor.int(-1) to Cbor.int(1), // crv: P-256
            Cbor.int(-2) to Cbor.bytes(fixed32(point.affineX)),
            Cbor.int(-3) to Cbor.bytes(fixed32(point.affineY)),
        )
        credentials += Credential(id, keys, userHandle, 1)
        val authData = sha256(rpId.toByteArray()) + byteArrayOf(0x45) + counter(1) + ByteArray(16) +
            byteArrayOf(0, id.size.toByte()) + id + coseKey
        val attestation = Cbor.map(
            Cbor.text("fmt") to Cbor.text("none"),
            Cbor.text("attStmt") to Cbor.map(),
            Cbor.text("authData") to Cbor.bytes(authData),
        )
        val clientData = clientData("webauthn.create", options["challenge"]!!.jsonPrimitive.content)
        return buildJsonObject {
            put("id", JsonPrimitive(b64(id)))
            put("rawId", JsonPrimitive(b64(id)))
            put("type", JsonPrimitive("public-key"))
            put("authenticatorAttachment", JsonPrimitive("platform"))
            put("clientExtensionResults", JsonObject(emptyMap()))
            put("response", buildJsonObject {
                put("clientDataJSON", JsonPrimitive(b64(clientData)))
                put("attestationObject", JsonPrimitive(b64(attestation)))
                put("transports", kotlinx.serialization.json.JsonArray(listOf(JsonPrimitive("internal"))))
            })
        }.toString()
    }

    override suspend fun get(requestJson: String): String {
        val options = Json.parseToJsonElement(requestJson).jsonObject
        val rpId = options["rpId"]!!.jsonPrimitive.content
        val credential = credentials.first()
        credential.counter += 1
        val authData = sha256(rpId.toByteArray()) + byteArrayOf(0x05) + counter(credential.counter)
        val clientData = clientData("webauthn.get", options["challenge"]!!.jsonPrimitive.content)
        val signature = Signature.getInstance("SHA256withECDSA").run {
            initSign(credential.keys.private)
            update(authData + sha256(clientData))
            sign()
        }
        if (breakSignature) {
            signature[signature.size / 2] = (signature[signature.size / 2].toInt() xor 1).toByte()
            breakSignature = false
        }
        return buildJsonObject {
            put("id", JsonPrimitive(b64(credential.id)))
            put("rawId", JsonPrimitive(b64(credential.id)))
            put("type", JsonPrimitive("public-key"))
            put("authenticatorAttachment", JsonPrimitive("platform"))
            put("clientExtensionResults", JsonObject(emptyMap()))
            put("response", buildJsonObject {
                put("clientDataJSON", JsonPrimitive(b64(clientData)))
                put("authenticatorData", JsonPrimitive(b64(authData)))
                put("signature", JsonPrimitive(b64(signature)))
                put("userHandle", JsonPrimitive(credential.userHandle))
            })
        }.toString()
    }

    private fun clientData(type: String, challenge: String) =
        """{"type":"$type","challenge":"$challenge","origin":"$origin","crossOrigin":false}""".toByteArray()

    private fun counter(value: Int) = byteArrayOf((value ushr 24).toByte(), (value ushr 16).toByte(), (value ushr 8).toByte(), value.toByte())

    private fun fixed32(value: BigInteger): ByteArray {
        val bytes = value.toByteArray().let { if (it.size > 32) it.copyOfRange(it.size - 32, it.size) else it }
        return ByteArray(32 - bytes.size) + bytes
    }

    private fun sha256(bytes: ByteArray) = MessageDigest.getInstance("SHA-256").digest(bytes)

    private fun b64(bytes: ByteArray) = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes)

    /** Just enough CBOR (RFC 8949) for an attestation object and a COSE key. */
    private object Cbor {
        private fun head(major: Int, length: Long): ByteArray = when {
            length < 24 -> byteArrayOf(((major shl 5) or length.toInt()).toByte())
            length < 256 -> byteArrayOf(((major shl 5) or 24).toByte(), length.toByte())
            length < 65536 -> byteArrayOf(((major shl 5) or 25).toByte(), (length shr 8).toByte(), length.toByte())
            else -> byteArrayOf(((major shl 5) or 26).toByte(), (length shr 24).toByte(), (length shr 16).toByte(), (length shr 8).toByte(), length.toByte())
        }

        fun int(value: Int): ByteArray = if (value >= 0) head(0, value.toLong()) else head(1, (-1 - value).toLong())
        fun bytes(value: ByteArray) = head(2, value.size.toLong()) + value
        fun text(value: String) = value.toByteArray().let { head(3, it.size.toLong()) + it }
        fun map(vararg pairs: Pair<ByteArray, ByteArray>): ByteArray {
            val out = ByteArrayOutputStream()
            out.write(head(5, pairs.size.toLong()))
            for ((key, value) in pairs) {
                out.write(key)
                out.write(value)
            }
            return out.toByteArray()
        }
    }
}
