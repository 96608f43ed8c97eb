package dev.lanyard

import dev.lanyard.support.ServerTest
import dev.lanyard.support.eventually
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test
import dev.lanyard.support.assertThrows

/** Groups through the Kotlin SDK: invites and their limits, roles and policies, shares, transfer, and a removed member's live collection ending. */
class GroupsTest : ServerTest() {
    @Test
    fun `an invite is used up by its last use, a wrong code is not found, and roles decide who writes`() = story {
        val owner = client()
        owner.signInWithApple(apple("owner"))
        val family = owner.groups.create("The Smiths", kind = GroupKind.FAMILY)
        val invite = owner.groups.invite(family.id, role = GroupRole.VIEWER, maxUses = 1)
        assertEquals(listOf(invite.id), owner.groups.invites(family.id).map { it.id })
        assertNull(owner.groups.invites(family.id).single().code)

        val child = client()
        child.signInWithGoogle(google("child"))
        assertEquals(GroupRole.VIEWER, child.groups.join(invite.url!!).role)
        val late = client()
        late.signInWithGoogle(google("late"))
        assertEquals("used_up", assertThrows<LanyardException.InviteUnusable> { late.groups.join(invite.code!!) }.reason)
        assertThrows<LanyardException.NotFound> { late.groups.preview("ZZZZ-ZZZZ") }

        // A viewer reads but does not write; promoted to member, it writes.
        val chores = owner.groups.collection(family.id, "chores", Reminder.serializer())
        chores.put("dishes", Reminder("Dishes"))
        val childChores = child.groups.collection(family.id, "chores", Reminder.serializer())
        assertEquals("Dishes", childChores.get("dishes")!!.value.title)
        val refused = assertThrows<LanyardException.InsufficientRole> { childChores.put("dishes", Reminder("Dishes", done = true)) }
        assertEquals("INSUFFICIENT_ROLE", refused.code)
        owner.groups.setRole(family.id, child.currentUser!!.id, GroupRole.MEMBER)
        val written = childChores.put("dishes", Reminder("Dishes", done = true))
        assertEquals(child.currentUser!!.id, written.updatedBy)
        assertEquals(owner.currentUser!!.id, written.createdBy)

        // "author": members write only what they made.
        owner.groups.setPolicy(family.id, "chores", GroupPolicy(write = "author"))
        assertThrows<LanyardException.InsufficientRole> { childChores.put("dishes", Reminder("Dishes, again")) }
        childChores.put("homework", Reminder("Homework"))

        // The owner hands the group over and may then leave.
        owner.groups.transfer(family.id, child.currentUser!!.id)
        assertEquals(GroupRole.OWNER, child.groups.group(family.id).role)
        owner.groups.leave(family.id)
        assertEquals(emptyList<LanyardGroup>(), owner.groups.list())
    }

    @Test
    fun `a shared collection is read-only for the others, and a removed member's live collection ends`() = story {
        val parent = client()
        parent.signInWithApple(apple("parent"))
        val family = parent.groups.create("Family")
        val teen = client()
        teen.signInWithGoogle(google("teen"))
        teen.groups.join(parent.groups.invite(family.id).code!!)
        val teenId = teen.currentUser!!.id

        teen.collection<Note>("locations").put("now", Note("School"))
        teen.groups.share(family.id, "locations")
        assertEquals(listOf("locations"), parent.groups.shares(family.id).map { it.collection })
        val places = parent.groups.sharedCollection(family.id, teenId, "locations", Note.serializer())
        assertEquals(Note("School"), places.get("now")!!.value)
        assertThrows<LanyardException.Forbidden> { places.put("now", Note("Home")) }

        val teensView = collect(teen.groups.collection(family.id, "shopping", Reminder.serializer()).changes())
        parent.groups.collection(family.id, "shopping", Reminder.serializer()).put("eggs", Reminder("Eggs"))
        assertEquals(Reminder("Eggs"), teensView.next().value)
        eventually(what = "the teen's feed is live") { teen.isLive.value }
        parent.groups.remove(family.id, teenId)
        // The group is gone from the teen's feed: the collection's changes end, with nothing after.
        teensView.expectEnd()
        assertThrows<LanyardException.NotFound> { teen.groups.group(family.id) }
    }
}
