package dev.lanyard

import java.io.IOException
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn
import kotlinx.coroutines.launch

/**
 * The client's one live connection to the account's change feed, shared by every collector: [LanyardClient.changes]
 * and each collection's [LanyardCollection.changes]. It connects when the first collector arrives and closes when the
 * last one leaves; it resumes from one cursor kept in the client's store (per account), and hands each change to the
 * collectors whose filter takes it. An app watching twenty collections holds one stream.
 *
 * Each collector waits on a bounded buffer ([waitingLimit] changes, 1,000): one that falls that far behind is ended with
 * [LanyardException.Network] rather than let the buffer grow, and a collection's collector catches up again by itself
 * from its own place.
 */
internal class LiveFeed(private val client: LanyardClient) {
    internal class Watcher(val wholeFeed: Boolean, val filter: (LiveChange) -> Boolean, capacity: Int) {
        val changes = Channel<LiveChange>(capacity)
    }

    private val lock = Any()
    private val watchers = LinkedHashSet<Watcher>()
    private var job: Job? = null
    /** Counts the connection's runs, so that a run that ended is not mistaken for the current one. */
    private var generation = 0
    private val live = MutableStateFlow(false)
    /** How many changes a collector may have waiting; the tests lower it. */
    @Volatile internal var waitingLimit = WAITING_LIMIT

    val isLive: StateFlow<Boolean> = live.asStateFlow()

    /** How many collectors share the connection now. */
    val watcherCount: Int get() = synchronized(lock) { watchers.size }

    /**
     * A new collector of the changes [filter] takes, from now on. The connection starts with the first collector: where
     * this device left off, else, the first time, at the feed's beginning for a whole-feed collector and at its end
     * (`since=now`) when only collections watch (they catch up on their own).
     */
    fun watch(wholeFeed: Boolean, filter: (LiveChange) -> Boolean): Watcher {
        val watcher = Watcher(wholeFeed, filter, waitingLimit)
        synchronized(lock) {
            watchers += watcher
            if (job == null) {
                generation += 1
                val run = generation
                val from = if (watchers.any { it.wholeFeed }) null else LATEST
                job = client.scope.launch { run(from, run) }
            }
        }
        return watcher
    }

    fun stopWatching(watcher: Watcher) {
        val stopping = synchronized(lock) {
            watchers -= watcher
            if (watchers.isEmpty()) job.also { job = null } else null
        }
        watcher.changes.cancel()
        stopping?.cancel()
        if (stopping != null) live.value = false
    }

    /** `client.changes()`: every change of the shared connection. */
    fun wholeFeed(): Flow<LiveChange> = flow {
        val watcher = watch(wholeFeed = true) { true }
        try {
            for (change in watcher.changes) emit(change)
        } finally {
            stopWatching(watcher)
        }
    }

    /** `client.changes(since)`: a connection of its own from [cursor], keeping no place. */
    fun ownConnection(cursor: String): Flow<LiveChange> = flow {
        FeedReader(client, cursor, persistsCursor = false, live = MutableStateFlow(false)).run { emit(it) }
    }.flowOn(Dispatchers.IO)

    /** Reads until the last collector leaves, the session ends (every collector gets the error) or the account opened a newer stream. */
    private suspend fun run(from: String?, run: Int) {
        var ending: Throwable? = null
        try {
            FeedReader(client, from, persistsCursor = true, live = live).run { deliver(it) }
        } catch (e: CancellationException) {
            return
        } catch (e: Throwable) {
            ending = e
        }
        val ended = synchronized(lock) {
            if (generation != run) return
            job = null
            watchers.toList().also { watchers.clear() }
        }
        live.value = false
        for (watcher in ended) watcher.changes.close(ending)
    }

    private fun deliver(change: LiveChange) {
        val targets = synchronized(lock) { watchers.filter { it.filter(change) } }
        for (watcher in targets) {
            if (!watcher.changes.trySend(change).isSuccess) {
                watcher.changes.close(LanyardException.Network(IOException("fell more than $waitingLimit changes behind the live feed")))
            }
        }
    }

    companion object {
        const val WAITING_LIMIT = 1000
        const val LATEST = "now"
    }
}
