package dev.lanyard

import dev.lanyard.support.ServerTest
import java.io.File
import java.net.ServerSocket
import java.nio.file.Files
import java.util.Base64
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import dev.lanyard.support.assertThrows

/**
 * Sessions as a person on a bad network lives them: one refresh for any number of calls, a server out of reach never
 * signs anyone out, a reused refresh token or a session ended elsewhere does, and says why. Access tokens live 3 s here
 * (`LANYARD_ACCESS_TOKEN_TTL`) and a rotated refresh token is refused at once after its use (no grace window).
 */
class SessionTest : ServerTest(
    mapOf("LANYARD_RATE_LIMITS" to "off", "LANYARD_ACCESS_TOKEN_TTL" to "3", "LANYARD_REFRESH_REUSE_GRACE" to "0"),
) {
    /** A clock the test can move; the client reads expiry against it. */
    private class MovableClock {
        @Volatile var offset = 0L
        fun now() = System.currentTimeMillis() + offset
    }

    private fun options(clock: MovableClock = MovableClock()) = LanyardOptions(refreshLeewaySeconds = 0, clock = clock::now)

    @Test
    fun `fifty calls after the access token expired make one refresh between them`() = story {
        val client = client(options = options())
        val events = events(client)
        val user = client.signInWithGoogle(google("many")).user
        delay(3_500)
        val before = server.refreshRequests()
        val ids = (1..50).map { async { client.me().id } }.awaitAll()
        assertEquals(List(50) { user.id }, ids)
        assertEquals(1, server.refreshRequests() - before)
        assertEquals(1, events.events.count { it == AuthEvent.Refreshed })
    }

    @Test
    fun `fifty calls the server refuses with a token the client still trusts make one refresh and one retry each`() = story {
        val clock = MovableClock()
        val client = client(options = options(clock))
        val user = client.signInWithApple(apple("refused")).user
        delay(3_500)
        // The device's clock falls behind: the client believes its token has seconds left; the server says it expired.
        clock.offset = -10_000
        val before = server.refreshRequests()
        val ids = (1..50).map { async { client.me().id } }.awaitAll()
        assertEquals(List(50) { user.id }, ids)
        assertEquals(1, server.refreshRequests() - before)
    }

    @Test
    fun `a server that cannot be reached fails calls with Network and never signs out, back again, the session works`() = story {
        val store = MemorySessionStore()
        val client = client(store, options())
        val events = events(client)
        val user = client.signInWithGoogle(google("offline")).user

        // The same session on a client pointed at a port where nothing listens (no network, a captive portal…).
        val deadPort = ServerSocket(0).use { it.localPort }
        val offline = client(store, options(), url = "http://127.0.0.1:$deadPort")
        assertThrows<LanyardException.Network> { offline.me() }
        delay(3_500)
        assertThrows<LanyardException.Network> { offline.accessToken() }
        assertEquals(AuthState.SignedIn(user), offline.authState.value)

        // The server itself stops, stays down a while, and comes back on the same data.
        server.stop()
        assertThrows<LanyardException.Network> { client.me() }
        assertThrows<LanyardException.Network> { client.collection<Reminder>("reminders").put("r1", Reminder("Offline")) }
        assertEquals(AuthState.SignedIn(user), client.authState.value)
        assertNotNull(store.read("session"))
        server.restart()
        assertEquals(user.id, client.me().id)
        assertEquals(1, server.refreshRequests(), "one refresh on the restarted server (its counters start again)")
        assertFalse(events.events.any { it is AuthEvent.SignedOut })
    }

    @Test
    fun `a refresh token used twice signs the client out, clears the store, and says why`() = story {
        val store = MemorySessionStore()
        val clock = MovableClock()
        val client = client(store, options(clock))
        val events = events(client)
        client.signInWithApple(apple("reused"))
        // Someone else (a copied store) rotates the client's refresh token first.
        val stolen = Json.parseToJsonElement(store.read("session")!!).jsonObject["refresh_token"]!!.jsonPrimitive.content
        assertEquals(200, server.request("POST", "/v1/auth/refresh", """{"refresh_token": "$stolen"}""").status)
        delay(1_100)
        clock.offset = 60_000
        assertThrows<LanyardException.RefreshTokenReused> { client.accessToken() }
        assertNull(client.currentUser)
        assertNull(store.read("session"))
        assertEquals(AuthState.SignedOut, client.authState.value)
        assertTrue(events.waitFor { it == AuthEvent.SignedOut(SignOutReason.RefreshTokenReused) })
        assertThrows<LanyardException.NotSignedIn> { client.me() }
    }

    @Test
    fun `sessions are listed, another device is signed out, and that device learns its session ended`() = story {
        val phone = client(options = options())
        phone.signInWithGoogle(google("devices"))
        val tablet = client(options = options())
        val tabletEvents = events(tablet)
        tablet.signInWithGoogle(google("devices"))
        val sessions = phone.sessions()
        assertEquals(2, sessions.size)
        assertEquals(1, sessions.count { it.isCurrent })
        assertEquals("google", sessions.first().method)

        phone.signOutOthers()
        assertEquals(1, phone.sessions().size)
        assertThrows<LanyardException.InvalidRefreshToken> { tablet.me() }
        assertTrue(tabletEvents.waitFor { it == AuthEvent.SignedOut(SignOutReason.SessionEnded) })
        assertEquals(AuthState.SignedOut, tablet.authState.value)

        // Revoking this device's own session signs it out.
        val own = phone.sessions().single { it.isCurrent }
        phone.revokeSession(own.id)
        assertEquals(AuthState.SignedOut, phone.authState.value)
    }

    @Test
    fun `a session kept in a file is there on the next launch, and signing out removes it`() = story {
        val file = File(Files.createTempDirectory("lanyard-store-").toFile(), "session.json")
        val first = client(FileSessionStore(file), options())
        val user = first.signInWithApple(apple("file")).user
        first.close()
        assertEquals("rw-------", Files.getPosixFilePermissions(file.toPath()).let { java.nio.file.attribute.PosixFilePermissions.toString(it) })

        val relaunched = client(FileSessionStore(file), options())
        assertEquals(AuthState.SignedIn(user), relaunched.authState.value)
        assertEquals(user.id, relaunched.me().id)
        relaunched.signOut()
        assertNull(FileSessionStore(file).read("session"))
        assertThrows<LanyardException.NotSignedIn> { relaunched.accessToken() }
    }

    @Test
    fun `the access token for the app's own backend names the user and is refreshed when it expires`() = story {
        val client = client(options = options())
        val user = client.signInWithGoogle(google("backend")).user
        val first = client.accessToken()
        val claims = Json.parseToJsonElement(String(Base64.getUrlDecoder().decode(first.split('.')[1]))).jsonObject
        assertEquals(user.id, claims["sub"]!!.jsonPrimitive.content)
        delay(3_500)
        val second = client.accessToken()
        assertTrue(first != second)
        assertEquals(200, server.request("GET", "/v1/users/me", authorization = "Bearer $second").status)
        assertEquals(401, server.request("GET", "/v1/users/me", authorization = "Bearer $first").status)
    }

    @Test
    fun `the profile's name is set and cleared, and signing out forgets the session even offline`() = story {
        val client = client(options = options())
        val events = events(client)
        client.signInWithGoogle(google("profile"))
        assertEquals("Ada", client.updateProfile("Ada").displayName)
        assertEquals("Ada", client.currentUser!!.displayName)
        assertNull(client.updateProfile(null).displayName)
        assertTrue(events.waitFor { it is AuthEvent.UserUpdated && it.user.displayName == null })
        client.signOut(SignOutScope.GLOBAL)
        assertTrue(events.waitFor { it == AuthEvent.SignedOut(SignOutReason.UserRequested) })
        assertEquals(AuthState.SignedOut, client.authState.value)
    }
}
