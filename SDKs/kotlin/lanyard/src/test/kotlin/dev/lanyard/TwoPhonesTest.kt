package dev.lanyard

import dev.lanyard.support.ServerTest
import org.junit.jupiter.api.Test

/**
 * The seeds' cross-device story with both SDKs at once: the Swift SDK's iPhone (`lanyard-demo iphone`, Apple, Google
 * linked) and this SDK's Android phone (Google) on one account, a note each way, live ([TwoPhones]).
 */
class TwoPhonesTest : ServerTest() {
    @Test
    fun `the iPhone signs in with Apple and links Google, the Android phone signs in with Google, and notes go both ways live`() = story(120) {
        TwoPhones.tell(server) { println(it) }
    }
}
