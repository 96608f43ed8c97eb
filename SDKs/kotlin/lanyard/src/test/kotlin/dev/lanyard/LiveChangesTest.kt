package dev.lanyard

import dev.lanyard.support.ServerTest
import dev.lanyard.support.eventually
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.serialization.Serializable
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

@Serializable
data class Note(val text: String)

/**
 * Live changes across devices on one connection per client, against a real server whose access tokens live 4 s (so
 * streams end with `token_expired` every few seconds and the client refreshes and resumes), with the server dropping
 * every connection by restarting, and apps relaunched from their stored place: nothing lost, nothing twice.
 */
class LiveChangesTest : ServerTest(mapOf("LANYARD_RATE_LIMITS" to "off", "LANYARD_ACCESS_TOKEN_TTL" to "4")) {
    private val options
        get() = LanyardOptions(
            refreshLeewaySeconds = 1,
            log = if (System.getenv("LANYARD_KOTLIN_TEST_LOG") == null) null else { line -> System.err.println(line) },
        )

    /** Two devices of one account (Apple on the first, Google linked and used on the second). */
    private suspend fun twoDevices(name: String, firstStore: SessionStore = MemorySessionStore()): Pair<LanyardClient, LanyardClient> {
        val first = client(firstStore, options)
        first.signInWithApple(apple(name))
        first.link(ProviderCredential.google(google("$name-google")))
        val second = client(options = options)
        second.signInWithGoogle(google("$name-google"))
        return first to second
    }

    @Test
    fun `every collection and the whole feed share one connection, and each collector gets only its own`() = story {
        val (phone, tablet) = twoDevices("shared")
        val reminders = collect(phone.collection<Reminder>("reminders").changes())
        val notes = collect(phone.collection<Note>("notes").changes())
        val habits = collect(phone.collection<Habit>("habits").changes())
        val everything = collect(phone.changes())
        eventually(what = "the phone's feed is live") { phone.isLive.value && phone.liveFeed.watcherCount == 4 }
        assertEquals(1, server.openStreams())

        tablet.collection<Note>("notes").put("n1", Note("Hello"))
        tablet.collection<Reminder>("reminders").put("r1", Reminder("Milk"))
        tablet.collection<Habit>("habits").put("h1", Habit("Run", 3))
        assertEquals(Note("Hello"), notes.next().value)
        assertEquals(Reminder("Milk"), reminders.next().value)
        assertEquals(Habit("Run", 3), habits.next().value)
        assertEquals(listOf("notes/n1", "reminders/r1", "habits/h1"), List(3) { everything.next().let { "${it.collection}/${it.id}" } })
        assertEquals(1, server.openStreams())
        notes.expectNothingMore(500)

        listOf(reminders, notes, habits, everything).forEach { it.cancel() }
        eventually(what = "the last collector gone, the connection closes") { server.openStreams() == 0 }
    }

    @Test
    fun `changes arrive live on the other device in order, deletions too, through token expiries, each once`() = story {
        val (phone, tablet) = twoDevices("expiring")
        val seen = collect(phone.collection<Note>("notes").changes())
        eventually(what = "the phone's feed is live") { phone.isLive.value }
        val notes = tablet.collection<Note>("notes")
        // About eight seconds of writes: the phone's stream ends with token_expired twice or more meanwhile.
        for (i in 1..24) {
            notes.put("n$i", Note("note $i"))
            delay(330)
        }
        notes.delete("n3")
        val received = List(25) { seen.next() }
        assertEquals((1..24).map { "n$it" } + "n3", received.map { it.id })
        assertEquals(Note("note 24"), received[23].value)
        assertTrue(received.last().isDeleted)
        seen.expectNothingMore()
    }

    @Test
    fun `after the server drops the connection the feed resumes where it was, without loss or repeats`() = story {
        val (phone, tablet) = twoDevices("restart")
        val everything = collect(phone.changes())
        eventually(what = "the whole feed watched first (from the feed's beginning)") { phone.liveFeed.watcherCount == 1 }
        val notes = collect(phone.collection<Note>("notes").changes())
        val writer = tablet.collection<Note>("notes")
        for (i in 1..5) writer.put("n$i", Note("before $i"))
        assertEquals((1..5).map { "n$it" }, List(5) { notes.next().id })
        assertEquals((1..5).map { "n$it" }, List(5) { everything.next().id })

        server.restart(downFor = 1_000)
        // Written at once, while the phone is still waiting to reconnect.
        for (i in 6..10) writer.put("n$i", Note("after $i"))
        writer.put("n1", Note("before 1, edited"))
        assertEquals((6..10).map { "n$it" } + "n1", List(6) { notes.next(30_000).id })
        assertEquals((6..10).map { "n$it" } + "n1", List(6) { everything.next(30_000).id })
        notes.expectNothingMore()
        everything.expectNothingMore(100)
        eventually(what = "one stream again after the restart") { server.openStreams() == 1 }
    }

