package dev.lanyard.support

import dev.lanyard.AuthEvent
import dev.lanyard.LanyardClient
import dev.lanyard.LanyardOptions
import dev.lanyard.MemorySessionStore
import dev.lanyard.SessionStore
import java.util.UUID
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.TestInstance

/**
 * One `lanyard dev` per test class (started before its first test, stopped after its last), clients closed after
 * each test, and [story] to run a test's coroutine with a deadline: a test that hangs fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ServerTest(private val settings: Map<String, String> = mapOf("LANYARD_RATE_LIMITS" to "off")) {
    lateinit var server: LanyardDev
    private val clients = CopyOnWriteArrayList<LanyardClient>()
    private val background = CopyOnWriteArrayList<CoroutineScope>()

    /** A few characters unique to this test run, so subjects and addresses never meet another test's. */
    val run: String = UUID.randomUUID().toString().take(8)

    @BeforeAll
    fun startServer() {
        server = LanyardDev(settings)
    }

    @AfterAll
    fun stopServer() {
        server.close()
    }

    @AfterEach
    fun closeClients() {
        clients.forEach { it.close() }
        clients.clear()
        background.forEach { it.cancel() }
        background.clear()
    }

    /** A client of the test server (another device, when called again). */
    fun client(store: SessionStore = MemorySessionStore(), options: LanyardOptions = LanyardOptions(), url: String = server.url) =
        LanyardClient(url, store, options).also { clients += it }

    /** Runs [body] with a deadline. */
    fun story(seconds: Long = 90, body: suspend CoroutineScope.() -> Unit) = runBlocking {
        withTimeout(seconds * 1000) { body() }
    }

    /** A scope for collectors that outlive one call; cancelled after the test. */
    fun backgroundScope(): CoroutineScope = CoroutineScope(SupervisorJob() + Dispatchers.IO).also { background += it }

    /** [flow] collected in the background from now on. */
    fun <T> collect(flow: kotlinx.coroutines.flow.Flow<T>) = Collected(flow, backgroundScope())

    /** The auth events a client sends from now on. */
    fun events(client: LanyardClient): EventLog = EventLog(client, backgroundScope())

    fun apple(sub: String, email: String? = null, nonce: String? = null) = server.idToken("apple", "$sub-$run", email, nonce)

    fun google(sub: String, email: String? = null, nonce: String? = null) = server.idToken("google", "$sub-$run", email, nonce)
}

/** Collects a client's [AuthEvent]s from the moment it is made. */
class EventLog(client: LanyardClient, scope: CoroutineScope) {
    val events = CopyOnWriteArrayList<AuthEvent>()

    init {
        scope.launch(Dispatchers.Unconfined, start = CoroutineStart.UNDISPATCHED) { client.authEvents.collect { events += it } }
    }

    /** Whether an event [predicate] takes arrives within [millis]. */
    suspend fun waitFor(millis: Long = 10_000, predicate: (AuthEvent) -> Boolean): Boolean =
        withTimeoutOrNull(millis) { while (events.none(predicate)) delay(20) } != null
}

/** Waits until [condition] holds (checked every 50 ms), failing after [millis]. */
suspend fun eventually(millis: Long = 15_000, what: String, condition: suspend () -> Boolean) {
    val deadline = System.currentTimeMillis() + millis
    while (!condition()) {
        check(System.currentTimeMillis() < deadline) { "not within ${millis / 1000} s: $what" }
        delay(50)
    }
}

/** A flow collected in the background into a queue the test reads at its own pace. */
class Collected<T>(flow: kotlinx.coroutines.flow.Flow<T>, scope: CoroutineScope) {
    private val items = kotlinx.coroutines.channels.Channel<Result<T>>(kotlinx.coroutines.channels.Channel.UNLIMITED)
    private val job = scope.launch {
        try {
            flow.collect { items.send(Result.success(it)) }
        } catch (e: kotlinx.coroutines.CancellationException) {
            throw e
        } catch (e: Throwable) {
            items.send(Result.failure(e))
        }
        items.close()
    }

    /** The next item within [millis]; the flow's failure is thrown. */
    suspend fun next(millis: Long = 15_000, what: String = "the next item"): T =
        withTimeoutOrNull(millis) { items.receive() }?.getOrThrow() ?: error("$what did not arrive within ${millis / 1000} s")

    /** The flow's failure, once it ends with one. */
    suspend fun failure(millis: Long = 15_000): Throwable {
        val item = withTimeoutOrNull(millis) { items.receive() } ?: error("the flow did not end within ${millis / 1000} s")
        return item.exceptionOrNull() ?: error("the flow delivered ${item.getOrNull()} instead of failing")
    }

    /** Fails unless the flow completes (without an error and without another item) within [millis]. */
    suspend fun expectEnd(millis: Long = 15_000) {
        val item = withTimeoutOrNull(millis) { items.receiveCatching() } ?: error("the flow did not end within ${millis / 1000} s")
        check(item.isClosed) { "the flow went on: ${item.getOrNull()?.let { it.getOrNull() ?: it.exceptionOrNull() }}" }
    }

    /** Fails when anything more arrives within [millis]. */
    suspend fun expectNothingMore(millis: Long = 1_500) {
        val extra = withTimeoutOrNull(millis) { items.receiveCatching().getOrNull() }
        check(extra == null) { "unexpected: ${extra!!.getOrNull() ?: extra.exceptionOrNull()}" }
    }

    fun cancel() = job.cancel()
}

/** Runs [block] (suspending calls allowed) and answers the [T] it throws; fails when it throws nothing or something else. */
inline fun <reified T : Throwable> assertThrows(block: () -> Unit): T {
    try {
        block()
    } catch (e: Throwable) {
        if (e is T) return e
        throw AssertionError("expected ${T::class.simpleName}, got $e", e)
    }
    throw AssertionError("expected ${T::class.simpleName}, nothing was thrown")
}
