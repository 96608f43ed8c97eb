"""Redirect sign-in in a real browser (Debian's Chromium over WebDriver), as a person lives it (reference section 23).

A web app on another origin (http://localhost:PORT, served here, listed in LANYARD_CORS_ORIGINS) imports the SDK from
`lanyard dev`'s own `GET /sdk/lanyard.js`. Its buttons call `signInWithRedirect`; the browser goes through Lanyard's
`authorize` to the emulator's sign-in page, where the test types a user and presses Continue, as a person would:
- Apple answers by an auto-submitted `form_post` to Lanyard's callback (the cross-site POST that drops SameSite
  cookies elsewhere: Lanyard keeps the flow in a row), which sends the browser back to the app's page; there
  `handleRedirect()` signs in, and the page shows the account with the name Apple sent once;
- Google answers with a 302: a guest on the page signs in by redirect and keeps its id and its note (upgraded in
  place); another tab of the app hears the sign-in.
Each time the code leaves the address bar (a reload presents nothing again) and no verifier stays in the storage.
Run: python3 Tests/Web/test_redirect_sign_in.py (LANYARD_BINARY=… for a binary other than .build/debug/lanyard)
"""
import json
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from lanyard_dev import LanyardDev  # noqa: E402

# The app. The server's address is written into the page: the provider sends the browser back to this page's
# address without its fragment, so nothing the app needs may live there.
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>redirect app</title></head>
<body><h1>The app</h1>
<p id="account">loading</p><p id="note"></p><p id="outcome"></p><pre id="status">loading</pre>
<button id="apple">Sign in with Apple</button> <button id="google">Sign in with Google</button>
<script type="module">
const server = __SERVER__;
const { createClient } = await import(server + "/sdk/lanyard.js");
const lanyard = createClient({ url: server });
const app = window.app = { lanyard, events: [] };
async function render() {
  const user = lanyard.user;
  document.getElementById("account").textContent = !user ? "Signed out"
    : user.is_anonymous ? `Guest ${user.id}` : `${user.display_name ?? "(no name)"} <${user.email ?? ""}> ${user.id}`;
  const note = user ? await lanyard.collection("notes").get("first").catch(() => null) : null;
  document.getElementById("note").textContent = note ? note.data.text : "";
}
lanyard.onAuthStateChange((event) => { app.events.push(event); render(); });
document.getElementById("apple").onclick = () => lanyard.signInWithRedirect("apple");
document.getElementById("google").onclick = () => lanyard.signInWithRedirect("google");
app.run = (name, work) => { app[name] = { done: false }; work().then(
  (value) => { app[name] = { done: true, value }; },
  (error) => { app[name] = { done: true, error: error.code ?? String(error) }; }); };
