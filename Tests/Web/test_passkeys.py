"""Passkeys in a real browser: Chromium's WebDriver virtual authenticator registers a passkey on the page
`lanyard dev` serves (/_emulator/passkeys) and signs in with it; every ceremony the browser produced is checked a
second time by an independent verifier (py_webauthn, from PyPI), which must agree with Lanyard on what passes and
what does not.
Run: python3 Tests/Web/test_passkeys.py
"""
import json
import os
import sys
import unittest

import httpx
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
from selenium.webdriver.support.ui import WebDriverWait
import webauthn
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.exceptions import InvalidAuthenticationResponse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from lanyard_dev import LanyardDev  # noqa: E402

STATE = {}


def setUpModule():
    lanyard = LanyardDev()
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    # Opened as localhost: in dev mode the relying party is `localhost`, and a page's origin must be within it.
    origin = lanyard.base.replace("127.0.0.1", "localhost")
    browser.get(f"{origin}/_emulator/passkeys")
    authenticator = VirtualAuthenticatorOptions()
    authenticator.protocol = Protocol.CTAP2
    authenticator.transport = Transport.INTERNAL
    authenticator.has_resident_key = True
    authenticator.has_user_verification = True
    authenticator.is_user_verified = True
    browser.add_virtual_authenticator(authenticator)
    STATE.update(lanyard=lanyard, browser=browser, origin=origin)


def tearDownModule():
    STATE["browser"].quit()
    STATE["lanyard"].stop()


class PasskeyBrowserTests(unittest.TestCase):
    def click(self, button):
        browser = STATE["browser"]
        browser.execute_script("document.getElementById('result').textContent = 'running'")
        browser.find_element(By.ID, button).click()
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "result").text != "running")
        text = browser.find_element(By.ID, "result").text
        try:
            return json.loads(text)
        except ValueError:
            self.fail(f"the page said: {text}")

    def page_state(self):
        return STATE["browser"].execute_script("return window.lanyard")

    def fresh_assertion(self):
        """A ceremony run by the page's browser for new options, not sent anywhere: the test decides."""
        options = httpx.post(f"{STATE['lanyard'].base}/v1/auth/passkeys/signin/options", json={}).json()
        credential = STATE["browser"].execute_async_script("""
            const done = arguments[arguments.length - 1];
            navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(arguments[0])})
              .then((credential) => done(credential.toJSON()), (error) => done(String(error)));
            """, options)
        self.assertIsInstance(credential, dict, credential)
        return options, credential

    def test_a_passkey_registered_in_the_browser_signs_in_and_both_verifiers_agree(self):
        origin = STATE["origin"]
        registered = self.click("register")
        self.assertEqual(registered["status"], 201, registered)
        user = registered["json"]["user"]
        self.assertFalse(user["is_anonymous"], "the guest was upgraded in place")
        self.assertEqual(registered["json"]["linked_providers"], ["passkey"])
        registration = self.page_state()["registration"]

        # The independent verifier accepts what Lanyard accepted, with the same relying party and origin.
        verified = webauthn.verify_registration_response(
            credential=registration["credential"],
            expected_challenge=base64url_to_bytes(registration["options"]["challenge"]),
            expected_origin=origin, expected_rp_id="localhost", require_user_verification=True)
        self.assertEqual(bytes_to_base64url(verified.credential_id), registration["credential"]["id"])

        # Sign-in from nothing: the page forgets its session; the authenticator offers the passkey it holds.
        STATE["browser"].execute_script("window.lanyard.session = null")
        signed_in = self.click("signin")
        self.assertEqual(signed_in["status"], 200, signed_in)
        self.assertEqual(signed_in["json"]["user"]["id"], user["id"])
        assertion = self.page_state()["assertion"]
        checked = webauthn.verify_authentication_response(
            credential=assertion["credential"],
            expected_challenge=base64url_to_bytes(assertion["options"]["challenge"]),
            expected_rp_id="localhost", expected_origin=origin,
            credential_public_key=verified.credential_public_key,
            credential_current_sign_count=verified.sign_count, require_user_verification=True)
        self.assertGreater(checked.new_sign_count, verified.sign_count)
        listed = self.click("list")
        self.assertEqual([p["name"] for p in listed["json"]["passkeys"]], ["This browser"])
        self.assertIsNotNone(listed["json"]["passkeys"][0]["last_used_at"])

        # A signature changed in transit: both verifiers refuse it; Lanyard says why, and the challenge is spent.
        options, credential = self.fresh_assertion()
        tampered = json.loads(json.dumps(credential))
        signature = bytearray(base64url_to_bytes(tampered["response"]["signature"]))
        signature[len(signature) // 2] ^= 0x01
        tampered["response"]["signature"] = bytes_to_base64url(bytes(signature))
        with self.assertRaises(InvalidAuthenticationResponse):
            webauthn.verify_authentication_response(
                credential=tampered, expected_challenge=base64url_to_bytes(options["challenge"]),
                expected_rp_id="localhost", expected_origin=origin,
                credential_public_key=verified.credential_public_key,
                credential_current_sign_count=checked.new_sign_count, require_user_verification=True)
        base = STATE["lanyard"].base
        refused = httpx.post(f"{base}/v1/auth/passkeys/signin", json={"credential": tampered})
        self.assertEqual((refused.status_code, refused.json()["error"]["details"]["reason"]), (401, "signature"))
        replayed = httpx.post(f"{base}/v1/auth/passkeys/signin", json={"credential": credential})
        self.assertEqual(replayed.json()["error"]["details"]["reason"], "challenge")

        # A good assertion signs in once; the same one sent again is a replay.
        options, credential = self.fresh_assertion()
        self.assertEqual(httpx.post(f"{base}/v1/auth/passkeys/signin", json={"credential": credential}).status_code, 200)
        again = httpx.post(f"{base}/v1/auth/passkeys/signin", json={"credential": credential})
        self.assertEqual(again.json()["error"]["details"]["reason"], "challenge")


if __name__ == "__main__":
    unittest.main(verbosity=2)
