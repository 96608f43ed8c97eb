package dev.lanyard

import dev.lanyard.support.ServerTest
import dev.lanyard.support.assertThrows
import java.net.URI
import java.security.MessageDigest
import java.util.Base64
import kotlinx.serialization.builtins.MapSerializer
import kotlinx.serialization.builtins.serializer
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * Redirect sign-in (reference section 23) as an Android app lives it, without Android: the URL the app would open in
 * Custom Tabs is followed over HTTP through `lanyard dev`'s emulated provider pages (Google's 302, Apple's `form_post`
 * page posted as its script would) to the app's own scheme, and that URL is what the app's intent filter would hand to
 * [LanyardClient.completeSignIn]. The app's scheme is listed in `LANYARD_REDIRECT_URIS`, as in production.
 */
class RedirectSignInTest : ServerTest(mapOf("LANYARD_RATE_LIMITS" to "off", "LANYARD_REDIRECT_URIS" to APP)) {
    private fun pending(store: SessionStore): Map<String, PendingFlow> =
        store.read(RedirectSignIn.KEY)?.let { WireJson.decodeFromString(pendingSerializer, it) } ?: emptyMap()

    private val pendingSerializer = MapSerializer(String.serializer(), PendingFlow.serializer())

    private fun query(url: String) = RedirectSignIn.parameters(url)

    @Test
    fun `Apple by redirect to the app's scheme signs in with the name Apple sent once, and the flow survives the process`() = story {
        val store = MemorySessionStore()
        val before = client(store)
        val url = before.authorizationUrl(Provider.Apple, APP)
        assertEquals("${server.url}/v1/auth/authorize/apple", url.substringBefore('?'))
        val (state, flow) = pending(store).entries.single()
        assertEquals(APP, query(url)["redirect_uri"])
        assertEquals(state, query(url)["state"])
        assertEquals("S256", query(url)["code_challenge_method"])
        val challenge = Base64.getUrlEncoder().withoutPadding().encodeToString(MessageDigest.getInstance("SHA-256").digest(flow.verifier.toByteArray()))
        assertEquals(challenge, query(url)["code_challenge"], "the challenge is the verifier's S256")
        assertFalse(url.contains(flow.verifier), "the verifier stays on the device")
        before.close()

        // The system ended the app while the browser was in front; the callback starts a new process on the same store.
        val back = server.throughProvider(url, mapOf("sub" to "apple-ada-$run", "email" to "ada@example.com", "given_name" to "Ada", "family_name" to "Lovelace"))
        assertTrue(back.startsWith("$APP?code="), back)
        val app = client(store)
        val events = events(app)
        val result = app.completeSignIn(back)
        assertEquals("Ada Lovelace", result.user.displayName)
        assertEquals("ada@example.com", result.user.email)
        assertTrue(result.isNewUser)
        assertEquals(listOf(Provider.Apple), result.user.identities.map { it.provider })
        assertEquals(AuthState.SignedIn(result.user), app.authState.value)
        assertTrue(events.waitFor { it is AuthEvent.SignedIn && it.user.id == result.user.id })
        assertNull(store.read(RedirectSignIn.KEY), "the verifier is forgotten")
        assertSame(result, app.completeSignIn(back), "the same URL handed over twice is exchanged once")

        // Again by redirect on another device: the same account, its name kept though Apple sends it only once.
        val other = client()
        val again = other.completeSignIn(server.throughProvider(other.authorizationUrl(Provider.Apple, APP), mapOf("sub" to "apple-ada-$run")))
        assertEquals(result.user.id, again.user.id)
        assertFalse(again.isNewUser)
        assertEquals("Ada Lovelace", again.user.displayName)
    }

    @Test
    fun `a guest signs in with Google by redirect and keeps its id and records, another guest merges into the account`() = story {
        val app = client()
        val guest = app.signInAnonymously().user
        app.collection<Note>("notes").put("n1", Note("written as a guest"))
        val upgraded = app.completeSignIn(server.throughProvider(app.authorizationUrl(Provider.Google, APP), mapOf("sub" to "google-guest-$run")))
        assertEquals(guest.id, upgraded.user.id, "upgraded in place")
        assertFalse(upgraded.user.isAnonymous)
        assertEquals(Note("written as a guest"), app.collection<Note>("notes").get("n1")!!.value)

        val other = client()
        val events = events(other)
        val second = other.signInAnonymously().user
        other.collection<Note>("notes").put("n2", Note("from the second guest"))
        val merged = other.completeSignIn(server.throughProvider(other.authorizationUrl(Provider.Google, APP), mapOf("sub" to "google-guest-$run")))
        assertEquals(guest.id, merged.user.id)
        assertEquals(second.id, merged.mergedFrom)
        assertEquals(Note("from the second guest"), app.collection<Note>("notes").get("n2")!!.value)
        assertTrue(events.waitFor { it == AuthEvent.MergedFrom(second.id) })
    }