try {
  const result = await lanyard.handleRedirect();
  app.outcome = result ? { user: result.user.id, isNewUser: result.isNewUser, mergedFrom: result.mergedFrom } : null;
  document.getElementById("outcome").textContent = result ? "Signed in by redirect" : "";
} catch (error) {
  app.outcome = { error: error.code, reason: error.details?.reason ?? null };
  document.getElementById("outcome").textContent = error.message;
}
await render();
document.getElementById("status").textContent = "ready";
</script></body></html>
"""

STATE = {}


class AppPage(BaseHTTPRequestHandler):
    def do_GET(self):
        body = PAGE.replace("__SERVER__", json.dumps(STATE["lanyard"].base)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


def setUpModule():
    pages = ThreadingHTTPServer(("127.0.0.1", 0), AppPage)
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    # Another origin than Lanyard's (http://127.0.0.1:PORT); `lanyard dev` takes any localhost page as a redirect URI.
    origin = f"http://localhost:{pages.server_address[1]}"
    STATE["lanyard"] = LanyardDev(LANYARD_CORS_ORIGINS=origin, LANYARD_RATE_LIMITS="off")
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    browser.set_script_timeout(30)
    STATE.update(browser=browser, pages=pages, origin=origin, app=f"{origin}/app")


def tearDownModule():
    STATE["browser"].quit()
    STATE["lanyard"].stop()
    STATE["pages"].shutdown()


def open_app(url=None):
    browser = STATE["browser"]
    browser.get(url or STATE["app"])
    wait_for_app()


def wait_for_app():
    WebDriverWait(STATE["browser"], 30).until(lambda b: b.find_element(By.ID, "status").text == "ready",
                                              "the app page loaded the SDK from the server and handled its address")


def run(name, script, *arguments):
    """Runs `script` (an async function body) in the page and waits for its outcome."""
    browser = STATE["browser"]
    browser.execute_script(f"window.app.run({json.dumps(name)}, async () => {{ {script} }})", *arguments)
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(f"return window.app[{json.dumps(name)}].done"), name)
    outcome = browser.execute_script(f"return window.app[{json.dumps(name)}]")
    if "error" in outcome:
        raise AssertionError(f"{name}: {outcome['error']}")
    return outcome.get("value")


def on_provider_page(title):
    """Waits until the browser shows the emulator's sign-in page of `title`, reached through Lanyard's authorize."""
    browser = STATE["browser"]
    WebDriverWait(browser, 20).until(lambda b: b.find_elements(By.ID, "continue"), "the provider's sign-in page")
    lanyard = STATE["lanyard"].base
    self_url = urlparse(browser.current_url)
    assert f"{self_url.scheme}://{self_url.netloc}" == lanyard, browser.current_url
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Sign in with {title}", browser.find_element(By.TAG_NAME, "h1").text


def fill(**fields):
    browser = STATE["browser"]
    for name, value in fields.items():
        field = browser.find_element(By.ID, name)
        field.clear()
        field.send_keys(value)
    browser.find_element(By.ID, "continue").click()


def pending_flows():
    return STATE["browser"].execute_script(
        "return Object.keys(localStorage).filter((key) => key.includes(':redirect:'))")


class RedirectSignInBrowserTests(unittest.TestCase):
    def back_in_the_app(self):
        browser = STATE["browser"]
        WebDriverWait(browser, 30).until(lambda b: b.current_url.startswith(STATE["app"]), "the browser back in the app")
        wait_for_app()
        return browser.execute_script("return window.app.outcome")

    def test_1_apple_by_form_post_lands_signed_in_with_the_name_it_sent_once(self):
        browser = STATE["browser"]
        open_app()
        self.assertEqual(browser.find_element(By.ID, "account").text, "Signed out")
        browser.find_element(By.ID, "apple").click()
        on_provider_page("Apple")
        # The flow's state went to Apple as Lanyard's own (a row), and the app's verifier stayed in the app.
        query = parse_qs(urlparse(browser.current_url).query)
        self.assertEqual(query["response_mode"], ["form_post"])
        self.assertEqual(query["redirect_uri"], [f"{STATE['lanyard'].base}/v1/auth/callback/apple"])
        fill(sub="apple-browser-ada", email="ada@example.com", given_name="Ada", family_name="Lovelace")

        outcome = self.back_in_the_app()
        self.assertNotIn("error", outcome or {}, outcome)
        self.assertTrue(outcome["isNewUser"])
        account = browser.find_element(By.ID, "account").text
        self.assertEqual(account, f"Ada Lovelace <ada@example.com> {outcome['user']}")
        self.assertEqual(browser.find_element(By.ID, "outcome").text, "Signed in by redirect")
        self.assertEqual(browser.current_url, STATE["app"], "the code and state left the address bar")
        self.assertEqual(pending_flows(), [], "no verifier stays in the storage")
        self.assertEqual(browser.get_cookies(), [], "the app holds no cookie")
        self.assertEqual(browser.execute_script("return window.app.lanyard.session.linked_providers"), ["apple"])

        # A reload finds nothing to exchange and stays signed in.
        browser.refresh()
        wait_for_app()
        self.assertIsNone(browser.execute_script("return window.app.outcome"))
        self.assertEqual(browser.find_element(By.ID, "account").text, account)

        # Signed out, Apple by redirect again: the same account, its name kept although Apple sends it only once.
        run("out", "await window.app.lanyard.signOut()")
        self.assertEqual(browser.find_element(By.ID, "account").text, "Signed out")
        browser.find_element(By.ID, "apple").click()
        on_provider_page("Apple")
        fill(sub="apple-browser-ada", email="ada@example.com")
        again = self.back_in_the_app()
        self.assertEqual(again["user"], outcome["user"])
        self.assertFalse(again["isNewUser"])
        self.assertEqual(browser.find_element(By.ID, "account").text, account)
        run("out", "await window.app.lanyard.signOut()")

    def test_2_a_guest_signs_in_with_google_by_redirect_and_keeps_its_data_another_tab_hears_it(self):
        browser = STATE["browser"]
        open_app()
        guest = run("guest", "const { user } = await window.app.lanyard.signInAnonymously(); "
                             "await window.app.lanyard.collection('notes').put('first', { text: 'Written as a guest' }); "
                             "return user.id")
        browser.refresh()
        wait_for_app()
        self.assertEqual(browser.find_element(By.ID, "account").text, f"Guest {guest}")
        self.assertEqual(browser.find_element(By.ID, "note").text, "Written as a guest")
        app_tab = browser.current_window_handle
        browser.switch_to.new_window("tab")
        open_app()
        other_tab = browser.current_window_handle
        browser.switch_to.window(app_tab)

        browser.find_element(By.ID, "google").click()
        on_provider_page("Google")
        fill(sub="google-browser-grace", email="grace@example.com", name="Grace Hopper")
        outcome = self.back_in_the_app()
        self.assertNotIn("error", outcome or {}, outcome)
        self.assertEqual(outcome["user"], guest, "the guest was upgraded in place")
        self.assertIsNone(outcome["mergedFrom"])
        WebDriverWait(browser, 10).until(lambda b: b.find_element(By.ID, "note").text == "Written as a guest",
                                         "the guest's note on the signed-in page")
        self.assertEqual(browser.find_element(By.ID, "account").text, f"Grace Hopper <grace@example.com> {guest}")
        self.assertEqual(browser.current_url, STATE["app"])
        self.assertEqual(pending_flows(), [])

        browser.switch_to.window(other_tab)
        WebDriverWait(browser, 10).until(
            lambda b: b.find_element(By.ID, "account").text == f"Grace Hopper <grace@example.com> {guest}",
            "the other tab shows the account signed in")
        browser.close()
        browser.switch_to.window(app_tab)


if __name__ == "__main__":
    unittest.main(verbosity=2)
