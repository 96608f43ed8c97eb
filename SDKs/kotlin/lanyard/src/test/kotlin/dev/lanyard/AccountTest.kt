package dev.lanyard

import dev.lanyard.support.ServerTest
import dev.lanyard.support.SoftwareAuthenticator
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import dev.lanyard.support.assertThrows

/** Sign-in methods through the Kotlin SDK: linking and its conflicts, unlinking with re-authentication, email, passkeys, providers. */
class AccountTest : ServerTest(mapOf("LANYARD_RATE_LIMITS" to "off", "LANYARD_REAUTH_WINDOW" to "2")) {
    @Test
    fun `a nonce must match, the raw nonce passes, another is refused as nonce_mismatch`() = story {
        val nonce = Nonce.generate()
        val token = google("nonce", nonce = nonce.raw)
        val refused = assertThrows<LanyardException.InvalidProviderToken> { client().signInWithGoogle(token, Nonce.generate().raw) }
        assertEquals("nonce_mismatch", refused.reason)
        assertEquals("INVALID_PROVIDER_TOKEN", refused.code)
        assertTrue(client().signInWithGoogle(token, nonce.raw).isNewUser)
        val missing = assertThrows<LanyardException.InvalidProviderToken> { client().signInWithApple(apple("nonce", nonce = nonce.hashed)) }
        assertEquals("nonce_missing", missing.reason)
    }

    @Test
    fun `linking never signs out, a Google account of another person conflicts, typed`() = story {
        val ada = client()
        val events = events(ada)
        ada.signInWithApple(apple("linker"))
        val bob = client()
        bob.signInWithGoogle(google("bobs-google"))

        val conflict = assertThrows<LanyardException.ProviderConflict> { ada.link(ProviderCredential.google(google("bobs-google"))) }
        assertEquals(ProviderConflictReason.IDENTITY_IN_USE, conflict.reason)
        assertEquals(listOf(Provider.Apple), ada.currentUser!!.linkedProviders.map { it.provider })

        ada.link(ProviderCredential.google(google("adas-google")))
        assertTrue(events.waitFor { it == AuthEvent.Linked(Provider.Google) })
        val again = assertThrows<LanyardException.ProviderConflict> { ada.link(ProviderCredential.google(google("adas-google"))) }
        assertEquals(ProviderConflictReason.ALREADY_LINKED, again.reason)
        val second = assertThrows<LanyardException.ProviderConflict> { ada.link(ProviderCredential.google(google("adas-other-google"))) }
        assertEquals(ProviderConflictReason.PROVIDER_ALREADY_LINKED, second.reason)
        assertFalse(events.events.any { it is AuthEvent.SignedOut })
    }

    @Test
    fun `unlinking needs a recent sign-in, refused, re-authenticated, then done`() = story {
        val ada = client()
        ada.signInWithApple(apple("unlinker"))
        ada.link(ProviderCredential.google(google("unlinker-google")))
        kotlinx.coroutines.delay(2_500)
        assertThrows<LanyardException.ReauthenticationRequired> { ada.unlink(Provider.Google) }
        val someoneElse = assertThrows<LanyardException.IdentityNotOnAccount> { ada.reauthenticate(ProviderCredential.apple(apple("stranger-for-reauth").also { client().signInWithApple(it) })) }
        assertEquals("FORBIDDEN", someoneElse.code)
        ada.reauthenticate(ProviderCredential.apple(apple("unlinker")))
        assertEquals(listOf(Provider.Apple), ada.unlink(Provider.Google).linkedProviders.map { it.provider })
        assertThrows<LanyardException.ProviderNotLinked> { ada.unlink(Provider.Google) }
        // The Google account is free again: it makes a new account.
        assertTrue(client().signInWithGoogle(google("unlinker-google")).isNewUser)
    }

