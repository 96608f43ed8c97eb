package dev.lanyard.support

import java.io.File
import java.net.HttpURLConnection
import java.net.ServerSocket
import java.net.URL
import java.net.URLEncoder
import java.nio.file.Files
import java.util.concurrent.TimeUnit
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * A real `lanyard dev` for the tests: a temporary SQLite database and data folder, a free loopback port, the binary
 * at `$LANYARD_BINARY` (else `.build/debug/lanyard` from the repository's root), extra `LANYARD_*` settings from the
 * test. [restart] stops it and starts it again on the same port and data, as a restarted server is.
 */
class LanyardDev(private val settings: Map<String, String> = emptyMap()) : AutoCloseable {
    val folder: File = Files.createTempDirectory("lanyard-kotlin-").toFile()
    val port: Int = ServerSocket(0).use { it.localPort }
    val url = "http://127.0.0.1:$port"
    /** The origin passkeys are made for in dev mode. */
    val passkeyOrigin = "http://localhost:$port"
    private var process: Process? = null

    init {
        start()
    }

    fun start() {
        val builder = ProcessBuilder(binary().path, "dev")
        val environment = builder.environment()
        environment["LANYARD_PORT"] = port.toString()
        environment["LANYARD_DATA_DIR"] = folder.path
        environment["LANYARD_DATABASE_URL"] = "sqlite:${folder.path}/lanyard.sqlite"
        environment["LANYARD_LOG_LEVEL"] = "warning"
        environment["LANYARD_ADMIN_KEY"] = ADMIN_KEY
        environment.putAll(settings)
        builder.redirectOutput(ProcessBuilder.Redirect.DISCARD)
        builder.redirectError(ProcessBuilder.Redirect.appendTo(File(folder, "server.log")))
        process = builder.start()
        // Up to a minute: a debug build starting on a busy machine is slow.
        val deadline = System.currentTimeMillis() + 60_000
        while (System.currentTimeMillis() < deadline) {
            if (runCatching { request("GET", "/healthz").status == 200 }.getOrDefault(false)) return
            check(process!!.isAlive) { "lanyard dev stopped at start; see ${folder.path}/server.log" }
            Thread.sleep(100)
        }
        process!!.destroyForcibly()
        error("lanyard dev did not start; see ${folder.path}/server.log")
    }

    fun stop() {
        val running = process ?: return
        running.destroy()
        if (!running.waitFor(30, TimeUnit.SECONDS)) running.destroyForcibly().waitFor()
        process = null
    }

    /** Stops the server and starts it again on the same port and data (retried while the old socket lets go). */
    fun restart(downFor: Long = 0) {
        stop()
        if (downFor > 0) Thread.sleep(downFor)
        var lastError: Throwable? = null
        repeat(20) {
            try {
                start()
                return
            } catch (e: Throwable) {
                lastError = e
                Thread.sleep(250)
            }
        }
        throw IllegalStateException("lanyard dev did not start again on port $port", lastError)
    }

    override fun close() {
        stop()
        folder.deleteRecursively()
    }

    /** What Apple's or Google's SDK hands the app; the emulator signs it like the real provider. */
    fun idToken(provider: String, sub: String, email: String? = null, nonce: String? = null, name: String? = null): String {
        val body = buildJsonObject {
            put("sub", JsonPrimitive(sub))
            email?.let { put("email", JsonPrimitive(it)) }
            nonce?.let { put("nonce", JsonPrimitive(it)) }
            name?.let { put("name", JsonPrimitive(it)) }
        }
        val answer = request("POST", "/_emulator/$provider/id-token", body.toString())
        check(answer.status == 200) { "the emulator did not mint a token: ${answer.text}" }
        return answer.json.jsonObject["id_token"]!!.jsonPrimitive.content
    }

    /**
     * The old system's session token (reference section 24): `firebase`'s ID token, `supabase`'s access token, `clerk`'s
     * session token, minted by the emulator with [claims] (`identities`, `sign_in_provider`, `is_anonymous`, `email`,
     * `expires_in`, `iat`, `aud`, `iss`, `impersonated_by`…) and verified by the bridge through the production path.
     */
    fun legacyToken(source: String, sub: String, claims: Map<String, JsonElement> = emptyMap()): String {
        val path = mapOf("firebase" to "firebase/id-token", "supabase" to "supabase/access-token", "clerk" to "clerk/session-token")
        val answer = request("POST", "/_emulator/${path.getValue(source)}", JsonObject(mapOf("sub" to JsonPrimitive(sub)) + claims).toString())
        check(answer.status == 200) { "the emulator did not mint a $source token: ${answer.text}" }
        return answer.obj.values.single().jsonPrimitive.content
    }

    /** The newest mail to [address] in the dev mailbox, once it is there: its code and link. */
    fun mail(address: String): Mail {
        val deadline = System.currentTimeMillis() + 30_000
        while (System.currentTimeMillis() < deadline) {
            val answer = request("GET", "/_emulator/mail?to=" + URLEncoder.encode(address, "UTF-8"))
            val newest = (answer.json as? JsonArray)?.firstOrNull()?.jsonObject
            if (newest != null) {
                return Mail(newest["code"]!!.jsonPrimitive.content, (newest["link"] as? JsonPrimitive)?.content)
            }
            Thread.sleep(100)
        }
        error("no mail to $address in the mailbox")
    }

    data class Mail(val code: String, val link: String?)

    /** Confirms a mail's link as the person does in a browser: the page asks for the number the device shows. */
    fun confirmLink(link: String, match: Int): Int {
        val connection = URL(link).openConnection() as HttpURLConnection
        connection.requestMethod = "POST"
        connection.instanceFollowRedirects = false
        connection.doOutput = true
        connection.setRequestProperty("Content-Type", "application/x-www-form-urlencoded")
        connection.outputStream.use { it.write("match=$match".toByteArray()) }
        return connection.responseCode.also { connection.disconnect() }
    }

    /**
     * A person on the provider's page, as a browser would be: follows Lanyard's 302 to the emulator's page, submits its
     * form with [person] (`sub`, `email`, Apple's `given_name`/`family_name`, or `nonce_override`/`aud` for a token
     * that is not the flow's), follows the answer back to Lanyard's callback (Google's 302; Apple's `form_post` page,
     * whose hidden fields are posted as its script would) and answers where the callback sends the browser: the app's
     * `redirect_uri?code=…&state=…`. With [cancel] the person declines (the provider sends `error=access_denied`).
     */
    fun throughProvider(url: String, person: Map<String, String> = emptyMap(), cancel: Boolean = false): String {
        var page = url
        var answer = browse("GET", page)
        var hops = 0
        while (answer.status == 302 && hops++ < 5) {
            page = URL(URL(page), answer.location!!).toString()
            answer = browse("GET", page)
        }
        check(answer.status == 200 && answer.text.contains("id=\"continue\"")) { "not the provider's page: ${answer.status} ${answer.text.take(300)}" }
        val fields = hiddenFields(answer.text)
        val back = if (cancel) {
            browse("GET", fields.getValue("redirect_uri") + "?" + form(mapOf("state" to fields.getValue("state"), "error" to "access_denied")))
        } else {
            val picked = browse("POST", page, form(fields + person))
            if (picked.status == 302) {
                browse("GET", URL(URL(page), picked.location!!).toString())
            } else {
                // Apple: a page whose script posts the form to Lanyard's callback.
                val action = Regex("<form id=\"form_post\" method=\"post\" action=\"([^\"]+)\"").find(picked.text)
                    ?: error("no form_post: ${picked.status} ${picked.text.take(300)}")
                browse("POST", unescape(action.groupValues[1]), form(hiddenFields(picked.text)))
            }
        }
        check(back.status == 302) { "the callback answered ${back.status}: ${back.text.take(300)}" }
        return back.location!!
    }

    private class Page(val status: Int, val location: String?, val text: String)

    /** One request as a browser makes it: no redirect followed, a form posted as `application/x-www-form-urlencoded`. */
    private fun browse(method: String, url: String, form: String? = null): Page {
        val connection = URL(url).openConnection() as HttpURLConnection
        connection.requestMethod = method
        connection.instanceFollowRedirects = false
        connection.connectTimeout = 5_000
        connection.readTimeout = 30_000
        if (form != null) {
            connection.doOutput = true
            connection.setRequestProperty("Content-Type", "application/x-www-form-urlencoded")
            connection.outputStream.use { it.write(form.toByteArray()) }
        }
        val status = connection.responseCode
        val text = (if (status >= 400) connection.errorStream else connection.inputStream)?.use { it.readBytes().decodeToString() } ?: ""
        return Page(status, connection.getHeaderField("Location"), text).also { connection.disconnect() }
    }

    private fun form(fields: Map<String, String>) =
        fields.entries.joinToString("&") { (name, value) -> URLEncoder.encode(name, "UTF-8") + "=" + URLEncoder.encode(value, "UTF-8") }

    private fun hiddenFields(html: String): Map<String, String> =
        Regex("<input type=\"hidden\" name=\"([^\"]+)\" value=\"([^\"]*)\">").findAll(html)
            .associate { it.groupValues[1] to unescape(it.groupValues[2]) }

    private fun unescape(text: String) = text.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<")
        .replace("&gt;", ">").replace("&amp;", "&")

    /** How many refresh requests the server has answered (its Prometheus counter, any status). */
    fun refreshRequests(): Int = metric("lanyard_http_requests_total{method=\"POST\",route=\"/v1/auth/refresh\",")

    /** Change streams open on the server now. */
    fun openStreams(): Int = metric("lanyard_streams_open")

    private fun metric(prefix: String): Int = request("GET", "/metrics").text.lineSequence()
        .filter { it.startsWith(prefix) }
        .sumOf { it.substringAfterLast(' ').toDouble().toInt() }

    /** An admin API call (`LANYARD_ADMIN_KEY` is set on every test server). */
    fun admin(method: String, path: String, body: String? = null) = request(method, path, body, "Bearer $ADMIN_KEY")

    class Answer(val status: Int, val text: String) {
        val json: JsonElement get() = Json.parseToJsonElement(text)
        val obj: JsonObject get() = json.jsonObject
    }

    /** A plain HTTP call to the server, not through the SDK. */
    fun request(method: String, path: String, body: String? = null, authorization: String? = null): Answer {
        val connection = URL(url + path).openConnection() as HttpURLConnection
        connection.requestMethod = method
        connection.connectTimeout = 5_000
        connection.readTimeout = 30_000
        connection.setRequestProperty("Accept", "application/json")
        authorization?.let { connection.setRequestProperty("Authorization", it) }
        if (body != null) {
            connection.doOutput = true
            connection.setRequestProperty("Content-Type", "application/json")
            connection.outputStream.use { it.write(body.toByteArray()) }
        }
        val status = connection.responseCode
        val text = (if (status >= 400) connection.errorStream else connection.inputStream)?.use { it.readBytes().decodeToString() } ?: ""
        connection.disconnect()
        return Answer(status, text)
    }

    companion object {
        const val ADMIN_KEY = "kotlin-sdk-tests-admin-key-0123456789abcdef"

        /** `$LANYARD_BINARY`, else the debug build in the repository. */
        fun binary(): File {
            val configured = System.getenv("LANYARD_BINARY")?.takeIf { it.isNotEmpty() }?.let(::File)
            val file = configured ?: File(repositoryRoot(), ".build/debug/lanyard")
            check(file.canExecute()) { "no lanyard binary at ${file.path}: run `swift build --product lanyard` or set LANYARD_BINARY" }
            return file
        }

        /** The repository's root: the folder above SDKs/ (the tests run from it through scripts/test-kotlin). */
        fun repositoryRoot(): File {
            var folder: File? = File("").absoluteFile
            while (folder != null) {
                if (File(folder, "Package.swift").exists() && File(folder, "SDKs").isDirectory) return folder
                folder = folder.parentFile
            }
            return File("").absoluteFile
        }
    }
}
