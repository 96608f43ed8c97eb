package dev.lanyard

import dev.lanyard.support.LanyardDev
import java.io.File
import java.util.UUID
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout

/**
 * The seeds' first problem, both halves at once: Ada's iPhone is the Swift SDK (`lanyard-demo iphone`, a process of
 * its own, signed in with Apple, Google linked) and her Android phone is this Kotlin SDK, signed in with Google. Both
 * land in one account, and a note written on either arrives live on the other.
 *
 * Told by `scripts/two-phones` (this file's [main]) and checked by `TwoPhonesTest`.
 */
object TwoPhones {
    /** Tells the story against [server]; throws at the first thing that does not happen as told. */
    suspend fun tell(server: LanyardDev, say: (String) -> Unit) {
        val run = UUID.randomUUID().toString().take(8)
        SwiftIPhone(server.url).use { iPhone ->
            say("1. Ada signs in with Apple on her iPhone (the Swift SDK, lanyard-demo iphone)")
            val account = iPhone.ask("signin-apple ada-apple-$run", "signed-in ")
            say("   the iPhone is signed in to account $account")
            say("2. In the iPhone's settings she links her Google account")
            say("   sign-in methods: ${iPhone.ask("link-google ada-google-$run", "linked ")}")

            say("3. On her Android phone (this Kotlin SDK) she signs in with Google, a nonce and all")
            val android = LanyardClient(server.url, MemorySessionStore())
            val scope = CoroutineScope(SupervisorJob() + Dispatchers.IO)
            try {
                val nonce = Nonce.generate()
                val signedIn = android.signInWithGoogle(server.idToken("google", "ada-google-$run", nonce = nonce.raw), nonce.raw)
                check(signedIn.user.id == account) { "the Android phone landed in ${signedIn.user.id}, not $account" }
                check(!signedIn.isNewUser) { "the Android phone made a new account" }
                say("   the same account: ${signedIn.user.id}, signed in with ${signedIn.user.linkedProviders.joinToString { it.provider.displayName }}")

                say("4. Both phones watch the notes, live")
                check(iPhone.ask("watch notes", "watching").isEmpty())
                val notes = android.collection("notes", Note.serializer())
                val arrived = Channel<Change<Note>>(Channel.UNLIMITED)
                scope.launch { notes.changes().collect { arrived.send(it) } }
                withTimeout(30_000) { while (!android.isLive.value) kotlinx.coroutines.delay(20) }
                say("   the iPhone and the Android phone are both live")

                say("5. A note written on the Android phone arrives on the iPhone")
                notes.put("n1", Note("Written on the Android phone"))
                check(withTimeout(15_000) { arrived.receive() }.value == Note("Written on the Android phone"))
                val onIPhone = iPhone.awaitLine("change ", 15)
                check(onIPhone == "n1 Written on the Android phone") { "the iPhone saw: $onIPhone" }
                say("   the iPhone saw it: $onIPhone")

                say("6. A note written on the iPhone arrives on the Android phone")
                iPhone.ask("put notes n2 Written on the iPhone", "put ")
                val onAndroid = withTimeout(15_000) { arrived.receive() }
                check(onAndroid.id == "n2" && onAndroid.value == Note("Written on the iPhone")) { "the Android phone saw: $onAndroid" }
                say("   the Android phone saw it: ${onAndroid.id} ${onAndroid.value!!.text}")
                check(iPhone.awaitLine("change ", 15) == "n2 Written on the iPhone") { "the iPhone did not see its own note come back" }
            } finally {
                scope.cancel()
                android.close()
            }
        }
    }

    /** `scripts/two-phones`: the story against a `lanyard dev` of its own. */
    @JvmStatic
    fun main(arguments: Array<String>) {
        LanyardDev(mapOf("LANYARD_RATE_LIMITS" to "off")).use { server ->
            println("lanyard dev at ${server.url}")
            runBlocking { tell(server) { println(it) } }
        }
        println("\nBoth phones, one account, one note each way, live.")
    }
}

/**
 * The Swift SDK's iPhone: `lanyard-demo iphone --server URL`, the binary at `$LANYARD_DEMO_BINARY` or else
 * `.build/debug/lanyard-demo`, spoken to one line at a time.
 */
class SwiftIPhone(serverUrl: String) : AutoCloseable {
    private val process: Process
    private val lines = LinkedBlockingQueue<String>()
    /** `change` lines that came while a command's answer was awaited. */
    private val pending = mutableListOf<String>()

    init {
        val binary = System.getenv("LANYARD_DEMO_BINARY")?.takeIf { it.isNotEmpty() }?.let(::File)
            ?: File(LanyardDev.repositoryRoot(), ".build/debug/lanyard-demo")
        check(binary.canExecute()) { "no lanyard-demo at ${binary.path}: run `swift build --product lanyard-demo` or set LANYARD_DEMO_BINARY" }
        process = ProcessBuilder(binary.path, "iphone", "--server", serverUrl).redirectError(ProcessBuilder.Redirect.INHERIT).start()
        Thread {
            process.inputStream.bufferedReader().forEachLine { lines.put(it) }
            lines.put(END)
        }.apply { isDaemon = true }.start()
    }

    /** Sends [command] and answers the rest of the reply that starts with [expected]; an `error` reply throws. */
    fun ask(command: String, expected: String): String {
        process.outputStream.write((command + "\n").toByteArray())
        process.outputStream.flush()
        return awaitLine(expected, 60, skipChanges = !expected.startsWith("change "))
    }

    /** The next line starting with [prefix] (`change` lines are set aside while waiting for a command's answer). */
    fun awaitLine(prefix: String, seconds: Long, skipChanges: Boolean = false): String {
        if (prefix == "change " && pending.isNotEmpty()) return pending.removeAt(0).removePrefix(prefix).trim()
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
        while (true) {
            val line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS) ?: error("the iPhone said nothing starting with \"$prefix\" in $seconds s")
            if (line == END) error("the iPhone's process ended")
            if (line.startsWith("error ")) error("the iPhone: ${line.removePrefix("error ")}")
            if (line.startsWith(prefix)) return line.removePrefix(prefix).trim()
            if (skipChanges && line.startsWith("change ")) {
                pending += line
                continue
            }
            error("the iPhone said \"$line\", not \"$prefix…\"")
        }
    }

    override fun close() {
        runCatching {
            process.outputStream.write("quit\n".toByteArray())
            process.outputStream.flush()
        }
        if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly()
    }

    private companion object {
        const val END = "\u0000end"
    }
}
