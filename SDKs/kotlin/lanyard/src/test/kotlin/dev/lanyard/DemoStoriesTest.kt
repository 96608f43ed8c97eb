package dev.lanyard

import dev.lanyard.support.ServerTest
import dev.lanyard.support.eventually
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.first
import kotlinx.serialization.Serializable
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import dev.lanyard.support.assertThrows

@Serializable
data class Reminder(val title: String, val done: Boolean = false)

@Serializable
data class Habit(val name: String, val streak: Int)

/**
 * The stories of the Swift demo (`Examples/Demo/LanyardDemo.swift`), told again through the Kotlin SDK against a real
 * `lanyard dev`: Ada's iPhone and Android phone on one account, a guest's iPad merged in, live edits, a family with a
 * shared list, Charles's two accounts merged, Grace's last sign-in method and deletion, Lin's email link.
 */
class DemoStoriesTest : ServerTest() {
    @Test
    fun `Ada signs in with Apple, links Google, and her Android phone signing in with Google finds the same reminders`() = story {
        val iPhone = client()
        val nonce = Nonce.generate()
        // Apple's token carries the nonce's SHA-256 (the iOS API hashes it); the app sends the raw one.
        val first = iPhone.signInWithApple(apple("ada", "ada@privaterelay.appleid.com", nonce.hashed), nonce.raw, FullName("Ada", "Lovelace"))
        assertTrue(first.isNewUser)
        assertEquals("Ada Lovelace", first.user.displayName)
        val reminders = iPhone.collection<Reminder>("reminders")
        reminders.put("r1", Reminder("Buy milk"))
        reminders.put("r2", Reminder("Call Charles"))

        iPhone.link(ProviderCredential.google(google("ada-google", "ada@work.example")))
        assertEquals(listOf(Provider.Apple to true, Provider.Google to false), iPhone.currentUser!!.linkedProviders.map { it.provider to it.isPrimary })

        val android = client()
        val googleNonce = Nonce.generate()
        // Credential Manager's GetGoogleIdOption embeds the nonce as given.
        val second = android.signInWithGoogle(google("ada-google", nonce = googleNonce.raw), googleNonce.raw)
        assertEquals(first.user.id, second.user.id)
        assertFalse(second.isNewUser)
        val seen = android.collection<Reminder>("reminders").pullChanges().associate { it.id to it.value?.title }
        assertEquals(mapOf("r1" to "Buy milk", "r2" to "Call Charles"), seen)
    }

    @Test
    fun `a guest on an iPad tracks a habit, signs in with the Apple ID that has an account, and the habit comes along`() = story {
        val iPhone = client()
        val ada = iPhone.signInWithApple(apple("ada-ipad"))
        val iPad = client()
        val events = events(iPad)
        val guest = iPad.signInAnonymously()
        assertTrue(guest.user.isAnonymous)
        iPad.collection<Habit>("habits").put("h1", Habit("Read", 12))

        val merged = iPad.signInWithApple(apple("ada-ipad"))
        assertEquals(ada.user.id, merged.user.id)
        assertEquals(guest.user.id, merged.mergedFrom)
        assertTrue(events.waitFor { it == AuthEvent.MergedFrom(guest.user.id) })
        val habits = iPhone.collection<Habit>("habits").pullChanges().mapNotNull { it.value }
        assertEquals(listOf(Habit("Read", 12)), habits)
    }

    @Test
    fun `a guest that signs in with a new Google account is upgraded in place, keeping its id and data`() = story {
        val phone = client()
        val guest = phone.signInAnonymously()
        phone.collection<Reminder>("reminders").put("g1", Reminder("Guest's note"))
        val upgraded = phone.signInWithGoogle(google("fresh"))
        assertEquals(guest.user.id, upgraded.user.id)
        assertNull(upgraded.mergedFrom)
        assertFalse(upgraded.user.isAnonymous)
        assertEquals("Guest's note", phone.collection<Reminder>("reminders").get("g1")?.value?.title)
    }

