package dev.lanyard

import java.util.UUID
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject

/** Which account survives a merge ([LanyardClient.merge]). */
enum class MergeKeep(internal val wire: String) {
    /** The signed-in account survives; the proven one is absorbed. */
    CURRENT("current"),

    /** The proven account survives; this client adopts its session. */
    OTHER("other"),
}

/** Which record wins when both accounts hold one with the same collection and id. */
enum class MergeConflictRule(internal val wire: String) {
    /** The one written last. */
    NEWER("newer"),

    /** The signed-in account's. */
    CURRENT("current"),

    /** The proven account's. */
    OTHER("other"),
}

/**
 * What a merge did (or, for a dry run, would do).
 *
 * ```kotlin
 * val result = client.merge { nonce -> ProviderCredential.google(signInToTheOtherAccount(nonce), nonce) }
 * println("${result.recordsMoved} records moved into ${result.into}, ${result.conflicts.size} clashes")
 * ```
 */
@Serializable
data class MergeResult(
    @SerialName("merge_id") val mergeId: String? = null,
    /** The surviving account. */
    val into: String,
    /** The absorbed account. */
    val from: String,
    @SerialName("identities_moved") val identitiesMoved: List<String> = emptyList(),
    @SerialName("identities_released") val identitiesReleased: List<String> = emptyList(),
    @SerialName("records_moved") val recordsMoved: Int = 0,
    val conflicts: List<Conflict> = emptyList(),
    val groups: List<String> = emptyList(),
    @SerialName("dry_run") val dryRun: Boolean = false,
) {
    /** A record both accounts held, and whose version won (`current` or `other`). */
    @Serializable
    data class Conflict(val collection: String, val id: String, @SerialName("group_id") val groupId: String? = null, val winner: String)
}

@Serializable
internal data class MergeAnswer(
    @SerialName("merge_id") val mergeId: String? = null,
    val into: String,
    val from: String,
    @SerialName("identities_moved") val identitiesMoved: List<String> = emptyList(),
    @SerialName("identities_released") val identitiesReleased: List<String> = emptyList(),
    @SerialName("records_moved") val recordsMoved: Int = 0,
    val conflicts: List<MergeResult.Conflict> = emptyList(),
    val groups: List<String> = emptyList(),
    @SerialName("dry_run") val dryRun: Boolean = false,
    val session: SessionResponse? = null,
) {
    fun result() = MergeResult(mergeId, into, from, identitiesMoved, identitiesReleased, recordsMoved, conflicts, groups, dryRun)
}

@Serializable
internal data class MergeChallenge(val nonce: String, @SerialName("expires_in") val expiresIn: Int = 300)

/** Sends `POST /v1/users/me/merge` with [proof], retried once with the same key when the answer was lost. */
internal suspend fun LanyardClient.sendMerge(
    proof: JsonObject, keep: MergeKeep, onConflict: MergeConflictRule, release: List<Provider>, dryRun: Boolean,
): MergeResult {
    val body = buildJsonObject {
        put("proof", proof)
        put("keep", JsonPrimitive(keep.wire))
        put("on_conflict", JsonPrimitive(onConflict.wire))
        put("release", JsonArray(release.map { JsonPrimitive(it.name) }))
        put("dry_run", JsonPrimitive(dryRun))
    }.toString()
    val request = ApiRequest("POST", "v1/users/me/merge", body, headers = mapOf("Idempotency-Key" to UUID.randomUUID().toString()))
    val answer = try {
        sendAuthorized(request, MergeAnswer.serializer())
    } catch (e: LanyardException.Network) {
        // The answer was lost: the same key answers the same merge, and moves nothing twice.
        sendAuthorized(request, MergeAnswer.serializer())
    }
    answer.session?.let { adopt(it) }
    return answer.result()
}

internal fun proofOf(provider: String, members: Map<String, JsonElement>) =
    JsonObject(mapOf("provider" to JsonPrimitive(provider)) + members)
