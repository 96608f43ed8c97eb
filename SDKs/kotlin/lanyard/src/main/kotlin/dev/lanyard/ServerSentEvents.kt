package dev.lanyard

import java.io.BufferedInputStream
import java.io.ByteArrayOutputStream
import java.io.IOException
import java.io.InputStream

/** One Server-Sent Event as the stream sent it. */
internal data class ServerSentEvent(val name: String, val id: String?, val data: String)

/**
 * Reads a text/event-stream event by event (the WHATWG rules the SDK needs: `event`, `id`, `data`, comments, `\n` or
 * `\r\n` line ends). Bounded: a line longer than [MAXIMUM_LINE_BYTES] (a change is at most a 256 KiB record,
 * escaped) ends the stream with an [IOException], and the reader reconnects from the last change it delivered.
 */
internal class ServerSentEventReader(input: InputStream) {
    private val input = BufferedInputStream(input, 16 * 1024)
    private val line = ByteArrayOutputStream()

    /** The next event, or null when the stream ended. */
    fun next(): ServerSentEvent? {
        var name = "message"
        var id: String? = null
        val data = StringBuilder()
        var hasData = false
        while (true) {
            val text = readLine() ?: return null
            if (text.isEmpty()) {
                if (hasData || name != "message") return ServerSentEvent(name, id, data.toString())
                continue
            }
            if (text.startsWith(":")) continue
            val colon = text.indexOf(':')
            val field = if (colon < 0) text else text.substring(0, colon)
            var value = if (colon < 0) "" else text.substring(colon + 1)
            if (value.startsWith(" ")) value = value.substring(1)
            when (field) {
                "event" -> name = value
                "id" -> id = value
                "data" -> {
                    if (hasData) data.append('\n')
                    data.append(value)
                    hasData = true
                }
            }
        }
    }

    private fun readLine(): String? {
        line.reset()
        while (true) {
            val byte = input.read()
            if (byte < 0) return null
            if (byte == '\n'.code) break
            line.write(byte)
            if (line.size() > MAXIMUM_LINE_BYTES) throw IOException("an event stream line longer than $MAXIMUM_LINE_BYTES bytes")
        }
        val bytes = line.toByteArray()
        val length = if (bytes.isNotEmpty() && bytes.last() == '\r'.code.toByte()) bytes.size - 1 else bytes.size
        return String(bytes, 0, length, Charsets.UTF_8)
    }

    companion object {
        const val MAXIMUM_LINE_BYTES = 4 shl 20
    }
}