    @Test
    fun `email codes, a wrong one says how many tries are left, the right one signs in, and an address is linked by code`() = story {
        val address = "code-$run@example.com"
        val phone = client()
        val flow = phone.email.start(address)
        val wrong = assertThrows<LanyardException.InvalidCode> { flow.verify("000000".takeIf { it != server.mail(address).code } ?: "111111") }
        assertEquals("wrong_code", wrong.reason)
        assertEquals(4, wrong.attemptsLeft)
        val result = flow.verify(server.mail(address).code)
        assertTrue(result.isNewUser)
        assertEquals(address, result.user.email)
        val used = assertThrows<LanyardException.InvalidCode> { flow.verify(server.mail(address).code) }
        assertEquals("used", used.reason)

        val google = client()
        google.signInWithGoogle(google("wants-email"))
        val linkAddress = "link-$run@example.com"
        val linking = google.email.link(linkAddress)
        assertEquals(EmailIntent.LINK, linking.intent)
        linking.verify(server.mail(linkAddress).code)
        assertEquals(listOf(Provider.Google, Provider.Email), google.currentUser!!.linkedProviders.map { it.provider })
        val notYet = assertThrows<LanyardException.EmailNotConfirmed> { client().email.start("late-$run@example.com").awaitConfirmation(timeoutSeconds = 1) }
        assertEquals("EMAIL_NOT_CONFIRMED", notYet.code)
    }

    @Test
    fun `a guest signing in by email keeps its data`() = story {
        val phone = client()
        val guest = phone.signInAnonymously()
        phone.collection<Reminder>("reminders").put("g", Reminder("from the guest"))
        val address = "guest-$run@example.com"
        val flow = phone.email.start(address)
        val result = flow.verify(server.mail(address).code)
        assertEquals(guest.user.id, result.user.id)
        assertEquals("from the guest", phone.collection<Reminder>("reminders").get("g")!!.value.title)
    }

    @Test
    fun `passkeys, a guest registers one, another device signs in with it, it is listed, renamed, and refusals are typed`() = story {
        val authenticator = SoftwareAuthenticator(server.passkeyOrigin)
        val first = client()
        val guest = first.signInAnonymously()
        val options = first.passkeys.registrationOptions()
        assertTrue(options.contains("\"challenge\"") && options.contains("\"rp\""), options)
        val passkey = first.passkeys.register("Pixel", authenticator)
        assertEquals("Pixel", passkey.name)
        assertEquals(guest.user.id, first.currentUser!!.id)
        assertFalse(first.currentUser!!.isAnonymous)
        assertEquals(listOf(Provider.Passkey), first.currentUser!!.linkedProviders.map { it.provider })

        val second = client()
        val signedIn = second.passkeys.signIn(authenticator)
        assertEquals(guest.user.id, signedIn.user.id)
        val listed = second.passkeys.list()
        assertEquals(listOf("Pixel"), listed.map { it.name })
        assertEquals("Old Pixel", second.passkeys.rename(listed.single().id, "Old Pixel").name)
        assertEquals(guest.user.id, second.passkeys.reauthenticate(authenticator).id)
        assertThrows<LanyardException.CannotUnlinkOnlyProvider> { second.passkeys.remove(listed.single().id) }

        authenticator.breakSignature = true
        val refused = assertThrows<LanyardException.InvalidPasskey> { client().passkeys.signIn(authenticator) }
        assertEquals("signature", refused.reason)
        // A passkey made for options but never registered is on no account.
        val stranger = client()
        stranger.signInAnonymously()
        val unregistered = SoftwareAuthenticator(server.passkeyOrigin).also { it.create(stranger.passkeys.registrationOptions()) }
        val unknown = assertThrows<LanyardException.InvalidPasskey> { client().passkeys.signIn(unregistered) }
        assertEquals("unknown_credential", unknown.reason)
    }

    @Test
    fun `the providers the server offers come in its order, and a sign-in with one it does not offer is refused`() = story {
        val offered = client().providers().map { it.name }
        assertTrue(offered.containsAll(listOf(Provider.Apple, Provider.Google)), offered.toString())
        val refused = assertThrows<LanyardException.UnsupportedProvider> { client().signIn(Provider("acme"), "not-a-token") }
        assertEquals("UNSUPPORTED_PROVIDER", refused.code)
    }
}
