package dev.lanyard

import java.time.Instant
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.buildJsonObject

/**
 * Whose records a collection holds (reference sections 7 and 14).
 *
 * ```kotlin
 * val shopping = client.groups.collection(family.id, "shopping", Item.serializer())
 * check(shopping.scope == CollectionScope.Group(family.id))
 * ```
 */
sealed interface CollectionScope {
    /** The signed-in account's own records. */
    data object Personal : CollectionScope

    /** A group's records, under the collection's policy. */
    data class Group(val groupId: String) : CollectionScope

    /** A collection [memberId] shares with the group, read-only. */
    data class Shared(val groupId: String, val memberId: String) : CollectionScope
}

/** Where the scope's records are, under `/v1`. */
internal fun CollectionScope.path(name: String): String {
    val collection = LanyardClient.segment(name)
    return when (this) {
        CollectionScope.Personal -> "v1/data/$collection"
        is CollectionScope.Group -> "v1/groups/${LanyardClient.segment(groupId)}/data/$collection"
        is CollectionScope.Shared ->
            "v1/groups/${LanyardClient.segment(groupId)}/members/${LanyardClient.segment(memberId)}/data/$collection"
    }
}

/** A short name for the store's keys. */
internal val CollectionScope.key: String
    get() = when (this) {
        CollectionScope.Personal -> "p"
        is CollectionScope.Group -> "g.$groupId"
        is CollectionScope.Shared -> "s.$groupId.$memberId"
    }

/** Whether a change of the account's feed concerns [collection] of this scope: a record of it, or the end of reading it. */
internal fun CollectionScope.concerns(change: LiveChange, collection: String): Boolean = when (this) {
    CollectionScope.Personal -> change.kind == LiveChange.Kind.RECORD && change.groupId == null && change.collection == collection
    is CollectionScope.Group -> when (change.kind) {
        LiveChange.Kind.GROUP_REMOVED -> change.groupId == groupId
        LiveChange.Kind.RECORD, LiveChange.Kind.ACCESS_REMOVED ->
            change.groupId == groupId && change.sharedBy == null && change.collection == collection
        LiveChange.Kind.SHARE_REMOVED -> false
    }
    is CollectionScope.Shared -> when (change.kind) {
        LiveChange.Kind.GROUP_REMOVED -> change.groupId == groupId
        LiveChange.Kind.RECORD, LiveChange.Kind.SHARE_REMOVED ->
            change.groupId == groupId && change.sharedBy == memberId && change.collection == collection
        LiveChange.Kind.ACCESS_REMOVED -> false
    }
}

/**
 * Typed access to one collection of synced records, whoever's they are ([scope]: the account's own, a group's, or
 * one a member shares with a group): versions for safe concurrent edits, tombstones so other devices learn of
 * deletions, its changes page by page, and live.
 *
 * ```kotlin
 * val reminders = client.collection("reminders", Reminder.serializer())
 * val saved = reminders.put("r1", Reminder("Call Ada"))
 * reminders.put("r1", Reminder("Call Ada", done = true), ifVersion = saved.version)
 * reminders.pullChanges().forEach(::apply)
 * ```
 */
