// Android source set. NOT COMPILED IN THIS REPOSITORY: android.jar and androidx are not on its build machine.
// Written against the documented APIs of androidx.browser 1.8 (CustomTabsIntent), and built by
// SDKs/kotlin/lanyard-android's Gradle build in an app's own project. The core's authorizationUrl and completeSignIn,
// which this file only opens and hands over, are compiled and tested here (RedirectSignInTest).
package dev.lanyard.android

import android.content.Context
import android.content.Intent
import android.net.Uri
import androidx.browser.customtabs.CustomTabsIntent
import dev.lanyard.LanyardClient
import dev.lanyard.Provider
import dev.lanyard.RedirectIntent
import dev.lanyard.SignInResult

/**
 * Redirect sign-in through Custom Tabs (reference section 23): Sign in with Apple on Android, a company's Microsoft
 * tenant, any provider the server offers by redirect. [open] shows the provider's page in a Custom Tab over the app;
 * the provider comes back through Lanyard to [redirectUri], which the system hands to the activity whose intent filter
 * declares it; that activity passes the intent to [complete].
 *
 * [redirectUri] is the app's own scheme (`com.example.app:/callback`, reverse-DNS so no other app claims it) or a
 * verified App Link (`https://app.example.com/callback`, with `assetlinks.json`). List it, exactly, in the server's
 * `LANYARD_REDIRECT_URIS`. The activity's intent filter in `AndroidManifest.xml`:
 *
 * ```xml
 * <activity android:name=".SignInActivity" android:exported="true" android:launchMode="singleTop">
 *     <intent-filter>
 *         <action android:name="android.intent.action.VIEW" />
 *         <category android:name="android.intent.category.DEFAULT" />
 *         <category android:name="android.intent.category.BROWSABLE" />
 *         <data android:scheme="com.example.app" android:path="/callback" />
 *     </intent-filter>
 * </activity>
 * ```
 *
 * `singleTop` brings the answer to the running activity's `onNewIntent`; when the system ended the app while the
 * Custom Tab was in front, it arrives in a new process's `onCreate` instead, and still finishes: the flow's verifier
 * waits in the client's session store (`KeystoreSessionStore`), not in memory. Hand over the intent from both:
 *
 * ```kotlin
 * class SignInActivity : ComponentActivity() {
 *     private val redirect by lazy { CustomTabsRedirectSignIn(app.lanyard, "com.example.app:/callback") }
 *
 *     override fun onCreate(savedInstanceState: Bundle?) {
 *         super.onCreate(savedInstanceState)
 *         appleButton.setOnClickListener { lifecycleScope.launch { redirect.open(this@SignInActivity, Provider.Apple) } }
 *         if (savedInstanceState == null) handle(intent)
 *     }
 *
 *     override fun onNewIntent(intent: Intent) {
 *         super.onNewIntent(intent)
 *         handle(intent)
 *     }
 *
 *     private fun handle(intent: Intent) = lifecycleScope.launch {
 *         try {
 *             redirect.complete(intent)?.let { showHome(it.user) }
 *         } catch (e: LanyardException.SignInCancelled) {
 *             // the person declined at the provider: stay on the sign-in screen
 *         } catch (e: LanyardException) {
 *             showError(e.message)
 *         }
 *     }
 * }
 * ```
 *
 * A person who closes the Custom Tab without finishing sends no answer at all: nothing to handle, and the flow
 * left in the store is dropped after 15 minutes by the next [open].
 *
 * @param client the app's one [LanyardClient].
 * @param redirectUri the address the browser comes back to, as the intent filter declares it.
 */
class CustomTabsRedirectSignIn(private val client: LanyardClient, private val redirectUri: String) {
    /**
     * Opens [provider]'s sign-in page in a Custom Tab ([RedirectIntent.LINK]: adds it to the signed-in account).
     *
     * ```kotlin
     * lifecycleScope.launch { redirect.open(activity, Provider.Microsoft) }
     * ```
     */
    suspend fun open(context: Context, provider: Provider, intent: RedirectIntent = RedirectIntent.SIGNIN) {
        val url = client.authorizationUrl(provider, redirectUri, intent)
        CustomTabsIntent.Builder().setShowTitle(true).build().launchUrl(context, Uri.parse(url))
    }

    /**
     * Finishes the sign-in (or link) the intent answers; null when the intent is not an answer to [redirectUri] (the
     * activity was opened another way).
     *
     * ```kotlin
     * redirect.complete(intent)?.let { result -> showHome(result.user) }
     * ```
     */
    suspend fun complete(intent: Intent): SignInResult? {
        val data = intent.data?.toString() ?: return null
        if (intent.action != Intent.ACTION_VIEW || data.substringBefore('?') != redirectUri || '?' !in data) return null
        return client.completeSignIn(data)
    }
}
