package dev.lanyard

import java.io.IOException
import kotlin.coroutines.coroutineContext
import kotlin.math.min
import kotlin.math.pow
import kotlin.random.Random
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject

/**
 * Reads `GET /v1/changes/stream` for one consumer, reconnecting as needed: the loop behind the shared connection
 * ([LiveFeed]) and behind `changes(since)`. It resumes after the last change it delivered (`Last-Event-ID`), so a
 * dropped connection, a restarted server or an expired token loses nothing and repeats nothing.
 *
 * @param since where to start the first time: a cursor, `now` (the feed's end) or null (its beginning).
 * @param persistsCursor whether the place reached is kept in the client's store (the shared connection's, per account).
 */
internal class FeedReader(
    private val client: LanyardClient,
    private val since: String?,
    private val persistsCursor: Boolean,
    private val live: MutableStateFlow<Boolean>,
) {
    private var cursor: String? = since
    private var account: String? = null
    private var started = false
    private var failures = 0
    private var refusedOnce = false
    private var bearer: String? = null

    /**
     * Reads until another stream of the account replaced this one (returns) or the session is over (throws; the client
     * has signed out). Network trouble and a busy or restarting server are waited out.
     */
    suspend fun run(deliver: suspend (LiveChange) -> Unit) {
        while (true) {
            coroutineContext.ensureActive()
            try {
                if (readOneConnection(deliver)) return
                // Closed without an `end`: the connection dropped.
                pause()
            } catch (e: LanyardException) {
                live.value = false
                log("refused or unreachable: ${e::class.simpleName} (${e.cause?.message ?: e.message})")
                recover(e)
            } catch (e: IOException) {
                live.value = false
                log("connection lost: ${e.message}")
                pause()
            }
        }
    }

    /** One connection, read to its end; true when the feed is over for this reader (`replaced`). */
    private suspend fun readOneConnection(deliver: suspend (LiveChange) -> Unit): Boolean {
        val token = client.accessToken()
        val user = client.currentUser?.id
        if (account != user || !started) {
            // The shared connection starts where this device left off, else at `since`. A client that now holds another
            // account (a guest merged into it) goes on from that account's own place.
            account = user
            cursor = if (persistsCursor) storedCursor() ?: since else if (started) null else since
            started = true
        }
        bearer = token
        log("connecting from ${cursor ?: "the beginning"}")
        val headers = buildMap {
            put("Authorization", "Bearer $token")
            put("Accept", "text/event-stream")
            put("X-Client-Info", LanyardClient.CLIENT_INFO)
            cursor?.let { put("Last-Event-ID", it) }
        }
        val response = try {
            client.options.transport.openStream(HttpRequest("GET", client.url("v1/changes/stream"), headers))
        } catch (e: IOException) {
            throw LanyardException.Network(e)
        }
        try {
            return disconnectingOnCancel({ response.close() }) { read(response, deliver) }
        } finally {
            response.close()
            live.value = false
        }
    }

    /** Reads one connection's events, blocking between them; true when the feed is over for this reader. */
    private suspend fun read(response: StreamingResponse, deliver: suspend (LiveChange) -> Unit): Boolean {
        if (response.status !in 200..299) {
            val body = response.body.use { it.readNBytes(64 * 1024) }.toString(Charsets.UTF_8)
            throw LanyardException.fromResponse(response.status, body, response.headers["retry-after"])
                ?: LanyardException.InvalidResponse(response.status)
        }
        val reader = ServerSentEventReader(response.body)
        while (true) {
            val event = reader.next() ?: return false
            // Cancelled meanwhile: nothing more is taken, so the stored place stays at what was delivered.
            coroutineContext.ensureActive()
            when (event.name) {
                "change", "group_removed", "share_removed", "access_removed" -> {
                    val change = LiveChange.of(event) ?: continue
                    remember(change.cursor)
                    failures = 0
                    refusedOnce = false
                    deliver(change)
                }
                "ready" -> {
                    // Caught up. Its cursor is the place reached, also when nothing came (a start at `now`).
                    val ready = runCatching { WireJson.parseToJsonElement(event.data).jsonObject["cursor"] }.getOrNull()
                    (ready as? JsonPrimitive)?.takeIf { it.isString }?.content?.let { remember(it) }
                    live.value = true
                    failures = 0
                    refusedOnce = false
                }
                "token_expiring" -> runCatching { client.accessToken() }
                "end" -> {
                    live.value = false
                    val reason = runCatching {
                        (WireJson.parseToJsonElement(event.data).jsonObject["reason"] as? JsonPrimitive)?.content
                    }.getOrNull() ?: ""
                    log("ended by the server: $reason")
                    return ended(reason)
                }
            }
        }
    }

    /** What each `end` reason asks of the client; true when this reader is done. */
    private suspend fun ended(reason: String): Boolean {
        val bearer = bearer
        when (reason) {
            "token_expired" -> if (bearer != null) client.refreshedSession(bearer)
            // The instance is stopping: another answers at once behind a load balancer.
            "shutdown" -> delay(Random.nextLong(50, 500))
            "replaced" -> return true
            "resync_required" -> remember(null)
            "account_deleted" -> {
                client.endSession(bearer, SignOutReason.AccountDeleted)
                throw LanyardException.NotSignedIn()
            }
            "account_disabled" -> {
                client.endSession(bearer, SignOutReason.AccountDisabled)
                throw LanyardException.AccountDisabled()
            }
            else -> {
                // signed_out, account_merged: this session is over. A client that holds another one now (a guest's device
                // that signed in to the account it merged into) goes on with it; otherwise the refresh tells, and signs
                // the client out when the session ended.
                val current = runCatching { client.accessToken() }.getOrNull()
                if (bearer != null && current != bearer) return false
                if (bearer != null) client.refreshedSession(bearer)
            }
        }
        return false
    }

    /** A refused token is refreshed once; network trouble and a busy server are waited out; the session's end is thrown. */
    private suspend fun recover(error: LanyardException) {
        when (error) {
            is LanyardException.Unauthorized -> {
                if (refusedOnce) throw error
                refusedOnce = true
                bearer?.let { client.refreshedSession(it) }
            }
            is LanyardException.Network, is LanyardException.ServiceUnavailable, is LanyardException.ProviderUnavailable,
            is LanyardException.InvalidResponse, is LanyardException.InternalError, is LanyardException.Unknown,
            is LanyardException.RateLimited -> pause()
            else -> throw error
        }
    }

    /** Waits 0.25 s, doubling with each failure in a row up to 30 s, each pause between half and all of it. */
    private suspend fun pause() {
        failures += 1
        val ceiling = min(30.0, 0.25 * 2.0.pow(min(failures, 10) - 1))
        val millis = (Random.nextDouble(ceiling / 2, ceiling) * 1000).toLong()
        log("reconnecting in $millis ms")
        delay(millis)
    }

    private fun log(message: String) {
        client.options.log?.invoke("live feed: $message")
    }

    private val storageKey: String? get() = if (persistsCursor) account?.let { "changes.$it" } else null

    private fun storedCursor(): String? = storageKey?.let { client.sessionStore.read(it) }

    private fun remember(next: String?) {
        cursor = next
        storageKey?.let { runCatching { client.sessionStore.write(it, next) } }
    }
}
