package dev.lanyard

import java.time.Instant
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject

/**
 * A role in a group, highest last: [VIEWER] < [MEMBER] < [ADMIN] < [OWNER].
 *
 * ```kotlin
 * val canInvite = family.role != null && family.role >= GroupRole.ADMIN
 * ```
 */
@Serializable
enum class GroupRole {
    @SerialName("viewer") VIEWER,
    @SerialName("member") MEMBER,
    @SerialName("admin") ADMIN,
    @SerialName("owner") OWNER;

    internal val wire: String get() = name.lowercase()

    internal companion object {
        fun of(text: String) = entries.firstOrNull { it.wire == text }
    }
}

/** What kind of group: a family or a team. */
@Serializable
enum class GroupKind {
    @SerialName("family") FAMILY,
    @SerialName("team") TEAM;

    internal val wire: String get() = name.lowercase()
}

/** What happens to a group when its owner deletes their account. */
@Serializable
enum class OwnerDeletion {
    /** The longest-standing admin (else member) becomes owner. */
    @SerialName("transfer") TRANSFER,

    /** The group and its records are gone. */
    @SerialName("dissolve") DISSOLVE;

    internal val wire: String get() = name.lowercase()
}

/**
 * A group the account belongs to, with the account's [role]; [members] only from [LanyardGroups.group].
 *
 * ```kotlin
 * client.groups.list().forEach { println("${it.name}: ${it.memberCount} members, I am ${it.role}") }
 * ```
 */
@Serializable
data class LanyardGroup(
    val id: String,
    val name: String,
    val kind: GroupKind = GroupKind.FAMILY,
    @SerialName("created_at") @Serializable(InstantSerializer::class) val createdAt: Instant,
    @SerialName("on_owner_deleted") val onOwnerDeleted: OwnerDeletion = OwnerDeletion.TRANSFER,
    @SerialName("members_can_invite") val membersCanInvite: Boolean = false,
    @SerialName("member_count") val memberCount: Int = 0,
    val role: GroupRole? = null,
    val members: List<GroupMember>? = null,
)

/** A member of a group. [email] only where that member shares it. */
@Serializable
data class GroupMember(
    @SerialName("user_id") val userId: String,
    @SerialName("display_name") val displayName: String? = null,
    val role: GroupRole,
    @SerialName("joined_at") @Serializable(InstantSerializer::class) val joinedAt: Instant,
    val email: String? = null,
)

/**
 * An invite: [code] and [url] only when it was just made; pass them on by message or a QR code.
 *
 * ```kotlin
 * val invite = client.groups.invite(family.id)
 * startActivity(Intent.createChooser(Intent(Intent.ACTION_SEND).putExtra(Intent.EXTRA_TEXT, invite.url), null))
 * ```
 */
@Serializable
data class GroupInvite(
    val id: String,
    val code: String? = null,
    val url: String? = null,
    val role: GroupRole,
    @SerialName("max_uses") val maxUses: Int = 1,
    val uses: Int = 0,
    @SerialName("expires_at") @Serializable(InstantSerializer::class) val expiresAt: Instant,
    @SerialName("created_by") val createdBy: String? = null,
)

/**
 * What an invite's code joins, to show before joining.
 *
 * ```kotlin
 * val preview = client.groups.preview(code)
 * confirm("Join ${preview.groupName} (${preview.memberCount} members) as ${preview.role}?")
 * ```
 */
data class InvitePreview(
    val groupName: String,
    val kind: GroupKind,
    val memberCount: Int,
    val inviterName: String?,
    val role: GroupRole,
    val expiresAt: Instant,
)

/**
 * Who reads and who writes one of a group's collections. [write] is `member`, `admin`, `owner` or `author` (members
 * write only the records they made).
 *
 * ```kotlin
 * client.groups.setPolicy(family.id, "chores", GroupPolicy(read = GroupRole.VIEWER, write = "author"))
 * ```
 */
data class GroupPolicy(val read: GroupRole = GroupRole.VIEWER, val write: String = "member")

