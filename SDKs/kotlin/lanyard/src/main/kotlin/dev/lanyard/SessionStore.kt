package dev.lanyard

import java.io.File
import java.nio.file.Files
import java.nio.file.StandardCopyOption
import java.nio.file.attribute.PosixFilePermissions
import java.util.concurrent.ConcurrentHashMap
import kotlinx.serialization.builtins.MapSerializer
import kotlinx.serialization.builtins.serializer

/**
 * Where a [LanyardClient] keeps what must survive a restart: the session (its tokens and the user) and the places
 * its change feeds reached, each under a key. Calls are synchronous and quick.
 *
 * The SDK ships [MemorySessionStore] (tests, previews), [FileSessionStore] (a file only its owner reads, for the
 * JVM) and, in the Android source set, `KeystoreSessionStore` (encrypted with an Android Keystore key).
 *
 * ```kotlin
 * class PrefsStore(private val prefs: SharedPreferences) : SessionStore {
 *     override fun read(key: String) = prefs.getString(key, null)
 *     override fun write(key: String, value: String?) = prefs.edit().apply {
 *         if (value == null) remove(key) else putString(key, value)
 *     }.apply()
 * }
 * ```
 */
interface SessionStore {
    /** The text stored under [key], or null. */
    fun read(key: String): String?

    /** Stores [value] under [key]; null removes it. */
    fun write(key: String, value: String?)
}

/**
 * Keeps everything in memory: a session lasts as long as the store.
 *
 * ```kotlin
 * val client = LanyardClient("http://10.0.2.2:8080", MemorySessionStore())
 * ```
 */
class MemorySessionStore : SessionStore {
    private val values = ConcurrentHashMap<String, String>()

    override fun read(key: String): String? = values[key]

    override fun write(key: String, value: String?) {
        if (value == null) values.remove(key) else values[key] = value
    }
}

/**
 * Keeps everything in one JSON file readable only by its owner (0600 where the file system has POSIX permissions),
 * replaced atomically on every change. For apps on the JVM (desktop, command line, a server acting as a user);
 * on Android prefer `KeystoreSessionStore`.
 *
 * ```kotlin
 * val store = FileSessionStore(File(System.getProperty("user.home"), ".config/myapp/lanyard.json"))
 * ```
 */
class FileSessionStore(val file: File) : SessionStore {
    private val lock = Any()
    private val serializer = MapSerializer(String.serializer(), String.serializer())

    override fun read(key: String): String? = synchronized(lock) { readAll()[key] }

    override fun write(key: String, value: String?) = synchronized(lock) {
        val all = readAll().toMutableMap()
        if (value == null) all.remove(key) else all[key] = value
        file.absoluteFile.parentFile?.mkdirs()
        val temporary = File(file.absoluteFile.parentFile, ".${file.name}.tmp")
        temporary.delete()
        ownerOnly(temporary)
        temporary.writeText(WireJson.encodeToString(serializer, all))
        Files.move(temporary.toPath(), file.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
        Unit
    }

    private fun readAll(): Map<String, String> =
        if (file.exists()) WireJson.decodeFromString(serializer, file.readText()) else emptyMap()

    private fun ownerOnly(file: File) {
        try {
            Files.createFile(file.toPath(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))
        } catch (_: UnsupportedOperationException) {
            file.createNewFile()
            file.setReadable(false, false); file.setReadable(true, true)
            file.setWritable(false, false); file.setWritable(true, true)
        }
    }
}
