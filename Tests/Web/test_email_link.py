"""The email link's page in a real browser (Debian's Chromium over WebDriver), as a person meets it (reference
sections 18 and 25): the page names the asking device in words and asks for its number, typed once. The right
number sends the browser on to the app's `redirect_to` (the page's Content-Security-Policy allows exactly that
target: 0.7.0's `form-action 'self'` left Chromium on the page) and only the asking device gets the session; a
wrong number ends the link, and the person's code still works.
Run: python3 Tests/Web/test_email_link.py
"""
import os
import re
import socket
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from lanyard_dev import LanyardDev  # noqa: E402

IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/18.1 Mobile/15E148 Safari/604.1")
STATE = {}


class AppPage(BaseHTTPRequestHandler):
    """The app's page that a confirmed link lands on (another origin than Lanyard's)."""
    def do_GET(self):
        body = b"<!doctype html><title>signed in</title><h1 id='landed'>Back in the app</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def setUpModule():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        app_port = probe.getsockname()[1]
    app = ThreadingHTTPServer(("127.0.0.1", app_port), AppPage)
    threading.Thread(target=app.serve_forever, daemon=True).start()
    redirect = f"http://127.0.0.1:{app_port}/signed-in"
    lanyard = LanyardDev(LANYARD_EMAIL_REDIRECT_URLS=redirect)
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    STATE.update(lanyard=lanyard, browser=browser, app=app, redirect=redirect)


def tearDownModule():
    STATE["browser"].quit()
    STATE["lanyard"].stop()
    STATE["app"].shutdown()


class EmailLinkBrowserTests(unittest.TestCase):
    def start(self, address):
        """A flow started by "the iPhone", and the link from the mail in the dev mailbox."""
        base = STATE["lanyard"].base
        flow = httpx.post(f"{base}/v1/auth/email/start", json={"email": address, "redirect_to": STATE["redirect"]},
                          headers={"User-Agent": IPHONE}).json()
        mails = []
        for _ in range(600):
            mails = httpx.get(f"{base}/_emulator/mail", params={"to": address}).json()
            if mails:
                break
        self.assertTrue(mails, "the mail reached the mailbox")
        return flow, mails[0]["link"], mails[0]["code"]

    def type_number(self, link, number):
        browser = STATE["browser"]
        browser.get(link)
        page = browser.find_element(By.TAG_NAME, "body").text
        field = browser.find_element(By.ID, "match")
        field.send_keys(str(number))
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        return page

    def test_the_right_number_lands_in_the_app_and_only_the_asking_device_is_signed_in(self):
        flow, link, _ = self.start("browser@example.com")
        page = self.type_number(link, flow["match"])
        self.assertIn("Safari on iPhone", page)
        self.assertNotIn("Mozilla", page)
        self.assertNotIn(str(flow["match"]), re.sub(r"\d{2}:\d{2}|\d{4}", "", page), "the page does not show the number")
        browser = STATE["browser"]
        WebDriverWait(browser, 20).until(lambda b: b.current_url.startswith(STATE["redirect"]))
        self.assertEqual(browser.current_url, f"{STATE['redirect']}?flow_id={flow['flow_id']}")
        self.assertEqual(browser.find_element(By.ID, "landed").text, "Back in the app")
        self.assertEqual(browser.get_cookies(), [], "the browser holds nothing of a session")
        session = httpx.post(f"{STATE['lanyard'].base}/v1/auth/email/complete", json={
            "flow_id": flow["flow_id"], "flow_secret": flow["flow_secret"], "wait": 5})
        self.assertEqual(session.status_code, 200, session.text)
        self.assertEqual(session.json()["linked_providers"], ["email"])

    def test_a_wrong_number_ends_the_link_but_the_code_still_signs_in(self):
        flow, link, code = self.start("guess@example.com")
        wrong = 10 if flow["match"] != 10 else 11
        self.type_number(link, wrong)
        browser = STATE["browser"]
        WebDriverWait(browser, 20).until(lambda b: "not the number" in b.find_element(By.TAG_NAME, "body").text)
        self.assertIn("6-digit code", browser.find_element(By.TAG_NAME, "body").text)
        # The right number afterwards finds the link ended; the browser stays on Lanyard's page.
        browser.get(link)
        self.assertIn("wrong number", browser.find_element(By.TAG_NAME, "body").text)
        self.assertEqual(browser.find_elements(By.ID, "match"), [])
        base = STATE["lanyard"].base
        ended = httpx.post(f"{base}/v1/auth/email/complete", json={"flow_id": flow["flow_id"],
                                                                   "flow_secret": flow["flow_secret"]})
        self.assertEqual(ended.status_code, 401)
        self.assertEqual(ended.json()["error"]["details"]["reason"], "link_ended")
        verified = httpx.post(f"{base}/v1/auth/email/verify", json={"flow_id": flow["flow_id"],
                                                                    "flow_secret": flow["flow_secret"], "code": code})
        self.assertEqual(verified.status_code, 200, verified.text)


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)
