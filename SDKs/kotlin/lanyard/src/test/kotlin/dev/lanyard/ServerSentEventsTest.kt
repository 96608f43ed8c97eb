package dev.lanyard

import dev.lanyard.support.assertThrows
import java.io.ByteArrayInputStream
import java.io.IOException
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test

/** The event-stream reader on bytes a server or a proxy may send: comments, `\r\n`, several data lines, an endless line. */
class ServerSentEventsTest {
    private fun reader(text: String) = ServerSentEventReader(ByteArrayInputStream(text.toByteArray()))

    @Test
    fun `events are read with their names, ids and data, past comments and retry lines, with either line end`() {
        val stream = reader(
            "retry: 2000\n: hello\n\nevent: change\r\nid: 7\r\ndata: {\"a\":1}\r\n\r\n: heartbeat\n\n" +
                "event: ready\ndata: {\"cursor\":\"7\"}\n\ndata: one\ndata: two\n\nevent: end\ndata:{\"reason\":\"replaced\"}\n\n",
        )
        assertEquals(ServerSentEvent("change", "7", "{\"a\":1}"), stream.next())
        assertEquals(ServerSentEvent("ready", null, "{\"cursor\":\"7\"}"), stream.next())
        assertEquals(ServerSentEvent("message", null, "one\ntwo"), stream.next())
        assertEquals(ServerSentEvent("end", null, "{\"reason\":\"replaced\"}"), stream.next())
        assertNull(stream.next())
    }

    @Test
    fun `an event cut off by the connection's end is not delivered`() {
        assertNull(reader("event: change\nid: 8\ndata: {\"half\"").next())
    }

    @Test
    fun `a line without end past the limit ends the stream with an error, not with memory exhausted`() {
        val endless = object : java.io.InputStream() {
            override fun read() = 'x'.code
        }
        assertThrows<IOException> { ServerSentEventReader(endless).next() }
    }

    @Test
    fun `a change event becomes a LiveChange whose record decodes, and a removal names its group`() {
        val change = LiveChange.of(
            ServerSentEvent(
                "change", "c9",
                """{"collection":"notes","id":"n1","collection_cursor":"4","version":2,"updated_at":"2026-11-28T10:00:00.123Z",""" +
                    """"deleted":false,"data":{"text":"Hi"},"group_id":null,"shared_by":null}""",
            ),
        )!!
        assertEquals(LiveChange.Kind.RECORD, change.kind)
        assertEquals("c9", change.cursor)
        assertEquals("4", change.collectionCursor)
        assertEquals(Note("Hi"), change.value(Note.serializer()))
        val removal = LiveChange.of(ServerSentEvent("group_removed", "c10", """{"group_id":"g1"}"""))!!
        assertEquals(LiveChange.Kind.GROUP_REMOVED, removal.kind)
        assertEquals("g1", removal.groupId)
        assertNull(LiveChange.of(ServerSentEvent("change", null, "{}")))
    }
}
