"""The web SDK in a real browser (Debian's Chromium over WebDriver): what only a browser shows.

Starts `lanyard dev` with a short access-token lifetime, serves a small app page from another origin
(http://localhost:PORT, listed in LANYARD_CORS_ORIGINS and LANYARD_WEBAUTHN_ORIGINS) that imports the SDK from the
server's own `GET /sdk/lanyard.js`, and drives it:
- five tabs of one browser share one session for a couple of minutes while their tokens expire again and again, each
  calling the API, writing records and watching live changes, each with an auth callback that awaits SDK calls; one
  tab is frozen (Chrome's page lifecycle) past its token's expiry and resumed. Then: zero `session.reuse_detected` in
  the server's audit, zero sign-outs, every callback finished (no deadlock), one session on the server;
- sign-out in one tab signs every tab out, sign-in in another signs every tab in;
- email: a code from the dev mailbox, and a link confirmed in another tab while the app waits;
- a passkey made by Chromium's virtual authenticator signs the same account in again;
- a tab frozen while it holds the SDK's refresh lock holds nobody up for longer than the lock timeout.
Run: python3 Tests/Web/test_web_sdk.py (LANYARD_BINARY=… for a binary other than .build/debug/lanyard)
"""
import json
import os
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import httpx
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
from lanyard_dev import LanyardDev  # noqa: E402

MODULE_FILE = os.path.join(ROOT, "Sources", "LanyardServer", "Resources", "sdk", "lanyard.js")
ADMIN_KEY = "web-sdk-browser-test-admin-key-0123456789abcdef"
TTL = 8            # seconds an access token lives
SOAK = int(os.environ.get("WEB_SDK_SOAK", "100"))  # seconds five tabs run
FREEZE = 3 * TTL   # seconds one tab stays frozen

# The app: the server and the module's address in the fragment. `window.app` holds what the test reads.
PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>web sdk</title></head>
<body><pre id="status">loading</pre>
<script type="module">
const parameters = new URLSearchParams(location.hash.slice(1));
const sdk = await import(parameters.get("module"));
const lanyard = sdk.createClient({ url: parameters.get("server") });
const app = window.app = { sdk, lanyard, events: [], callbacks: { started: 0, finished: 0, failures: [] },
  calls: 0, failures: [], changes: 0, live: false, stopped: false };
// Every event's callback awaits the SDK: a lock held across callbacks would hang these forever.
lanyard.onAuthStateChange(async (event, session, details) => {
  app.events.push({ event, user: session?.user?.id ?? null, details, at: Date.now() });
  app.callbacks.started += 1;
  try {
    const current = await lanyard.getSession();
    if (current) {
      await lanyard.getAccessToken();
      await lanyard.me();
    }
  } catch (error) {
    app.callbacks.failures.push(`${event}: ${error.code ?? error}`);
  } finally {
    app.callbacks.finished += 1;
  }
});
// A tab's work: read, write, watch; every failure kept for the test.
app.work = async (seconds, tab) => {
  app.changes = 0;
  app.stopWatching = lanyard.changes.subscribe(() => { app.changes += 1; }, { onLive: (live) => { app.live = live; } });
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until && !app.stopped) {
    try {
      await lanyard.me();
      await lanyard.collection("notes").put(`tab-${tab}`, { at: Date.now() });
      app.calls += 1;
    } catch (error) {
      app.failures.push({ code: error.code ?? String(error), at: Date.now() });
    }
    await new Promise((done) => setTimeout(done, 300 + Math.random() * 700));
  }
};
app.run = (name, work) => { app[name] = { done: false }; work().then(
  (value) => { app[name] = { done: true, value }; },
  (error) => { app[name] = { done: true, error: error.code ?? String(error), details: error.details ?? null }; }); };
