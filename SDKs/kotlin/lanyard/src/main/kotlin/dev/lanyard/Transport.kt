package dev.lanyard

import java.io.Closeable
import java.io.IOException
import java.io.InputStream
import java.net.HttpURLConnection
import java.net.URL
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.job
import kotlinx.coroutines.withContext
import kotlin.coroutines.coroutineContext

/**
 * One HTTP request as the client makes it: an absolute [url], the [method], [headers] (the bearer included) and
 * an optional JSON [body].
 */
class HttpRequest(
    val method: String,
    val url: String,
    val headers: Map<String, String>,
    val body: ByteArray? = null,
)

/** A whole answer: the status, the headers (names lower-cased) and the body. */
class HttpResponse(val status: Int, val headers: Map<String, String>, val body: ByteArray) {
    /** The body as UTF-8 text. */
    val text: String get() = body.toString(Charsets.UTF_8)
}

/**
 * An answer whose body is read as it arrives (the change stream). [close] ends the connection; a blocked read then
 * ends with an [IOException].
 */
class StreamingResponse(
    val status: Int,
    val headers: Map<String, String>,
    val body: InputStream,
    private val onClose: () -> Unit,
) : Closeable {
    override fun close() = onClose()
}

/**
 * How the client reaches the server. The default, [HttpUrlConnectionTransport], is `java.net.HttpURLConnection`
 * (on the JVM and Android alike); an app that already uses OkHttp or Ktor may pass its own. A transport throws an
 * [IOException] when the server cannot be reached and returns every answer it gets, whatever its status: the client
 * turns answers into values or [LanyardException]s.
 *
 * ```kotlin
 * class OkHttpTransport(private val http: OkHttpClient) : Transport {
 *     override suspend fun send(request: HttpRequest): HttpResponse = TODO("http.newCall(…).await()")
 *     override suspend fun openStream(request: HttpRequest): StreamingResponse = TODO("the response's byteStream()")
 * }
 * val client = LanyardClient("https://auth.example.com", store, LanyardOptions(transport = OkHttpTransport(http)))
 * ```
 */
interface Transport {
    /** Sends [request] and reads the whole answer. */
    suspend fun send(request: HttpRequest): HttpResponse

    /** Sends [request] and answers as soon as the headers arrive; the body is read as it comes. */
    suspend fun openStream(request: HttpRequest): StreamingResponse
}

/**
 * [Transport] over `java.net.HttpURLConnection`, blocking calls moved to [Dispatchers.IO]; a cancelled call
 * disconnects.
 *
 * ```kotlin
 * val transport = HttpUrlConnectionTransport(connectTimeoutMillis = 10_000, readTimeoutMillis = 30_000)
 * ```
 *
 * @param readTimeoutMillis how long an ordinary request waits for bytes of its answer.
 * @param streamReadTimeoutMillis how long a stream may stay silent (the server sends a comment every 15 s).
 */
class HttpUrlConnectionTransport(
    private val connectTimeoutMillis: Int = 15_000,
    private val readTimeoutMillis: Int = 35_000,
    private val streamReadTimeoutMillis: Int = 60_000,
) : Transport {
    override suspend fun send(request: HttpRequest): HttpResponse {
        val connection = open(request, readTimeoutMillis)
        val cancelled = coroutineContext.job.invokeOnCompletion { connection.disconnect() }
        try {
            return withContext(Dispatchers.IO) {
                try {
                    write(connection, request)
                    val status = connection.responseCode
                    val stream = if (status >= 400) connection.errorStream else connection.inputStream
                    val body = stream?.use { it.readBytes() } ?: ByteArray(0)
                    HttpResponse(status, headers(connection), body)
                } finally {
                    connection.disconnect()
                }
            }
        } finally {
            cancelled.dispose()
        }
    }

    override suspend fun openStream(request: HttpRequest): StreamingResponse {
        val connection = open(request, streamReadTimeoutMillis)
        val cancelled = coroutineContext.job.invokeOnCompletion { connection.disconnect() }
        try {
            return withContext(Dispatchers.IO) {
                try {
                    write(connection, request)
                    val status = connection.responseCode
                    val stream = (if (status >= 400) connection.errorStream else connection.inputStream)
                        ?: InputStream.nullInputStream()
                    StreamingResponse(status, headers(connection), stream) {
                        connection.disconnect()
                        runCatching { stream.close() }
                    }
                } catch (e: Throwable) {
                    connection.disconnect()
                    throw e
                }
            }
        } finally {
            cancelled.dispose()
        }
    }

    private fun open(request: HttpRequest, readTimeout: Int): HttpURLConnection {
        val connection = URL(request.url).openConnection() as HttpURLConnection
        connection.requestMethod = request.method
        connection.connectTimeout = connectTimeoutMillis
        connection.readTimeout = readTimeout
        connection.useCaches = false
        connection.instanceFollowRedirects = false
        for ((name, value) in request.headers) connection.setRequestProperty(name, value)
        return connection
    }

    private fun write(connection: HttpURLConnection, request: HttpRequest) {
        val body = request.body ?: return
        connection.doOutput = true
        connection.setFixedLengthStreamingMode(body.size)
        connection.outputStream.use { it.write(body) }
    }

    private fun headers(connection: HttpURLConnection): Map<String, String> =
        connection.headerFields.entries.mapNotNull { (name, values) -> name?.let { it.lowercase() to values.joinToString(", ") } }.toMap()
}
