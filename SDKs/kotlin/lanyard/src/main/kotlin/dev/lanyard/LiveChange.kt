package dev.lanyard

import java.time.Instant
import kotlinx.serialization.DeserializationStrategy
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject

/**
 * One change of the account's feed, as [LanyardClient.changes] delivers it: a record written or deleted in any of
 * the account's collections (its own, its groups', those shared with it), or a group or shared collection gone.
 *
 * ```kotlin
 * client.changes().collect { change ->
 *     when {
 *         change.kind != LiveChange.Kind.RECORD -> dropRecordsOf(change.groupId)
 *         change.isDeleted -> db.delete(change.collection, change.id)
 *         change.collection == "reminders" -> db.upsert(change.id, change.value(Reminder.serializer())!!)
 *     }
 * }
 * ```
 */
data class LiveChange(
    /** A record change, or a group or shared collection gone. */
    val kind: Kind,
    /** The record's collection (for removals: the collection concerned, or empty for a whole group). */
    val collection: String,
    /** The record's id (empty for removals). */
    val id: String,
    /** The version this change made. */
    val version: Int,
    /** When it was written (null for removals). */
    val updatedAt: Instant?,
    /** A deletion (a tombstone), or a removal. */
    val isDeleted: Boolean,
    /** The group the record belongs to; null for the account's own records. */
    val groupId: String?,
    /** For a collection another member shares with a group: that member. */
    val sharedBy: String?,
    /** The change's place in its collection's own changes (what [LanyardCollection.list] takes). */
    val collectionCursor: String?,
    /** The change's place in the feed: [LanyardClient.changes] `(since = cursor)` resumes after it. */
    val cursor: String,
    /** The record's JSON; null for a deletion. */
    val data: JsonElement?,
) {
    /** What a [LiveChange] is about. */
    enum class Kind {
        /** A record written or deleted. */
        RECORD,

        /** The account left [groupId] (or was removed, or it was dissolved): drop its records; nothing of it follows. */
        GROUP_REMOVED,

        /** [sharedBy] stopped sharing [collection] with [groupId]: drop those records. */
        SHARE_REMOVED,

        /** The account may no longer read [collection] of [groupId]: drop those records. */
        ACCESS_REMOVED,
    }

    /**
     * The record decoded with [deserializer]; null for a deletion.
     *
     * ```kotlin
     * val reminder = change.value(Reminder.serializer())
     * ```
     */
    fun <T> value(deserializer: DeserializationStrategy<T>): T? = data?.let { WireJson.decodeFromJsonElement(deserializer, it) }

    internal companion object {
        /** The change a `change` event carries, or a removal a `group_removed`, `share_removed`, `access_removed` event does. */
        fun of(event: ServerSentEvent): LiveChange? {
            val cursor = event.id ?: return null
            return when (event.name) {
                "change" -> {
                    val wire = runCatching { WireJson.decodeFromString(ChangeWire.serializer(), event.data) }.getOrNull() ?: return null
                    LiveChange(
                        Kind.RECORD, wire.collection, wire.id, wire.version, wire.updatedAt, wire.deleted, wire.groupId,
                        wire.sharedBy, wire.collectionCursor, cursor, wire.data?.takeUnless { it is JsonNull },
                    )
                }
                "group_removed", "share_removed", "access_removed" -> {
                    val body = runCatching { WireJson.parseToJsonElement(event.data).jsonObject }.getOrNull() ?: return null
                    val kind = when (event.name) {
                        "group_removed" -> Kind.GROUP_REMOVED
                        "share_removed" -> Kind.SHARE_REMOVED
                        else -> Kind.ACCESS_REMOVED
                    }
                    LiveChange(
                        kind, body.text("collection") ?: "", "", 0, null, true, body.text("group_id") ?: return null,
                        body.text("shared_by"), null, cursor, null,
                    )
                }
                else -> null
            }
        }

        private fun JsonObject.text(key: String) = (this[key] as? JsonPrimitive)?.takeIf { it.isString }?.content
    }
}

@Serializable
internal data class ChangeWire(
    val collection: String,
    val id: String,
    @SerialName("collection_cursor") val collectionCursor: String? = null,
    val version: Int,
    @SerialName("updated_at") @Serializable(InstantSerializer::class) val updatedAt: Instant,
    val deleted: Boolean = false,
    val data: JsonElement? = null,
    @SerialName("group_id") val groupId: String? = null,
    @SerialName("shared_by") val sharedBy: String? = null,
)