/** A collection a member shares with a group, read-only for the others. */
@Serializable
data class GroupShare(
    @SerialName("group_id") val groupId: String,
    @SerialName("user_id") val userId: String,
    val collection: String,
)

/**
 * The signed-in account's groups (reference section 14). Every call checks membership on the server: a member removed
 * elsewhere gets [LanyardException.NotFound] on the next call, whatever its token says.
 *
 * ```kotlin
 * val family = client.groups.create("The Smiths")
 * val invite = client.groups.invite(family.id)
 * // on the child's phone:
 * childClient.groups.join(invite.code!!)
 * ```
 */
class LanyardGroups internal constructor(private val client: LanyardClient) {
    /**
     * Creates a group; the account is its owner. Guests cannot create groups ([LanyardException.Forbidden]) but can
     * join one.
     *
     * ```kotlin
     * val family = client.groups.create("The Smiths")
     * ```
     */
    suspend fun create(
        name: String, kind: GroupKind = GroupKind.FAMILY, onOwnerDeleted: OwnerDeletion = OwnerDeletion.TRANSFER,
        membersCanInvite: Boolean = false,
    ): LanyardGroup {
        val body = buildJsonObject {
            put("name", JsonPrimitive(name))
            put("kind", JsonPrimitive(kind.wire))
            put("on_owner_deleted", JsonPrimitive(onOwnerDeleted.wire))
            put("members_can_invite", JsonPrimitive(membersCanInvite))
        }.toString()
        return client.sendAuthorized(ApiRequest("POST", "v1/groups", body), LanyardGroup.serializer())
    }

    /**
     * The account's groups, oldest membership first, each with the account's role.
     *
     * ```kotlin
     * val groups = client.groups.list()
     * ```
     */
    suspend fun list(): List<LanyardGroup> = client.sendAuthorized(ApiRequest("GET", "v1/groups"), GroupList.serializer()).groups

    /**
     * One group with its members.
     *
     * ```kotlin
     * client.groups.group(familyId).members?.forEach { println(it.displayName) }
     * ```
     */
    suspend fun group(id: String): LanyardGroup = client.sendAuthorized(ApiRequest("GET", path(id)), LanyardGroup.serializer())

    /**
     * Renames the group or changes its settings (owner and admins); null leaves a setting as it is.
     *
     * ```kotlin
     * client.groups.update(family.id, name = "Smith family", membersCanInvite = true)
     * ```
     */
    suspend fun update(
        id: String, name: String? = null, onOwnerDeleted: OwnerDeletion? = null, membersCanInvite: Boolean? = null,
    ): LanyardGroup {
        val body = buildJsonObject {
            name?.let { put("name", JsonPrimitive(it)) }
            onOwnerDeleted?.let { put("on_owner_deleted", JsonPrimitive(it.wire)) }
            membersCanInvite?.let { put("members_can_invite", JsonPrimitive(it)) }
        }.toString()
        return client.sendAuthorized(ApiRequest("PATCH", path(id), body), LanyardGroup.serializer())
    }

    /**
     * Dissolves the group with its records (the owner, after a recent sign-in).
     *
     * ```kotlin
     * client.groups.dissolve(family.id)
     * ```
     */
    suspend fun dissolve(id: String) {
        client.sendAuthorized(ApiRequest("DELETE", path(id)))
    }

    /**
     * A new invite: pass its `code` or `url` on. Shown only now.
     *
     * ```kotlin
     * val invite = client.groups.invite(family.id, role = GroupRole.MEMBER, maxUses = 3)
     * ```
     */
    suspend fun invite(groupId: String, role: GroupRole = GroupRole.MEMBER, maxUses: Int = 1, expiresInSeconds: Long = 7 * 86_400): GroupInvite {
        val body = buildJsonObject {
            put("role", JsonPrimitive(role.wire))
            put("max_uses", JsonPrimitive(maxUses))
            put("expires_in", JsonPrimitive(expiresInSeconds))
        }.toString()
        return client.sendAuthorized(ApiRequest("POST", path(groupId) + "/invites", body), GroupInvite.serializer())
    }