    @Test
    fun `the Android phone edits a reminder and the iPhone, listening, sees it live`() = story {
        val iPhone = client()
        iPhone.signInWithApple(apple("ada-live"))
        iPhone.link(ProviderCredential.google(google("ada-live-google")))
        iPhone.collection<Reminder>("reminders").put("r1", Reminder("Buy milk"))
        val android = client()
        android.signInWithGoogle(google("ada-live-google"))

        val seen = collect(iPhone.collection<Reminder>("reminders").changes())
        // Caught up first (the reminder as it was), then the edit live, each once.
        assertEquals("r1" to false, seen.next().let { it.id to it.value!!.done })
        eventually(what = "the iPhone's feed is live") { iPhone.isLive.value }
        android.collection<Reminder>("reminders").put("r1", Reminder("Buy milk", done = true))
        assertEquals("r1" to true, seen.next().let { it.id to it.value!!.done })
        seen.expectNothingMore()
    }

    @Test
    fun `Ada makes a family, her son joins with a code, the shopping list is shared live, and he leaves`() = story {
        val ada = client()
        ada.signInWithApple(apple("ada-family"))
        ada.updateProfile("Ada")
        val family = ada.groups.create("The Lovelaces")
        assertEquals(GroupRole.OWNER, family.role)
        val invite = ada.groups.invite(family.id)
        val code = invite.code!!
        val byron = client()
        byron.signInWithGoogle(google("byron"))
        val preview = byron.groups.preview(code)
        assertEquals("The Lovelaces", preview.groupName)
        assertEquals(1, preview.memberCount)
        assertEquals("Ada", preview.inviterName)
        assertEquals(GroupRole.MEMBER, preview.role)
        // Typed as a person types it: lower case, no dash.
        assertEquals(family.id, byron.groups.join(code.lowercase().replace("-", "")).id)

        val shopping = ada.groups.collection(family.id, "shopping", Reminder.serializer())
        shopping.put("bread", Reminder("Bread"))
        val byronsList = byron.groups.collection(family.id, "shopping", Reminder.serializer())
        val seen = collect(byronsList.changes())
        assertEquals(Reminder("Bread"), seen.next().value)
        eventually(what = "Byron's feed is live") { byron.isLive.value }
        val bought = shopping.put("bread", Reminder("Bread", done = true))
        assertEquals(Reminder("Bread", done = true), seen.next().value)
        assertEquals(bought.version, byronsList.get("bread")!!.version)
        seen.cancel()

        assertEquals(setOf(GroupRole.OWNER, GroupRole.MEMBER), ada.groups.members(family.id).map { it.role }.toSet())
        byron.groups.leave(family.id)
        val after = ada.groups.group(family.id)
        assertEquals(1, after.memberCount)
        assertEquals("Ada", after.members!!.single().displayName)
        assertNull(byronsList.get("bread"))
        assertThrows<LanyardException.NotFound> { byron.groups.group(family.id) }
        assertThrows<LanyardException.OwnerMustTransfer> { ada.groups.leave(family.id) }
    }

