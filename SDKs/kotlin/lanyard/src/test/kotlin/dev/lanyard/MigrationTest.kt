package dev.lanyard

import dev.lanyard.support.ServerTest
import dev.lanyard.support.assertThrows
import java.util.Base64
import java.util.UUID
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * Switching day (reference section 24) through the Kotlin SDK: the bridge from Firebase, Supabase and Clerk against a
 * real `lanyard dev`, whose emulator mints each old system's session token and whose bridge verifies it as in
 * production.
 */
class MigrationTest : ServerTest() {
    private fun text(value: String) = JsonPrimitive(value)
    private fun now() = System.currentTimeMillis() / 1000
    private fun base64Url(bytes: ByteArray) = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes)

    private fun firebaseUser(google: String, apple: String? = null): Map<String, JsonElement> = mapOf(
        "identities" to buildJsonObject {
            put("google.com", JsonArray(listOf(text(google))))
            apple?.let { put("apple.com", JsonArray(listOf(text(it)))) }
        },
        "sign_in_provider" to text("google.com"),
    )

    @Test
    fun `a Firebase user crosses with no sign-in screen, stays signed in across launches, the uid on me`() = story {
        val uid = "Mm7ZlSDz8PZJW9AxsDR2HcSLJ6iY-$run"
        val store = MemorySessionStore()
        val phone = client(store)
        val events = events(phone)
        val token = server.legacyToken("firebase", uid, firebaseUser("g-chiara-$run", "a-chiara-$run") + mapOf(
            "email" to text("chiara-$run@example.org"), "email_verified" to JsonPrimitive(true), "name" to text("Chiara Bellini")))
        val crossed = phone.migrateFromFirebase(token)
        assertTrue(crossed.isNewUser)
        assertFalse(crossed.user.isAnonymous)
        assertNull(crossed.mergedFrom)
        assertEquals(listOf(Provider.Google, Provider.Apple, Provider.Email), crossed.user.linkedProviders.map { it.provider })
        assertTrue(events.waitFor { it is AuthEvent.SignedIn && it.user.id == crossed.user.id && it.isNewUser })
        assertEquals(AuthState.SignedIn(crossed.user), phone.authState.value)

        val me = phone.me()
        assertEquals(uid, me.legacyId)
        assertEquals("firebase", me.legacySource)
        assertEquals("Chiara Bellini", me.displayName)

        // The app calls the bridge on every start while the Firebase SDK still has its session: the held session
        // answers and nothing is sent (a token the server would refuse is not even looked at).
        val again = phone.migrateFromFirebase("not.a.token")
        assertEquals(crossed.user.id, again.user.id)
        assertFalse(again.isNewUser)
        val audit = server.admin("GET", "/v1/admin/audit?type=user.migrated&user_id=${crossed.user.id}").obj
        assertEquals(1, audit["events"]!!.jsonArray.size)

        // The next launch restores the session from the store; Google on a new device reaches the same person.
        assertEquals(crossed.user.id, client(store).currentUser?.id)
        assertEquals(crossed.user.id, client().signInWithGoogle(google("g-chiara")).user.id)
    }

    @Test
    fun `an anonymous Supabase user crosses as a guest, and a guest held is not bridged over`() = story {
        val supabaseId = UUID.randomUUID().toString()
        val phone = client()
        val guest = phone.migrateFromSupabase(server.legacyToken("supabase", supabaseId, mapOf("is_anonymous" to JsonPrimitive(true))))
        assertTrue(guest.user.isAnonymous)
        assertTrue(guest.isNewUser)
        assertEquals(supabaseId, phone.me().legacyId)
        assertEquals("supabase", phone.me().legacySource)

        val other = server.legacyToken("supabase", UUID.randomUUID().toString(), mapOf("is_anonymous" to JsonPrimitive(true)))
        val refused = assertThrows<LanyardException.InvalidRequest> { phone.migrateFromSupabase(other) }
        assertEquals("session", refused.field)
        assertEquals("guest_session", refused.reason)
        assertEquals(guest.user.id, phone.currentUser?.id)

        // The guest signs in with Google and keeps its id and its legacy id.
        val upgraded = phone.signInWithGoogle(google("supabase-guest"))
        assertEquals(guest.user.id, upgraded.user.id)
        assertFalse(upgraded.user.isAnonymous)
        assertEquals(supabaseId, phone.me().legacyId)
    }

    @Test
    fun `a Clerk user the operator imported crosses into the imported account`() = story {
        val clerkId = "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6$run"
        val line = buildJsonObject {
            put("legacy_id", text(clerkId))
            put("legacy_source", text("clerk"))
            put("display_name", text("Elif Kaya"))
            put("identities", JsonArray(listOf(buildJsonObject {
                put("provider", text("google"))
                put("subject", text("g-elif-$run"))
            })))
        }
        val report = server.admin("POST", "/v1/admin/imports", "$line\n")
        assertEquals(201, report.status, report.text)
        val imported = server.admin("GET", "/v1/admin/users?legacy_id=$clerkId").obj["users"]!!.jsonArray.single().jsonObject

        val phone = client()
        val crossed = phone.migrateFromClerk(server.legacyToken("clerk", clerkId))
        assertEquals(imported["id"]!!.jsonPrimitive.content, crossed.user.id)
        assertFalse(crossed.isNewUser)
        assertEquals(listOf(Provider.Google), crossed.user.linkedProviders.map { it.provider })
        val me = phone.me()
        assertEquals(clerkId, me.legacyId)
        assertEquals("clerk", me.legacySource)
        assertEquals("Elif Kaya", me.displayName)
    }

    @Test
    fun `expired, foreign and forged tokens are typed errors, and the client stays signed out`() = story {
        val phone = client()
        val events = events(phone)
        val user = firebaseUser("g-refused-$run")

        val expired = server.legacyToken("firebase", "uid-expired-$run",
            user + mapOf("expires_in" to JsonPrimitive(3600), "iat" to JsonPrimitive(now() - 3600 - 61)))
        val late = assertThrows<LanyardException.InvalidProviderToken> { phone.migrateFromFirebase(expired) }
        assertEquals("expired", late.reason)
        assertEquals("That sign-in took too long. Please try again.", late.message)

        val foreign = server.legacyToken("firebase", "uid-foreign-$run",
            user + mapOf("aud" to text("another-project"), "iss" to text("https://securetoken.google.com/another-project")))
        assertEquals("issuer", assertThrows<LanyardException.InvalidProviderToken> { phone.migrateFromFirebase(foreign) }.reason)

        // A real token whose claims were changed after signing: another uid under the same signature.
        val (header, _, signature) = server.legacyToken("firebase", "uid-genuine-$run", user).split(".")
        val claims = buildJsonObject {
            put("iss", text("https://securetoken.google.com/lanyard-dev-project"))
            put("aud", text("lanyard-dev-project"))
            put("sub", text("uid-forged-$run"))
            put("user_id", text("uid-forged-$run"))
            put("iat", JsonPrimitive(now()))
            put("auth_time", JsonPrimitive(now()))
            put("exp", JsonPrimitive(now() + 3600))
            put("firebase", buildJsonObject {
                put("identities", buildJsonObject { put("google.com", JsonArray(listOf(text("g-forged-$run")))) })
                put("sign_in_provider", text("google.com"))
            })
        }
        val forged = "$header.${base64Url(claims.toString().toByteArray())}.$signature"
        assertEquals("signature", assertThrows<LanyardException.InvalidProviderToken> { phone.migrateFromFirebase(forged) }.reason)

        // Supabase: a token signed with another project's secret.
        val input = base64Url("""{"alg":"HS256","typ":"JWT"}""".toByteArray()) + "." + base64Url(buildJsonObject {
            put("sub", text(UUID.randomUUID().toString()))
            put("aud", text("authenticated"))
            put("role", text("authenticated"))
            put("iat", JsonPrimitive(now()))
            put("exp", JsonPrimitive(now() + 3600))
            put("is_anonymous", JsonPrimitive(true))
        }.toString().toByteArray())
        val mac = Mac.getInstance("HmacSHA256").apply { init(SecretKeySpec("another-projects-secret-of-32-characters!".toByteArray(), "HmacSHA256")) }
        val otherSecret = "$input.${base64Url(mac.doFinal(input.toByteArray()))}"
        assertThrows<LanyardException.InvalidProviderToken> { phone.migrateFromSupabase(otherSecret) }

        // Clerk: a support agent's impersonation session; a user nobody imported.
        val impersonated = server.legacyToken("clerk", "user_impersonated_$run", mapOf("impersonated_by" to text("user_support")))
        assertEquals("impersonation", assertThrows<LanyardException.InvalidProviderToken> { phone.migrateFromClerk(impersonated) }.reason)
        assertThrows<LanyardException.NotFound> { phone.migrateFromClerk(server.legacyToken("clerk", "user_never_imported_$run")) }
        assertThrows<IllegalArgumentException> { phone.migrateFromFirebase("") }

        assertNull(phone.currentUser)
        assertEquals(AuthState.SignedOut, phone.authState.value)
        assertTrue(events.events.none { it is AuthEvent.SignedIn })
    }
}