    @Test
    fun `link by redirect starts with the session's bearer and adds Google, an unlisted URI and someone else's account are refused`() = story {
        val app = client()
        val user = app.signInWithApple(apple("links")).user
        val events = events(app)
        // A Google account that has its own Lanyard account cannot join this one.
        client().signInWithGoogle(google("taken"))
        val taken = app.authorizationUrl(Provider.Google, APP, RedirectIntent.LINK)
        val conflict = assertThrows<LanyardException.ProviderConflict> {
            app.completeSignIn(server.throughProvider(taken, mapOf("sub" to "taken-$run")))
        }
        assertEquals(ProviderConflictReason.IDENTITY_IN_USE, conflict.reason)
        assertEquals(listOf(Provider.Apple), app.me().identities.map { it.provider })

        val url = app.authorizationUrl(Provider.Google, APP, RedirectIntent.LINK)
        assertTrue(url.startsWith("${server.url}/_emulator/google/authorize?"), "the POST answered the provider's page: $url")
        val linked = app.completeSignIn(server.throughProvider(url, mapOf("sub" to "google-linked-$run", "email" to "linked@example.com")))
        assertEquals(user.id, linked.user.id)
        assertEquals(listOf(Provider.Apple, Provider.Google), app.currentUser!!.identities.map { it.provider })
        assertTrue(events.waitFor { it == AuthEvent.Linked(Provider.Google) })
        val elsewhere = client()
        assertEquals(user.id, elsewhere.completeSignIn(server.throughProvider(elsewhere.authorizationUrl(Provider.Google, APP), mapOf("sub" to "google-linked-$run"))).user.id)

        assertThrows<LanyardException.NotSignedIn> { client().authorizationUrl(Provider.Google, APP, RedirectIntent.LINK) }
        val unlisted = assertThrows<LanyardException.InvalidRedirectUri> { app.authorizationUrl(Provider.Google, "com.attacker.app:/callback", RedirectIntent.LINK) }
        assertEquals("INVALID_REDIRECT_URI", unlisted.code)
        // A sign-in's navigation to an unlisted URI: the browser gets a page naming it, never a fallback.
        val page = URI(app.authorizationUrl(Provider.Google, "com.attacker.app:/callback")).toURL().openConnection() as java.net.HttpURLConnection
        page.instanceFollowRedirects = false
        assertEquals(400, page.responseCode)
        assertTrue(page.errorStream.use { it.readBytes().decodeToString() }.contains("com.attacker.app:/callback"))
    }

    @Test
    fun `refusals a person or an attacker meets are typed, and nothing signs in`() = story {
        val store = MemorySessionStore()
        val app = client(store)
        // A code of a flow another device started (planted to sign this one in as someone else): never sent.
        val stranger = client()
        val strangers = server.throughProvider(stranger.authorizationUrl(Provider.Google, APP), mapOf("sub" to "victim-$run"))
        assertEquals("state", assertThrows<LanyardException.InvalidGrant> { app.completeSignIn(strangers) }.reason)
        assertNull(app.currentUser)
        assertFalse(stranger.completeSignIn(strangers).user.isAnonymous, "the stranger's own code was never presented")

        fun tamper(from: String, to: String) = store.write(RedirectSignIn.KEY, store.read(RedirectSignIn.KEY)!!.replace(from, to))
        var url = app.authorizationUrl(Provider.Google, APP)
        tamper(pending(store).values.single().verifier, "x".repeat(43))
        assertEquals("verifier", assertThrows<LanyardException.InvalidGrant> { app.completeSignIn(server.throughProvider(url, mapOf("sub" to "refusals-$run"))) }.reason)
        assertNull(store.read(RedirectSignIn.KEY), "a flow is forgotten whatever the outcome")

        url = app.authorizationUrl(Provider.Google, APP)
        tamper(APP, "$APP-other")
        assertEquals("redirect_uri", assertThrows<LanyardException.InvalidGrant> { app.completeSignIn(server.throughProvider(url, mapOf("sub" to "refusals-$run"))) }.reason)

        // A finished sign-in's code presented again (a copied URL): refused as used.
        url = app.authorizationUrl(Provider.Google, APP)
        val verifier = pending(store).values.single().verifier
        val back = server.throughProvider(url, mapOf("sub" to "refusals-$run"))
        app.completeSignIn(back)
        val replay = server.request(
            "POST", "/v1/auth/token",
            """{"grant_type":"authorization_code","code":"${query(back)["code"]}","code_verifier":"$verifier","redirect_uri":"$APP"}""",
        )
        assertEquals(400, replay.status)
        assertEquals("used", replay.obj["error"]!!.jsonObject["details"]!!.jsonObject["reason"]!!.jsonPrimitive.content)

        // The person declines at the provider; a token of another flow comes back.
        val fresh = client()
        val declined = server.throughProvider(fresh.authorizationUrl(Provider.Google, APP), cancel = true)
        assertEquals("access_denied", assertThrows<LanyardException.SignInCancelled> { fresh.completeSignIn(declined) }.error)
        val replayed = server.throughProvider(fresh.authorizationUrl(Provider.Apple, APP), mapOf("sub" to "nonce-$run", "nonce_override" to "another-flows-nonce"))
        assertEquals("nonce_mismatch", assertThrows<LanyardException.InvalidProviderToken> { fresh.completeSignIn(replayed) }.reason)
        assertNull(fresh.currentUser)
        assertThrows<IllegalArgumentException> { fresh.completeSignIn(APP) }
    }

    companion object {
        /** The app's own scheme, as its intent filter declares it. */
        const val APP = "dev.lanyard.example:/callback"
    }
}