    @Test
    fun `Charles merges his two accounts, proving both, and his laptop is told the account moved`() = story {
        val phone = client()
        phone.signInWithApple(apple("charles-apple"))
        phone.collection<Reminder>("reminders").put("c1", Reminder("Engine notes"))
        val laptop = client()
        val laptopEvents = events(laptop)
        laptop.signInWithGoogle(google("charles-google"))
        laptop.collection<Reminder>("reminders").put("c2", Reminder("Lecture on Tuesday"))
        val proving: suspend (String) -> ProviderCredential = { nonce ->
            ProviderCredential.google(google("charles-google", nonce = nonce), nonce)
        }
        val dryRun = phone.merge(dryRun = true, proving = proving)
        assertTrue(dryRun.dryRun)
        assertEquals(1, dryRun.recordsMoved)
        val result = phone.merge(proving = proving)
        assertEquals(phone.currentUser!!.id, result.into)
        assertEquals(listOf("google"), result.identitiesMoved)
        assertEquals(listOf(Provider.Apple to true, Provider.Google to false), phone.me().linkedProviders.map { it.provider to it.isPrimary })
        assertEquals(setOf("Engine notes", "Lecture on Tuesday"), phone.collection<Reminder>("reminders").pullChanges().mapNotNull { it.value?.title }.toSet())

        val moved = assertThrows<LanyardException.AccountMerged> { laptop.me() }
        assertEquals(result.into, moved.into)
        assertEquals(AuthState.SignedOut, laptop.authState.value)
        assertTrue(laptopEvents.waitFor { it == AuthEvent.SignedOut(SignOutReason.AccountMerged(result.into)) })
    }

    @Test
    fun `a merge that keeps the other account adopts its session, and the absorbed account is gone`() = story {
        val phone = client()
        val events = events(phone)
        val absorbed = phone.signInWithApple(apple("keeps-other-apple")).user
        phone.collection<Reminder>("reminders").put("a1", Reminder("From the Apple account"))
        val survivor = client().signInWithGoogle(google("keeps-other-google")).user

        val result = phone.merge(keep = MergeKeep.OTHER) { nonce -> ProviderCredential.google(google("keeps-other-google", nonce = nonce), nonce) }
        assertEquals(survivor.id, result.into)
        assertEquals(absorbed.id, result.from)
        assertEquals(survivor.id, phone.currentUser!!.id)
        assertTrue(events.waitFor { it is AuthEvent.SignedIn && it.user.id == survivor.id })
        assertEquals(setOf(Provider.Apple, Provider.Google), phone.me().linkedProviders.map { it.provider }.toSet())
        assertEquals("From the Apple account", phone.collection<Reminder>("reminders").get("a1")!!.value.title)
        val same = assertThrows<LanyardException.MergeConflict> {
            phone.merge { nonce -> ProviderCredential.google(google("keeps-other-google", nonce = nonce), nonce) }
        }
        assertEquals("same_account", same.reason)
    }

    @Test
    fun `Grace, with only Apple, cannot unlink it, then deletes her account and is signed out`() = story {
        val grace = client()
        val events = events(grace)
        grace.signInWithApple(apple("grace"))
        val refused = assertThrows<LanyardException.CannotUnlinkOnlyProvider> { grace.unlink(Provider.Apple) }
        assertEquals("You can't remove your only way to sign in.", refused.message)
        grace.deleteAccount()
        assertTrue(events.waitFor { it == AuthEvent.SignedOut(SignOutReason.AccountDeleted) })
        assertNull(grace.currentUser)
        assertEquals(AuthState.SignedOut, grace.authState.first())
        // The account is gone: its Apple ID makes a new one.
        assertTrue(client().signInWithApple(apple("grace")).isNewUser)
    }

    @Test
    fun `Lin signs in on a laptop by email and confirms the link on her phone, the phone's browser gets no session`() = story {
        val laptop = client()
        val address = "lin-$run@example.com"
        val flow = laptop.email.start(address)
        assertTrue(flow.match in 10..99)
        val signedIn = async { flow.awaitConfirmation(timeoutSeconds = 60) }
        val mail = server.mail(address)
        assertEquals(6, mail.code.length)
        val status = server.confirmLink(mail.link!!, flow.match)
        assertTrue(status in 200..399, "the link's page answered $status")
        val lin = signedIn.await()
        assertTrue(lin.isNewUser)
        assertEquals(address, lin.user.email)
        assertEquals(listOf(Provider.Email), laptop.currentUser!!.linkedProviders.map { it.provider })
        assertNotEquals(null, laptop.accessToken())
    }
}