    /**
     * Pending invites (owner and admins), without their codes.
     *
     * ```kotlin
     * val pending = client.groups.invites(family.id)
     * ```
     */
    suspend fun invites(groupId: String): List<GroupInvite> =
        client.sendAuthorized(ApiRequest("GET", path(groupId) + "/invites"), InviteList.serializer()).invites

    /**
     * Revokes an invite: its code stops working.
     *
     * ```kotlin
     * client.groups.revokeInvite(family.id, invite.id)
     * ```
     */
    suspend fun revokeInvite(groupId: String, inviteId: String) {
        client.sendAuthorized(ApiRequest("DELETE", path(groupId) + "/invites/" + LanyardClient.segment(inviteId)))
    }

    /**
     * What a code joins. [LanyardException.NotFound] for a wrong code, [LanyardException.InviteUnusable] for an expired,
     * revoked or used-up one.
     *
     * ```kotlin
     * val preview = client.groups.preview("K7QM-2XPD")
     * ```
     */
    suspend fun preview(code: String): InvitePreview {
        val wire = client.sendAuthorized(ApiRequest("GET", "v1/invites/${codeSegment(code)}"), InvitePreviewWire.serializer())
        return InvitePreview(wire.group.name, wire.group.kind, wire.group.memberCount, wire.inviter?.displayName, wire.role, wire.expiresAt)
    }

    /**
     * Joins the group a code invites to (a member already: the group as it is). Takes the code as shown, typed in any
     * case with or without the dash, or the invite's URL.
     *
     * ```kotlin
     * val family = client.groups.join(scannedUrl)
     * ```
     */
    suspend fun join(code: String): LanyardGroup =
        client.sendAuthorized(ApiRequest("POST", "v1/invites/${codeSegment(code)}/accept"), JoinedGroup.serializer()).group

    /**
     * Changes a member's role (the owner). Ownership moves by [transfer].
     *
     * ```kotlin
     * client.groups.setRole(family.id, member.userId, GroupRole.ADMIN)
     * ```
     */
    suspend fun setRole(groupId: String, userId: String, role: GroupRole): GroupMember {
        val body = buildJsonObject { put("role", JsonPrimitive(role.wire)) }.toString()
        return client.sendAuthorized(ApiRequest("PATCH", memberPath(groupId, userId), body), GroupMember.serializer())
    }

    /**
     * The group's members, with their roles.
     *
     * ```kotlin
     * val members = client.groups.members(family.id)
     * ```
     */
    suspend fun members(groupId: String): List<GroupMember> = group(groupId).members ?: emptyList()

    /**
     * Whether the other members see this account's email (never an Apple relay address).
     *
     * ```kotlin
     * client.groups.shareEmail(family.id, true)
     * ```
     */
    suspend fun shareEmail(groupId: String, share: Boolean): GroupMember {
        val body = buildJsonObject { put("share_email", JsonPrimitive(share)) }.toString()
        return client.sendAuthorized(ApiRequest("PATCH", path(groupId) + "/members/me", body), GroupMember.serializer())
    }

    /**
     * Removes a member (the owner anyone, admins members and viewers).
     *
     * ```kotlin
     * client.groups.remove(family.id, member.userId)
     * ```
     */
    suspend fun remove(groupId: String, userId: String) {
        client.sendAuthorized(ApiRequest("DELETE", memberPath(groupId, userId)))
    }

    /**
     * Leaves the group; the owner gets [LanyardException.OwnerMustTransfer].
     *
     * ```kotlin
     * client.groups.leave(family.id)
     * ```
     */
    suspend fun leave(groupId: String) {
        client.sendAuthorized(ApiRequest("POST", path(groupId) + "/leave"))
    }

    /**
     * Hands the group to another member, who becomes owner; this account becomes an admin.
     *
     * ```kotlin
     * client.groups.transfer(family.id, partner.userId)
     * ```
     */
    suspend fun transfer(groupId: String, userId: String): LanyardGroup {
        val body = buildJsonObject { put("user_id", JsonPrimitive(userId)) }.toString()
        return client.sendAuthorized(ApiRequest("POST", path(groupId) + "/transfer", body), LanyardGroup.serializer())
    }