    @Test
    fun `a relaunched app resumes from the place it stored, only what it missed, once`() = story {
        val store = MemorySessionStore()
        val (phone, tablet) = twoDevices("relaunch", store)
        val writer = tablet.collection<Note>("notes")
        for (i in 1..3) writer.put("n$i", Note("first $i"))
        val firstRun = collect(phone.changes())
        eventually(what = "the whole feed watched first (from the feed's beginning)") { phone.liveFeed.watcherCount == 1 }
        val firstNotes = collect(phone.collection<Note>("notes").changes())
        assertEquals(listOf("n1", "n2", "n3"), List(3) { firstRun.next(what = "the first run's change ${it + 1}").id })
        assertEquals(listOf("n1", "n2", "n3"), List(3) { firstNotes.next(what = "the first run's note ${it + 1}").id })
        firstRun.cancel()
        firstNotes.cancel()
        phone.close()

        for (i in 4..5) writer.put("n$i", Note("while closed $i"))
        val relaunched = client(store, options)
        val secondRun = collect(relaunched.changes())
        eventually(what = "the whole feed watched first") { relaunched.liveFeed.watcherCount == 1 }
        val secondNotes = collect(relaunched.collection<Note>("notes").changes())
        assertEquals(listOf("n4", "n5"), List(2) { secondRun.next(what = "the relaunch's change ${it + 4}").id })
        assertEquals(listOf("n4", "n5"), List(2) { secondNotes.next(what = "the relaunch's note ${it + 4}").id })
        secondRun.expectNothingMore()
        secondNotes.expectNothingMore(100)
    }

    @Test
    fun `a collector that falls behind is bounded, a collection's catches up by itself and the whole feed's ends`() = story {
        val (phone, tablet) = twoDevices("behind")
        phone.liveFeed.waitingLimit = 5
        val gate = CompletableDeferred<Unit>()
        val slowFeed = backgroundScope().async {
            try {
                phone.changes().collect { gate.await() }
                null
            } catch (e: LanyardException) {
                e
            }
        }
        eventually(what = "the whole feed watched first") { phone.liveFeed.watcherCount == 1 }
        val received = CopyOnWriteArrayList<String>()
        backgroundScope().launch { phone.collection<Note>("notes").changes().collect { gate.await(); received += it.id } }
        eventually(what = "both collectors on the live connection") { phone.liveFeed.watcherCount == 2 && phone.isLive.value }

        val writer = tablet.collection<Note>("notes")
        for (i in 1..20) writer.put("n$i", Note("$i"))
        delay(2_000) // the live connection hands them out meanwhile; both collectors hold the first, five wait
        gate.complete(Unit)

        assertTrue(slowFeed.await() is LanyardException.Network, "the whole feed's collector ended with ${slowFeed.await()}")
        eventually(what = "the notes' collector caught up") { received.size >= 20 }
        delay(1_500)
        assertEquals((1..20).map { "n$it" }, received.toList())
    }

    @Test
    fun `a cursor of a change reads on a connection of its own from just after it`() = story {
        val (phone, tablet) = twoDevices("cursor")
        val writer = tablet.collection<Note>("notes")
        for (i in 1..4) writer.put("n$i", Note("$i"))
        val all = collect(phone.changes())
        val second = List(4) { all.next() }[1]
        val fromSecond = collect(phone.changes(since = second.cursor))
        assertEquals(listOf("n3", "n4"), List(2) { fromSecond.next().id })
        writer.put("n5", Note("5"))
        val live = fromSecond.next()
        assertEquals("n5", live.id)
        assertEquals(Note("5"), live.value(Note.serializer()))
        fromSecond.expectNothingMore()
    }

    @Test
    fun `when the session ends elsewhere the feed ends with the reason and the client is signed out`() = story {
        val (phone, tablet) = twoDevices("ended")
        val feed = collect(phone.changes())
        eventually(what = "the phone's feed is live") { phone.isLive.value }
        tablet.signOut(SignOutScope.GLOBAL)
        val failure = feed.failure(20_000)
        assertTrue(failure is LanyardException.InvalidRefreshToken, "ended with $failure")
        assertEquals(AuthState.SignedOut, phone.authState.value)
    }
}
