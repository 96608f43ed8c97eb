"""A web app on another origin calls Lanyard from a real browser (Debian's Chromium over WebDriver).

Starts `lanyard dev` with LANYARD_CORS_ORIGINS naming one loopback origin, serves the same small page from that
origin and from another port, and lets the page sign in with an emulator token, read `me`, read an error answer
and its exposed headers, and see its own write arrive on the change stream. The listed origin's page gets every answer; the other's browser refuses it all.
Run: python3 Tests/Web/test_cors.py
"""
import json
import os
import socket
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import httpx
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from lanyard_dev import LanyardDev  # noqa: E402

# The app: its parameters in the fragment (server, ID token), its outcome as JSON in #result.
PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>web app</title></head>
<body><pre id="result">running</pre>
<script>
(async () => {
  const parameters = new URLSearchParams(location.hash.slice(1));
  const server = parameters.get("server");
  const outcome = {};
  try {
    const signIn = await fetch(server + "/v1/auth/signin/google", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({id_token: parameters.get("id_token")})});
    const session = await signIn.json();
    outcome.signInStatus = signIn.status;
    const me = await fetch(server + "/v1/users/me", {headers: {"Authorization": "Bearer " + session.access_token}});
    outcome.meStatus = me.status;
    outcome.userID = (await me.json()).id;
    outcome.requestID = me.headers.get("X-Request-Id");
    const refused = await fetch(server + "/v1/users/me", {headers: {"Authorization": "Bearer not-a-token"}});
    outcome.errorStatus = refused.status;
    outcome.errorCode = (await refused.json()).error.code;
    outcome.keys = (await (await fetch(server + "/.well-known/jwks.json")).json()).keys.length;
    // Live changes: the stream read with fetch (EventSource cannot send the bearer), a write, its change event.
    const auth = {"Authorization": "Bearer " + session.access_token};
    const stream = await fetch(server + "/v1/changes/stream", {headers: auth});
    outcome.streamStatus = stream.status;
    const reader = stream.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (marker) => {
      while (!text.includes(marker)) {
        const {value, done} = await reader.read();
        if (done) throw new Error("the stream ended before " + marker);
        text += decoder.decode(value, {stream: true});
      }
    };
    await readUntil("event: ready");
    const put = await fetch(server + "/v1/data/notes/from-the-web", {method: "PUT",
      headers: {...auth, "Content-Type": "application/json", "If-Match": '"0"'}, body: JSON.stringify({data: {text: "hi"}})});
    outcome.conflictStatus = put.status;
    const written = await fetch(server + "/v1/data/notes/from-the-web", {method: "PUT",
      headers: {...auth, "Content-Type": "application/json"}, body: JSON.stringify({data: {text: "hi"}})});
    outcome.etag = written.headers.get("ETag");
    await readUntil('"id":"from-the-web"');
    outcome.streamedChange = true;
    reader.cancel();
  } catch (error) {
    outcome.failed = String(error);
  }
  document.getElementById("result").textContent = JSON.stringify(outcome);
})();
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


def serve_page():
    server = ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


STATE = {}


def setUpModule():
    listed, listed_origin = serve_page()
    unlisted, unlisted_origin = serve_page()
    lanyard = LanyardDev(LANYARD_CORS_ORIGINS=listed_origin)
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    STATE.update(lanyard=lanyard, browser=browser, listed=listed, unlisted=unlisted,
                 listed_origin=listed_origin, unlisted_origin=unlisted_origin)


def tearDownModule():
    STATE["browser"].quit()
    STATE["lanyard"].stop()
    STATE["listed"].shutdown()
    STATE["unlisted"].shutdown()


class WebAppTests(unittest.TestCase):
    def run_page(self, origin, sub):
        lanyard = STATE["lanyard"]
        token = lanyard.id_token("google", sub, email=f"{sub}@example.com")
        browser = STATE["browser"]
        browser.get(f"{origin}/app.html#server={quote(lanyard.base)}&id_token={quote(token)}")
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "result").text != "running")
        return json.loads(browser.find_element(By.ID, "result").text)

    def test_a_page_of_a_listed_origin_signs_in_and_reads_answers_and_errors(self):
        outcome = self.run_page(STATE["listed_origin"], "web-ada")
        self.assertNotIn("failed", outcome)
        self.assertEqual(outcome["signInStatus"], 200)
        self.assertEqual(outcome["meStatus"], 200)
        self.assertRegex(outcome["userID"], r"^[0-9a-f-]{36}$")
        self.assertTrue(outcome["requestID"], "X-Request-Id is exposed to the page")
        self.assertEqual((outcome["errorStatus"], outcome["errorCode"]), (401, "UNAUTHORIZED"))
        self.assertGreaterEqual(outcome["keys"], 1)
        # The change stream, read by the page, carries the page's own write; If-Match and ETag cross origins.
        self.assertEqual(outcome["streamStatus"], 200)
        self.assertEqual(outcome["conflictStatus"], 412)
        self.assertEqual(outcome["etag"], '"1"')
        self.assertTrue(outcome.get("streamedChange"))
        # The page's account is the person's: a native sign-in with the same Google account reaches it.
        lanyard = STATE["lanyard"]
        native = httpx.post(f"{lanyard.base}/v1/auth/signin/google",
                            json={"id_token": lanyard.id_token("google", "web-ada")})
        self.assertEqual(native.json()["user"]["id"], outcome["userID"])

    def test_a_page_of_an_unlisted_origin_is_refused_by_the_browser(self):
        outcome = self.run_page(STATE["unlisted_origin"], "web-eve")
        self.assertIn("failed", outcome)
        self.assertIn("TypeError", outcome["failed"])
        self.assertNotIn("userID", outcome)

    def test_preflights_name_what_the_api_uses_and_other_origins_get_nothing(self):
        base = STATE["lanyard"].base
        listed = httpx.options(f"{base}/v1/users/me", headers={
            "Origin": STATE["listed_origin"], "Access-Control-Request-Method": "PUT",
            "Access-Control-Request-Headers": "authorization, if-match, last-event-id"})
        self.assertEqual(listed.status_code, 204)
        self.assertEqual(listed.headers["access-control-allow-origin"], STATE["listed_origin"])
        self.assertNotIn("access-control-allow-credentials", listed.headers)
        for header in ["Authorization", "Content-Type", "If-Match", "Idempotency-Key", "Last-Event-ID"]:
            self.assertIn(header, listed.headers["access-control-allow-headers"])
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE"]:
            self.assertIn(method, listed.headers["access-control-allow-methods"])
        answer = httpx.get(f"{base}/healthz", headers={"Origin": STATE["listed_origin"]})
        self.assertNotIn("access-control-allow-origin", answer.headers)  # outside /v1, /auth/v1, /.well-known
        supabase = httpx.options(f"{base}/auth/v1/token", headers={
            "Origin": STATE["listed_origin"], "Access-Control-Request-Method": "POST"})
        self.assertEqual(supabase.status_code, 204)
        other = httpx.options(f"{base}/v1/users/me", headers={
            "Origin": STATE["unlisted_origin"], "Access-Control-Request-Method": "GET"})
        self.assertNotIn("access-control-allow-origin", other.headers)
        exposed = httpx.get(f"{base}/v1/users/me", headers={"Origin": STATE["listed_origin"]})
        self.assertEqual(exposed.status_code, 401)
        self.assertIn("Retry-After", exposed.headers["access-control-expose-headers"])
        self.assertIn("X-Request-Id", exposed.headers["access-control-expose-headers"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