    /**
     * Sets who reads and writes one of the group's collections (owner and admins).
     *
     * ```kotlin
     * client.groups.setPolicy(family.id, "chores", GroupPolicy(write = "author"))
     * ```
     */
    suspend fun setPolicy(groupId: String, collection: String, policy: GroupPolicy) {
        val body = buildJsonObject {
            put("read", JsonPrimitive(policy.read.wire))
            put("write", JsonPrimitive(policy.write))
        }.toString()
        client.sendAuthorized(ApiRequest("PUT", path(groupId) + "/policies/" + LanyardClient.segment(collection), body))
    }

    /**
     * Shares one of this account's own collections with the group, read-only for the others.
     *
     * ```kotlin
     * client.groups.share(family.id, "locations")
     * ```
     */
    suspend fun share(groupId: String, collection: String) {
        client.sendAuthorized(ApiRequest("PUT", path(groupId) + "/shares/" + LanyardClient.segment(collection)))
    }

    /**
     * Stops sharing a collection with the group.
     *
     * ```kotlin
     * client.groups.unshare(family.id, "locations")
     * ```
     */
    suspend fun unshare(groupId: String, collection: String) {
        client.sendAuthorized(ApiRequest("DELETE", path(groupId) + "/shares/" + LanyardClient.segment(collection)))
    }

    /**
     * The collections members share with the group.
     *
     * ```kotlin
     * val shared = client.groups.shares(family.id)
     * ```
     */
    suspend fun shares(groupId: String): List<GroupShare> =
        client.sendAuthorized(ApiRequest("GET", path(groupId) + "/shares"), ShareList.serializer()).shares

    /**
     * One of a group's collections, typed: the personal store's API, with each record's author. Who may read and write
     * it is the collection's policy ([setPolicy]).
     *
     * ```kotlin
     * val shopping = client.groups.collection(family.id, "shopping", Item.serializer())
     * shopping.put("milk", Item("Milk"))
     * ```
     */
    fun <T> collection(groupId: String, name: String, serializer: KSerializer<T>): LanyardCollection<T> =
        LanyardCollection(client, name, CollectionScope.Group(groupId), serializer)

    /**
     * A collection another member shares with the group: read-only (writes throw [LanyardException.Forbidden]), gone
     * ([LanyardException.NotFound]) once unshared.
     *
     * ```kotlin
     * val places = client.groups.sharedCollection(family.id, child.userId, "locations", Place.serializer())
     * ```
     */
    fun <T> sharedCollection(groupId: String, memberId: String, name: String, serializer: KSerializer<T>): LanyardCollection<T> =
        LanyardCollection(client, name, CollectionScope.Shared(groupId, memberId), serializer)

    private fun path(groupId: String) = "v1/groups/${LanyardClient.segment(groupId)}"

    private fun memberPath(groupId: String, userId: String) = path(groupId) + "/members/" + LanyardClient.segment(userId)

    /** The code from what the person has: the code itself, or the invite's URL (`…/join/<code>`). */
    private fun codeSegment(text: String): String {
        val trimmed = text.trim()
        return LanyardClient.segment(trimmed.substringAfter("/join/", trimmed))
    }
}

@Serializable
internal data class GroupList(val groups: List<LanyardGroup>)

@Serializable
internal data class InviteList(val invites: List<GroupInvite>)

@Serializable
internal data class ShareList(val shares: List<GroupShare>)

@Serializable
internal data class JoinedGroup(val group: LanyardGroup, val role: GroupRole? = null)

@Serializable
internal data class InvitePreviewWire(
    val group: Summary,
    val inviter: Inviter? = null,
    val role: GroupRole,
    @SerialName("expires_at") @Serializable(InstantSerializer::class) val expiresAt: Instant,
) {
    @Serializable
    data class Summary(val name: String, val kind: GroupKind = GroupKind.FAMILY, @SerialName("member_count") val memberCount: Int = 0)

    @Serializable
    data class Inviter(@SerialName("display_name") val displayName: String? = null)
}