class LanyardCollection<T> internal constructor(
    internal val client: LanyardClient,
    /** The collection's name. */
    val name: String,
    /** Whose records it holds. */
    val scope: CollectionScope,
    internal val serializer: KSerializer<T>,
) {
    private val recordSerializer = DataRecord.serializer(serializer)

    /**
     * Creates or replaces record [id]. With [ifVersion], only when the server's record is still at that version (else
     * [LanyardException.VersionConflict]). A group's policy that does not allow it is
     * [LanyardException.InsufficientRole]; a shared collection is read-only ([LanyardException.Forbidden]).
     *
     * ```kotlin
     * val saved = reminders.put("r1", Reminder("Buy milk"))
     * println(saved.version)
     * ```
     */
    suspend fun put(id: String, value: T, ifVersion: Int? = null): StoredRecord<T> {
        refuseWritesWhenShared()
        val body = buildJsonObject { put("data", WireJson.encodeToJsonElement(serializer, value)) }.toString()
        return client.sendAuthorized(ApiRequest("PUT", recordPath(id), body, headers = ifMatch(ifVersion)), recordSerializer).stored()
    }

    /**
     * Record [id], or null when there is none (or it was deleted).
     *
     * ```kotlin
     * reminders.get("r1")?.let { println(it.value.title) }
     * ```
     */
    suspend fun get(id: String): StoredRecord<T>? = try {
        client.sendAuthorized(ApiRequest("GET", recordPath(id)), recordSerializer).stored()
    } catch (e: LanyardException.NotFound) {
        null
    }

    /**
     * Deletes record [id], leaving a tombstone other devices see in their changes; [LanyardException.NotFound] when
     * there is no such record.
     *
     * ```kotlin
     * reminders.delete("r1")
     * ```
     */
    suspend fun delete(id: String, ifVersion: Int? = null) {
        refuseWritesWhenShared()
        client.sendAuthorized(ApiRequest("DELETE", recordPath(id), headers = ifMatch(ifVersion)))
    }

    /**
     * Every change after [since] (null: from the start), oldest first, page by page to the end, with the cursor to pass
     * next time.
     *
     * ```kotlin
     * val batch = reminders.list(since = savedCursor)
     * batch.changes.forEach(::apply)
     * savedCursor = batch.cursor
     * ```
     */
    suspend fun list(since: String? = null, pageSize: Int = 500): ChangeBatch<T> {
        val changes = ArrayList<Change<T>>()
        var cursor = since
        while (true) {
            val page = page(cursor, pageSize)
            changes += page.changes
            cursor = page.cursor ?: cursor
            if (!page.hasMore) return ChangeBatch(changes, cursor)
        }
    }

    /**
     * The changes since the last `pullChanges()` on this device, for this account; the cursor is kept in the client's
     * [SessionStore], so it survives restarts.
     *
     * ```kotlin
     * reminders.pullChanges().forEach { if (it.isDeleted) remove(it.id) else upsert(it.id, it.value!!) }
     * ```
     */
    suspend fun pullChanges(pageSize: Int = 500): List<Change<T>> {
        val account = client.currentUser?.id ?: throw LanyardException.NotSignedIn()
        val key = "cursor.$account.${scope.key}.$name"
        val batch = list(client.sessionStore.read(key), pageSize)
        batch.cursor?.let { client.sessionStore.write(key, it) }
        return batch.changes
    }

    /**
     * This collection's changes, live: first those since this device last watched it (read page by page from the
     * collection itself), then as they happen, from the client's one live connection. The collection's place is kept
     * in the client's [SessionStore] per account, so the next launch resumes where it left off; a change never comes
     * twice. A group's collection ends when the account leaves the group or may no longer read it; a shared one when
     * it is no longer shared.
     *
     * ```kotlin
     * viewModelScope.launch {
     *     reminders.changes().collect { change -> _items.update { it.apply(change) } }
     * }
     * ```
     */
    fun changes(): Flow<Change<T>> = flow { LiveCollectionReader(this@LanyardCollection).run { emit(it) } }

    internal class Page<T>(val changes: List<Change<T>>, val cursor: String?, val hasMore: Boolean)

    /** One page of changes after [cursor]. */
    internal suspend fun page(cursor: String?, pageSize: Int): Page<T> {
        val query = buildList {
            add("limit" to pageSize.toString())
            cursor?.let { add("since" to it) }
        }
        val page = client.sendAuthorized(ApiRequest("GET", scope.path(name), query = query), DataChanges.serializer(serializer))
        return Page(page.records.map { it.change() }, page.nextCursor ?: cursor, page.hasMore)
    }

    internal fun decodeValue(change: LiveChange): T? = change.data?.let { WireJson.decodeFromJsonElement(serializer, it) }

    private fun recordPath(id: String) = scope.path(name) + "/" + LanyardClient.segment(id)

    private fun refuseWritesWhenShared() {
        if (scope is CollectionScope.Shared) throw LanyardException.Forbidden("shared_read_only")
    }

    private fun ifMatch(version: Int?): Map<String, String> = version?.let { mapOf("If-Match" to "\"$it\"") } ?: emptyMap()

    private fun DataRecord<T>.stored(): StoredRecord<T> {
        val value = data ?: throw LanyardException.InvalidResponse(200)
        return StoredRecord(id, version, updatedAt, value, createdBy, updatedBy)
    }
}

/**
 * A record as the server stored it.
 *
 * ```kotlin
 * val saved = reminders.put("r1", reminder)
 * println("${saved.id} v${saved.version} at ${saved.updatedAt}: ${saved.value}")
 * ```
 */
data class StoredRecord<T>(
    val id: String,
    /** Its version, for `put(…, ifVersion = …)`. */
    val version: Int,
    val updatedAt: Instant,
    val value: T,
    /** A group record's author; null for the account's own records. */
    val createdBy: String? = null,
    /** A group record's last writer; null for the account's own records. */
    val updatedBy: String? = null,
)

/**
 * One change of a collection: a record written ([value]) or deleted ([isDeleted]).
 *
 * ```kotlin
 * if (change.isDeleted) remove(change.id) else upsert(change.id, change.value!!)
 * ```
 */
data class Change<T>(
    val id: String,
    /** The version this change made. */
    val version: Int,
    val updatedAt: Instant,
    /** The record, or null for a deletion. */
    val value: T?,
    val isDeleted: Boolean,
)

/**
 * The changes of [LanyardCollection.list] and the cursor that follows them.
 *
 * ```kotlin
 * val batch = reminders.list()
 * ```
 */
data class ChangeBatch<T>(
    /** Oldest first. */
    val changes: List<Change<T>>,
    /** Pass it next time for newer changes only; null when the collection never changed. */
    val cursor: String?,
)

@Serializable
internal data class DataRecord<T>(
    val id: String,
    val version: Int,
    @SerialName("updated_at") @Serializable(InstantSerializer::class) val updatedAt: Instant,
    val deleted: Boolean? = null,
    val data: T? = null,
    @SerialName("created_by") val createdBy: String? = null,
    @SerialName("updated_by") val updatedBy: String? = null,
) {
    fun change() = Change(id, version, updatedAt, if (deleted == true) null else data, deleted == true)
}

@Serializable
internal data class DataChanges<T>(
    val records: List<DataRecord<T>>,
    @SerialName("next_cursor") val nextCursor: String? = null,
    @SerialName("has_more") val hasMore: Boolean = false,
)
