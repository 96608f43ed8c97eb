package dev.lanyard

import dev.lanyard.support.ServerTest
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import dev.lanyard.support.assertThrows

/** Typed records (versions, `If-Match`, tombstones, cursors) and the typed errors of the whole catalogue. */
class RecordsAndErrorsTest : ServerTest(mapOf("LANYARD_RATE_LIMITS" to "on", "LANYARD_RATE_LIMIT_LINK" to "2/3600")) {
    @Test
    fun `records are written with versions, a stale If-Match is refused, deletions leave tombstones, pulls are incremental`() = story {
        val phone = client()
        phone.signInWithGoogle(google("records"))
        val reminders = phone.collection<Reminder>("reminders")
        val first = reminders.put("r1", Reminder("Buy milk"))
        assertEquals(1, first.version)
        val second = reminders.put("r1", Reminder("Buy milk", done = true), ifVersion = first.version)
        assertEquals(2, second.version)
        val conflict = assertThrows<LanyardException.VersionConflict> { reminders.put("r1", Reminder("stale"), ifVersion = first.version) }
        assertEquals("VERSION_CONFLICT", conflict.code)
        assertEquals(Reminder("Buy milk", done = true), reminders.get("r1")!!.value)
        assertNull(reminders.get("missing"))

        reminders.put("r2", Reminder("Call Ada"))
        assertEquals(listOf("r1", "r2"), reminders.pullChanges().map { it.id })
        reminders.delete("r2")
        val afterDelete = reminders.pullChanges()
        assertEquals(listOf("r2"), afterDelete.map { it.id })
        assertTrue(afterDelete.single().isDeleted)
        assertNull(afterDelete.single().value)
        assertEquals(emptyList<Change<Reminder>>(), reminders.pullChanges())
        assertNull(reminders.get("r2"))
        assertThrows<LanyardException.NotFound> { reminders.delete("never-there") }

        // Listing from the start pages through everything, the tombstone included.
        val batch = reminders.list(pageSize = 1)
        assertEquals(listOf("r1" to false, "r2" to true), batch.changes.map { it.id to it.isDeleted })
        assertEquals(emptyList<Change<Reminder>>(), reminders.list(since = batch.cursor).changes)
    }

    @Test
    fun `oversized records, bad names and calls without a session are typed refusals`() = story {
        val phone = client()
        assertThrows<LanyardException.NotSignedIn> { phone.collection<Reminder>("reminders").get("r1") }
        phone.signInAnonymously()
        assertThrows<LanyardException.PayloadTooLarge> { phone.collection<Note>("notes").put("big", Note("x".repeat(300 * 1024))) }
        val invalid = assertThrows<LanyardException.InvalidRequest> { phone.collection<Note>("Not A Name").put("n1", Note("?")) }
        assertEquals("INVALID_REQUEST", invalid.code)
        // A guest cannot make a group.
        assertThrows<LanyardException.Forbidden> { phone.groups.create("Guests") }
    }

    @Test
    fun `linking past the limit is RATE_LIMITED with the time to wait`() = story {
        val ada = client()
        ada.signInWithApple(apple("limited"))
        client().signInWithGoogle(google("taken-1"))
        client().signInWithGoogle(google("taken-2"))
        client().signInWithGoogle(google("taken-3"))
        repeat(2) { i -> assertThrows<LanyardException.ProviderConflict> { ada.link(ProviderCredential.google(google("taken-${i + 1}"))) } }
        val limited = assertThrows<LanyardException.RateLimited> { ada.link(ProviderCredential.google(google("taken-3"))) }
        assertTrue((limited.retryAfterSeconds ?: 0.0) > 0, "Retry-After: ${limited.retryAfterSeconds}")
        assertFalse(limited.message!!.isEmpty())
    }

    @Test
    fun `every error code the server's OpenAPI document lists has its own typed exception`() = story {
        val document = server.request("GET", "/openapi.json").obj
        val codes = document["components"]!!.jsonObject["schemas"]!!.jsonObject["Error"]!!.jsonObject["properties"]!!
            .jsonObject["error"]!!.jsonObject["properties"]!!.jsonObject["code"]!!.jsonObject["enum"]!!.jsonArray
            .map { it.jsonPrimitive.content }
        assertTrue(codes.size >= 28, codes.toString())
        // Redirect sign-in's codes (reference section 23) are known ahead of the server.
        for (code in codes + listOf("INVALID_REDIRECT_URI", "INVALID_GRANT")) {
            val body = """{"error": {"code": "$code", "message": "m", "details": {}, "request_id": "req-1"}}"""
            val error = LanyardException.fromResponse(400, body, null)!!
            assertFalse(error is LanyardException.Unknown, "$code has no exception of its own")
            assertEquals(code, error.code)
            assertEquals("req-1", error.requestId)
        }
        val future = LanyardException.fromResponse(418, """{"error": {"code": "SOMETHING_NEW", "message": "Later"}}""", null)
        assertTrue(future is LanyardException.Unknown && future.code == "SOMETHING_NEW" && future.status == 418)
        assertTrue(LanyardException.fromResponse(502, "<html>Bad gateway</html>", null) is LanyardException.InvalidResponse)
        assertNull(LanyardException.fromResponse(204, "", null))
    }
}
