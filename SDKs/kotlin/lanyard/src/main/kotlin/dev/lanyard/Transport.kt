package dev.lanyard

import java.io.Closeable
import java.io.IOException
import java.io.InputStream
import java.net.HttpURLConnection
import java.net.URL
import java.util.concurrent.atomic.AtomicBoolean
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

/**
 * One HTTP request as the client makes it: an absolute [url], the [method], [headers] (the bearer included) and
 * an optional JSON [body].
 *
 * ```kotlin
 * val request = HttpRequest("GET", "https://auth.example.com/v1/users/me", mapOf("Authorization" to "Bearer $token"))
 * ```
 */
class HttpRequest(
    val method: String,
    val url: String,
    val headers: Map<String, String>,
    val body: ByteArray? = null,
)

/**
 * A whole answer: the status, the headers (names lower-cased) and the body.
 *
 * ```kotlin
 * val answer = HttpResponse(response.code, mapOf("content-type" to "application/json"), response.body.bytes())
 * ```
 */
class HttpResponse(val status: Int, val headers: Map<String, String>, val body: ByteArray) {
    /** The body as UTF-8 text. */
    val text: String get() = body.toString(Charsets.UTF_8)
}

/**
 * An answer whose body is read as it arrives (the change stream). [close] ends the connection; a blocked read then
 * ends with an [IOException].
 *
 * ```kotlin
 * StreamingResponse(response.code, emptyMap(), response.body.byteStream()) { call.cancel() }
 * ```
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
        if (request.method == "PATCH" && !patchSupported) {
            return withContext(Dispatchers.IO) { JdkHttpClient.send(request, connectTimeoutMillis, readTimeoutMillis) }
        }
        val connection = open(request, readTimeoutMillis)
        return disconnectingOnCancel({ connection.disconnect() }) {
            withContext(Dispatchers.IO) {
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
        }
    }

    override suspend fun openStream(request: HttpRequest): StreamingResponse {
        val connection = open(request, streamReadTimeoutMillis)
        return disconnectingOnCancel({ connection.disconnect() }) {
            withContext(Dispatchers.IO) {
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
        }
    }

    /**
     * Android's `HttpURLConnection` sends PATCH (the API uses it for names, roles and passkeys); the JDK's refuses it
     * ("Invalid HTTP method"), so on a JVM PATCH goes through `java.net.http` (JDK 11+) instead.
     */
    private val patchSupported: Boolean by lazy {
        runCatching { (URL("http://127.0.0.1/").openConnection() as HttpURLConnection).requestMethod = "PATCH" }.isSuccess
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
        // Not in streaming mode: there, the JDK's HttpURLConnection hides a 401's body (it wants to retry with credentials).
        connection.outputStream.use { it.write(body) }
    }

    private fun headers(connection: HttpURLConnection): Map<String, String> =
        connection.headerFields.entries.mapNotNull { (name, values) -> name?.let { it.lowercase() to values.joinToString(", ") } }.toMap()
}

/**
 * `java.net.http.HttpClient`, reached by reflection so that nothing in the library names a class Android lacks: only
 * a JVM whose `HttpURLConnection` refuses PATCH comes here.
 */
internal object JdkHttpClient {
    private val clientClass by lazy { Class.forName("java.net.http.HttpClient") }
    private val requestClass by lazy { Class.forName("java.net.http.HttpRequest") }
    private val builderClass by lazy { Class.forName("java.net.http.HttpRequest\$Builder") }
    private val publisherClass by lazy { Class.forName("java.net.http.HttpRequest\$BodyPublisher") }
    private val handlerClass by lazy { Class.forName("java.net.http.HttpResponse\$BodyHandler") }
    private val responseClass by lazy { Class.forName("java.net.http.HttpResponse") }
    private val headersClass by lazy { Class.forName("java.net.http.HttpHeaders") }
    private val client: Any by lazy {
        val builder = clientClass.getMethod("newBuilder").invoke(null)
        val builderType = Class.forName("java.net.http.HttpClient\$Builder")
        builderType.getMethod("connectTimeout", java.time.Duration::class.java).invoke(builder, java.time.Duration.ofSeconds(15))
        // HTTP/1.1 as HttpURLConnection speaks it: no `Upgrade: h2c` on plain http.
        val versionType = Class.forName("java.net.http.HttpClient\$Version")
        val http11 = versionType.enumConstants.first { (it as Enum<*>).name == "HTTP_1_1" }
        builderType.getMethod("version", versionType).invoke(builder, http11)
        builderType.getMethod("build").invoke(builder)
    }

    fun send(request: HttpRequest, connectTimeoutMillis: Int, readTimeoutMillis: Int): HttpResponse {
        try {
            val builder = requestClass.getMethod("newBuilder", java.net.URI::class.java).invoke(null, java.net.URI(request.url))
            builderClass.getMethod("timeout", java.time.Duration::class.java)
                .invoke(builder, java.time.Duration.ofMillis((connectTimeoutMillis + readTimeoutMillis).toLong()))
            for ((name, value) in request.headers) builderClass.getMethod("header", String::class.java, String::class.java).invoke(builder, name, value)
            val publishers = Class.forName("java.net.http.HttpRequest\$BodyPublishers")
            val publisher = request.body?.let { publishers.getMethod("ofByteArray", ByteArray::class.java).invoke(null, it) }
                ?: publishers.getMethod("noBody").invoke(null)
            builderClass.getMethod("method", String::class.java, publisherClass).invoke(builder, request.method, publisher)
            val built = builderClass.getMethod("build").invoke(builder)
            val handler = Class.forName("java.net.http.HttpResponse\$BodyHandlers").getMethod("ofByteArray").invoke(null)
            val response = clientClass.getMethod("send", requestClass, handlerClass).invoke(client, built, handler)
            val status = responseClass.getMethod("statusCode").invoke(response) as Int
            val body = responseClass.getMethod("body").invoke(response) as ByteArray
            val headers = headersClass.getMethod("map").invoke(responseClass.getMethod("headers").invoke(response)) as Map<*, *>
            return HttpResponse(
                status, headers.entries.associate { (name, values) -> name.toString().lowercase() to (values as List<*>).joinToString(", ") }, body,
            )
        } catch (e: java.lang.reflect.InvocationTargetException) {
            val cause = e.targetException
            if (cause is IOException) throw cause
            if (cause is InterruptedException) throw IOException(cause)
            throw cause
        }
    }
}

/**
 * Runs [block] (blocking I/O, on another thread) and calls [disconnect] as soon as the caller is cancelled, so that a
 * blocked read ends at once rather than at its timeout. Not called when [block] finishes by itself.
 */
internal suspend fun <T> disconnectingOnCancel(disconnect: () -> Unit, block: suspend CoroutineScope.() -> T): T = coroutineScope {
    val finished = AtomicBoolean(false)
    val watcher = launch(start = CoroutineStart.UNDISPATCHED) {
        try {
            awaitCancellation()
        } finally {
            if (!finished.get()) disconnect()
        }
    }
    try {
        block()
    } finally {
        finished.set(true)
        watcher.cancel()
    }
}