document.getElementById("status").textContent = "ready";
</script></body></html>
"""


class PageHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *arguments):
        pass


STATE = {}


def setUpModule():
    pages = ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    # localhost: in dev mode passkeys belong to `localhost`, and the page's origin must be within it.
    origin = f"http://localhost:{pages.server_address[1]}"
    lanyard = LanyardDev(LANYARD_CORS_ORIGINS=origin, LANYARD_WEBAUTHN_ORIGINS=origin, LANYARD_ACCESS_TOKEN_TTL=str(TTL),
                         LANYARD_ADMIN_KEY=ADMIN_KEY, LANYARD_RATE_LIMITS="off",
                         # A second mail to one address at once (the code, then the link); the other mail limits stay.
                         LANYARD_EMAIL_ADDRESS_INTERVAL="0")
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    browser.set_script_timeout(60)
    STATE.update(lanyard=lanyard, browser=browser, pages=pages, origin=origin,
                 url=f"{origin}/app.html#server={quote(lanyard.base)}&module={quote(lanyard.base + '/sdk/lanyard.js')}")


def tearDownModule():
    STATE["browser"].quit()
    STATE["lanyard"].stop()
    STATE["pages"].shutdown()


def open_tabs(count):
    """`count` tabs of the app, the first in the current window; their window handles."""
    browser = STATE["browser"]
    handles = []
    for index in range(count):
        if index > 0 or handles:
            browser.switch_to.new_window("tab")
        browser.get(STATE["url"])
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "status").text == "ready",
                                         "the app page loaded the SDK from the server")
        handles.append(browser.current_window_handle)
    return handles


def in_tab(handle, script, *arguments):
    browser = STATE["browser"]
    browser.switch_to.window(handle)
    return browser.execute_script(script, *arguments)


def await_in_tab(handle, name, script, *arguments, timeout=60):
    """Runs `script` (an async function body's expression) in the tab and waits for its outcome."""
    in_tab(handle, f"window.app.run({json.dumps(name)}, async () => {{ {script} }})", *arguments)
    browser = STATE["browser"]
    WebDriverWait(browser, timeout).until(lambda b: b.execute_script(f"return window.app[{json.dumps(name)}].done"),
                                          f"{name} to finish")
    return browser.execute_script(f"return window.app[{json.dumps(name)}]")


def reuse_events():
    answer = httpx.get(f"{STATE['lanyard'].base}/v1/admin/audit", params={"type": "session.reuse_detected", "limit": 100},
                       headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    answer.raise_for_status()
    return answer.json()["events"]


class WebSDKBrowserTests(unittest.TestCase):
    def test_1_the_server_serves_the_module_to_any_origin(self):
        answer = httpx.get(f"{STATE['lanyard'].base}/sdk/lanyard.js", headers={"Origin": STATE["origin"]})
        self.assertEqual(answer.status_code, 200)
        with open(MODULE_FILE, "rb") as module:
            self.assertEqual(answer.content, module.read(), "the served module is the repository's one copy")
        self.assertTrue(answer.headers["content-type"].startswith("text/javascript"))
        self.assertEqual(answer.headers["access-control-allow-origin"], "*")
        self.assertIn("cache-control", answer.headers)
        etag = answer.headers["etag"]
        again = httpx.get(f"{STATE['lanyard'].base}/sdk/lanyard.js", headers={"If-None-Match": etag})
        self.assertEqual(again.status_code, 304)

    def test_2_five_tabs_for_minutes_one_frozen_nobody_signed_out(self):
        lanyard = STATE["lanyard"]
        tabs = open_tabs(5)
        token = lanyard.id_token("google", "web-five-tabs", email="five@example.com")
        signed_in = await_in_tab(tabs[0], "signIn", "return (await window.app.lanyard.signInWithGoogle({ credential: arguments[0] })).user.id", token)
        self.assertNotIn("error", signed_in)
        user = signed_in["value"]
        for handle in tabs:
            WebDriverWait(STATE["browser"], 10).until(lambda b: in_tab(handle, "return window.app.lanyard.user?.id") == user,
                                                      "every tab heard the sign-in")
        started = time.monotonic()
        for index, handle in enumerate(tabs):
            in_tab(handle, f"window.app.work({SOAK}, {index})")
        # One tab frozen a while in, for longer than its token lives; then resumed.
        time.sleep(15)
        frozen = tabs[2]
        STATE["browser"].switch_to.window(frozen)
        before = STATE["browser"].execute_script("return window.app.calls")
        STATE["browser"].execute_cdp_cmd("Page.setWebLifecycleState", {"state": "frozen"})
        STATE["browser"].switch_to.window(tabs[0])
        time.sleep(FREEZE)
        STATE["browser"].switch_to.window(frozen)
        STATE["browser"].execute_cdp_cmd("Page.setWebLifecycleState", {"state": "active"})
        resumed_at = STATE["browser"].execute_script("return Date.now()")
        # The others keep working meanwhile; visit each so every tab spends time in front.
        while time.monotonic() - started < SOAK + 5:
            for handle in tabs:
                in_tab(handle, "return window.app.calls")
                time.sleep(1)
        outcome = [in_tab(handle, "const a = window.app; a.stopped = true; return {events: a.events, callbacks: a.callbacks, "
                                  "calls: a.calls, failures: a.failures, changes: a.changes, user: a.lanyard.user?.id ?? null}")
                   for handle in tabs]
        self.assertEqual(reuse_events(), [], "no refresh token was presented after its rotation")
        for index, tab in enumerate(outcome):
            self.assertEqual(tab["user"], user, f"tab {index} is still signed in")
            self.assertFalse([e for e in tab["events"] if e["event"] == "SIGNED_OUT"], f"tab {index} was signed out: {tab['events']}")
            self.assertEqual(tab["failures"], [], f"tab {index}'s calls failed")
            self.assertGreater(tab["calls"], 20, f"tab {index} worked")
            self.assertGreater(tab["changes"], 0, f"tab {index} saw live changes")
            self.assertEqual(tab["callbacks"]["started"], tab["callbacks"]["finished"], f"tab {index}'s callbacks all finished")
            self.assertEqual(tab["callbacks"]["failures"], [], f"tab {index}'s callbacks' calls failed")
            self.assertTrue(any(e["event"] == "TOKEN_REFRESHED" for e in tab["events"]), f"tab {index} heard refreshes")
        self.assertGreater(outcome[2]["calls"], before + 10, "the frozen tab worked again after it resumed")
        refreshed_after_resume = [e for e in outcome[2]["events"] if e["at"] > resumed_at and e["event"] == "TOKEN_REFRESHED"]
        self.assertTrue(refreshed_after_resume, "the resumed tab took the session the others renewed")
        sessions = await_in_tab(tabs[1], "sessions", "return await window.app.lanyard.sessions.list()")
        self.assertEqual(len(sessions["value"]), 1, "five tabs, one session")

        # Sign-out in one tab is every tab's; sign-in in another likewise.
        outcome = await_in_tab(tabs[3], "signOut", "await window.app.lanyard.signOut()")
        self.assertNotIn("error", outcome)
        for index, handle in enumerate(tabs):
            try:
                WebDriverWait(STATE["browser"], 10).until(
                    lambda b: in_tab(handle, "return window.app.events.some((e) => e.event === 'SIGNED_OUT' && e.details.reason === 'user_requested')"))
            except Exception:
                self.fail(f"tab {index} did not hear the sign-out: {in_tab(handle, 'return [window.app.events.slice(-5), window.app.lanyard.session?.user?.id]')}")
        other = lanyard.id_token("apple", "web-next")
        signed_in = await_in_tab(tabs[4], "signIn", "return (await window.app.lanyard.signInWithApple({ idToken: arguments[0] })).user.id", other)
        for handle in tabs:
            WebDriverWait(STATE["browser"], 10).until(lambda b: in_tab(handle, "return window.app.lanyard.user?.id") == signed_in["value"],
                                                      "every tab heard the sign-in")
            finished, failures = in_tab(handle, "return [window.app.callbacks.started === window.app.callbacks.finished, "
                                                "window.app.callbacks.failures]")
            self.assertTrue(finished, "every callback finished")
            # A callback that began before the sign-out may find the session gone: that, and nothing else.
            self.assertEqual([f for f in failures if not f.endswith(": NOT_SIGNED_IN")], [])
        self.assertEqual(reuse_events(), [])
        for handle in tabs[1:]:
            in_tab(handle, "window.close()")
        STATE["browser"].switch_to.window(tabs[0])
        await_in_tab(tabs[0], "out", "await window.app.lanyard.signOut()")

    def test_3_email_code_and_link_then_a_passkey(self):
        lanyard = STATE["lanyard"]
        browser = STATE["browser"]
        tab = browser.current_window_handle
        browser.get(STATE["url"])
        browser.refresh()
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "status").text == "ready")
        address = "web-sdk@example.com"
        started = await_in_tab(tab, "start", "const flow = await window.app.lanyard.email.start(arguments[0]); window.app.flow = flow; return flow.match", address)
        self.assertIsInstance(started["value"], int)
        mail = httpx.get(f"{lanyard.base}/_emulator/mail", params={"to": address}).json()[0]
        wrong = await_in_tab(tab, "wrong", "return await window.app.flow.verify(arguments[0])", "000000" if mail["code"] != "000000" else "111111")
        self.assertEqual((wrong["error"], wrong["details"]["attempts_left"]), ("INVALID_CODE", 4))
        verified = await_in_tab(tab, "verify", "const r = await window.app.flow.verify(arguments[0]); return r.user", mail["code"])
        user = verified["value"]
        self.assertFalse(user["is_anonymous"])
        await_in_tab(tab, "out", "await window.app.lanyard.signOut()")

        # The link: the app waits; the person opens the mail's link in another tab and enters the number.
        started = await_in_tab(tab, "start2", "const flow = await window.app.lanyard.email.start(arguments[0]); "
                                              "window.app.run('confirmed', () => flow.awaitConfirmation()); return flow.match", address)
        self.assertNotIn("error", started)
        match = started["value"]
        mails = httpx.get(f"{lanyard.base}/_emulator/mail", params={"to": address}).json()
        browser.switch_to.new_window("tab")
        browser.get(mails[0]["link"])
        fields = browser.find_elements(By.CSS_SELECTOR, "input[name=match]")
        if fields:
            fields[0].send_keys(str(match))
            fields[0].submit()
        else:
            browser.find_element(By.CSS_SELECTOR, f"button[name=match][value='{match}']").click()
        browser.close()
        browser.switch_to.window(tab)
        WebDriverWait(browser, 40).until(lambda b: b.execute_script("return window.app.confirmed.done"), "the link to be confirmed")
        confirmed = browser.execute_script("return window.app.confirmed")
        self.assertNotIn("error", confirmed)
        self.assertEqual(browser.execute_script("return window.app.lanyard.user.id"), user["id"])

        # A passkey for this account, made by the virtual authenticator; signed out, the passkey signs the same person in.
        authenticator = VirtualAuthenticatorOptions()
        authenticator.protocol = Protocol.CTAP2
        authenticator.transport = Transport.INTERNAL
        authenticator.has_resident_key = True
        authenticator.has_user_verification = True
        authenticator.is_user_verified = True
        browser.add_virtual_authenticator(authenticator)
        registered = await_in_tab(tab, "register", "return await window.app.lanyard.passkeys.register({ name: 'Chromium' })")
        self.assertNotIn("error", registered)
        self.assertEqual(registered["value"]["name"], "Chromium")
        self.assertIn("passkey", browser.execute_script("return window.app.lanyard.session.linked_providers"))
        await_in_tab(tab, "out", "await window.app.lanyard.signOut()")
        self.assertIsNone(browser.execute_script("return window.app.lanyard.session"))
        signed_in = await_in_tab(tab, "passkey", "return (await window.app.lanyard.passkeys.signIn()).user.id")
        self.assertNotIn("error", signed_in)
        self.assertEqual(signed_in["value"], user["id"])
        listed = await_in_tab(tab, "list", "return (await window.app.lanyard.passkeys.list()).map((p) => [p.name, !!p.last_used_at])")
        self.assertEqual(listed["value"], [["Chromium", True]])
        self.assertEqual(reuse_events(), [])

    def test_4_a_tab_frozen_holding_the_refresh_lock_blocks_nobody(self):
        lanyard = STATE["lanyard"]
        browser = STATE["browser"]
        holder, other = browser.current_window_handle, None
        browser.get(STATE["url"])
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "status").text == "ready")
        # The tab takes the SDK's refresh lock and never lets go, then freezes (as a tab frozen mid-refresh would).
        in_tab(holder, "navigator.locks.request(`lanyard:${arguments[0]}:refresh`, () => new Promise(() => {}))", lanyard.base)
        self.assertEqual(in_tab(holder, "return navigator.locks.query().then((s) => s.held.length)"), 1)
        browser.switch_to.new_window("tab")
        other = browser.current_window_handle
        browser.get(STATE["url"])
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "status").text == "ready")
        browser.switch_to.window(holder)
        browser.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "frozen"})
        token = lanyard.id_token("google", "web-frozen-lock")
        outcome = await_in_tab(other, "locked", """
            const started = Date.now();
            const { user } = await window.app.lanyard.signInWithGoogle({ credential: arguments[0] });
            const waited = Date.now() - started;
            const renewed = await window.app.lanyard.refreshSession();
            return { user: user.id, waited, renewed: renewed.user.id };""", token, timeout=30)
        self.assertNotIn("error", outcome)
        self.assertGreaterEqual(outcome["value"]["waited"], 4500, "it waited the lock timeout for the frozen tab")
        self.assertEqual(outcome["value"]["renewed"], outcome["value"]["user"])
        browser.switch_to.window(holder)
        browser.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "active"})
        WebDriverWait(browser, 10).until(lambda b: b.execute_script("return window.app.lanyard.user?.id") == outcome["value"]["user"],
                                         "the resumed tab holds the session the other signed in")
        self.assertEqual(reuse_events(), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
