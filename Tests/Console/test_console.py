"""The operators' console (/admin) in a real browser: Debian's Chromium driven over WebDriver (Selenium).

Starts `lanyard dev` with an admin key (Tests/python/lanyard_dev.py), makes accounts through the API, then does
what an operator does. Screenshots go to
$LANYARD_TEST_ARTIFACTS (default Tests/Console/artifacts). Run: python3 Tests/Console/test_console.py
"""
import email
import email.policy
import os
import secrets
import socket
import sys
import time
import unittest

import httpx
from aiosmtpd.controller import Controller
from selenium import webdriver
from selenium.common.exceptions import TimeoutException, NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from lanyard_dev import ROOT, LanyardDev  # noqa: E402

ARTIFACTS = os.environ.get("LANYARD_TEST_ARTIFACTS", os.path.join(ROOT, "Tests", "Console", "artifacts"))
ADMIN_KEY = "console-key-" + secrets.token_hex(16)
SERVER = {}


class MailServer:
    """A loopback SMTP server (aiosmtpd) that accepts mail, except for addresses starting `bounce` (550: the mail
    fails) or `later` (451: it is retried): the Email deliveries page's three states."""
    def __init__(self):
        self.messages = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("bounce"):
            return "550 5.1.1 No such mailbox"
        if address.startswith("later"):
            return "451 4.3.0 Try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.rcpt_tos[0], envelope.content))
        return "250 OK"

    def code(self, address):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for to, content in self.messages:
                if to == address:
                    text = email.message_from_bytes(content, policy=email.policy.default).get_body(("plain",)).get_content()
                    return next(word for word in text.split() if word.isdigit() and len(word) == 6)
            time.sleep(0.05)
        raise AssertionError(f"no mail to {address}")


def setUpModule():
    os.makedirs(ARTIFACTS, exist_ok=True)
    mail = MailServer()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(mail, hostname="127.0.0.1", port=port)
    controller.start()
    # Microsoft as the emulator imitates it, and a provider whose issuer cannot be reached (the Providers page);
    # mail to the loopback SMTP server above (plain SMTP is allowed to loopback only).
    lanyard = LanyardDev(LANYARD_ADMIN_KEY=ADMIN_KEY, LANYARD_OIDC_PROVIDERS="microsoft,broken",
                         LANYARD_OIDC_BROKEN_ISSUER="http://127.0.0.1:9/realms/gone",
                         LANYARD_OIDC_BROKEN_CLIENT_IDS="broken-app",
                         LANYARD_SMTP_URL=f"smtp+insecure://127.0.0.1:{port}")
    SERVER.update(mail=mail, smtp=controller)
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1360,900"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    SERVER.update(lanyard=lanyard, base=lanyard.base, browser=browser)


def tearDownModule():
    SERVER["browser"].quit()
    SERVER["lanyard"].stop()
    SERVER["smtp"].stop()


def sign_in(provider, sub, body=None, **claims):
    token = SERVER["lanyard"].id_token(provider, sub, **claims)
    return httpx.post(f"{SERVER['base']}/v1/auth/signin/{provider}", json={"id_token": token, **(body or {})},
                      headers={"User-Agent": f"ConsoleTest/{sub}"})


class ConsoleTests(unittest.TestCase):
    def setUp(self):
        self.browser = SERVER["browser"]
        self.wait = WebDriverWait(self.browser, 30)
        self.browser.get(f"{SERVER['base']}/admin")
        self.browser.execute_script("sessionStorage.clear()")
        self.browser.get(f"{SERVER['base']}/admin#/")

    def tearDown(self):
        # The page must never trip its own Content-Security-Policy or throw.
        problems = [entry["message"] for entry in self.browser.get_log("browser")
                    if entry["level"] == "SEVERE" and "favicon" not in entry["message"]
                    and "status of 4" not in entry["message"]]
        self.assertEqual(problems, [])

    def screenshot(self, name):
        self.browser.save_screenshot(os.path.join(ARTIFACTS, f"{name}.png"))

    def type_key(self, key):
        field = self.wait.until(EC.visibility_of_element_located((By.ID, "key")))
        field.clear()
        field.send_keys(key)
        self.browser.find_element(By.ID, "signin").click()

    def confirm(self):
        self.wait.until(EC.visibility_of_element_located((By.ID, "confirm-ok"))).click()

    def test_an_operator_finds_a_user_revokes_a_session_and_disables_the_account(self):
        ada_sub = "ada-" + secrets.token_hex(4)
        first = sign_in("apple", ada_sub, {"given_name": "Ada", "family_name": "Lovelace"}, email="ada@example.org")
        second = sign_in("apple", ada_sub)
        self.assertEqual((first.status_code, second.status_code), (200, 200))
        for index in range(3):
            sign_in("google", f"other-{index}-{secrets.token_hex(3)}", email=f"other{index}@example.net")

        # Before anyone signed in: the key form, and nothing of the console (no navigation, no "Sign out").
        self.wait.until(EC.visibility_of_element_located((By.ID, "key")))
        for hidden in ["bar", "signout", "nav-users", "nav-groups", "nav-activity"]:
            self.assertFalse(self.browser.find_element(By.ID, hidden).is_displayed(), hidden)
        self.screenshot("00-signed-out")

        self.type_key("not-the-key")
        error = self.wait.until(EC.visibility_of_element_located((By.ID, "signin-error")))
        self.assertIn("not this server's admin key", error.text)
        for hidden in ["bar", "signout"]:
            self.assertFalse(self.browser.find_element(By.ID, hidden).is_displayed(), hidden)
        self.screenshot("01-wrong-key")

        self.type_key(ADMIN_KEY)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr[data-user-id]")))
        self.screenshot("02-users")

        search = self.browser.find_element(By.ID, "search")
        search.send_keys("ada@example")
        self.wait.until(lambda browser: len(browser.find_elements(By.CSS_SELECTOR, "tr[data-user-id]")) == 1)
        self.browser.find_element(By.CSS_SELECTOR, "tr[data-user-id]").click()
        title = self.wait.until(EC.visibility_of_element_located((By.ID, "user-title")))
        self.assertIn("Ada Lovelace", title.text)
        sessions = self.browser.find_elements(By.CSS_SELECTOR, "tr[data-session-id]")
        self.assertEqual(len(sessions), 2)
        self.assertTrue(self.browser.find_elements(By.CSS_SELECTOR, "[data-provider='apple']"))
        self.screenshot("03-user")

        # Revoke the session of the first sign-in: its device is signed out at once.
        first_session = first.json()
        revoked_row = self.browser.find_element(By.CSS_SELECTOR, f"tr[data-session-id='{self.session_id(first_session)}']")
        revoked_row.find_element(By.CSS_SELECTOR, "button.revoke").click()
        self.confirm()
        self.wait.until(lambda browser: len(browser.find_elements(By.CSS_SELECTOR, "tr[data-session-id]")) == 1)
        me = httpx.get(f"{SERVER['base']}/v1/users/me", headers={"Authorization": f"Bearer {first_session['access_token']}"})
        self.assertEqual(me.status_code, 401)

        # Disable the account: the badge says so, and signing in is refused.
        self.browser.find_element(By.ID, "disable").click()
        self.screenshot("04-confirm-disable")
        self.confirm()
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Disabled"))
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, "tr[data-session-id]")), 0)
        self.screenshot("05-disabled")
        refused = sign_in("apple", ada_sub)
        self.assertEqual(refused.status_code, 403)
        self.assertEqual(refused.json()["error"]["code"], "ACCOUNT_DISABLED")
        bearer = httpx.get(f"{SERVER['base']}/v1/users/me",
                           headers={"Authorization": f"Bearer {second.json()['access_token']}"})
        self.assertEqual(bearer.json()["error"]["code"], "ACCOUNT_DISABLED")

        # And back.
        self.browser.find_element(By.ID, "enable").click()
        self.confirm()
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Active"))
        self.assertEqual(sign_in("apple", ada_sub).status_code, 200)

    def test_the_activity_page_shows_the_numbers_and_the_chart(self):
        sign_in("google", "activity-" + secrets.token_hex(4))
        self.type_key(ADMIN_KEY)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr[data-user-id]")))
        self.browser.find_element(By.ID, "nav-activity").click()
        accounts = self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#stat-accounts .value")))
        stats = httpx.get(f"{SERVER['base']}/v1/admin/stats", headers={"Authorization": f"Bearer {ADMIN_KEY}"}).json()
        self.assertEqual(accounts.text.replace(",", ""), str(stats["accounts"]))
        bars = self.browser.find_elements(By.CSS_SELECTOR, "#signins-chart rect")
        self.assertGreaterEqual(len(bars), 1)
        self.screenshot("06-activity")

    def test_the_providers_page_shows_audiences_keys_and_the_last_error(self):
        microsoft = sign_in("microsoft", "oid-" + secrets.token_hex(4), {"nonce": "n-1"}, nonce="n-1")
        self.assertEqual(microsoft.status_code, 200, microsoft.text)
        broken = sign_in("microsoft", "x", {"nonce": "n-1"}, nonce="n-1")  # a token; its provider is what fails
        down = httpx.post(f"{SERVER['base']}/v1/auth/signin/broken",
                          json={"id_token": broken.json()["access_token"], "nonce": "n-1"})
        self.assertEqual(down.status_code, 503, down.text)
        self.type_key(ADMIN_KEY)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr[data-user-id]")))
        self.browser.find_element(By.ID, "nav-providers").click()
        card = self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".provider-card[data-provider=microsoft]")))
        self.assertIn("Keys held", card.text)
        self.assertIn("lanyard-emulator-microsoft", card.find_element(By.CSS_SELECTOR, ".audiences").text)
        self.assertIn("emu-oidc-", card.find_element(By.CSS_SELECTOR, ".key-ids").text)
        self.assertIn("{tid}", card.text)
        failing = self.browser.find_element(By.CSS_SELECTOR, ".provider-card[data-provider=broken]")
        self.assertIn("Failing", failing.text)
        self.assertNotEqual(failing.find_element(By.CSS_SELECTOR, ".last-error").text, "none")
        names = [element.get_attribute("data-provider") for element in
                 self.browser.find_elements(By.CSS_SELECTOR, ".provider-card")]
        self.assertEqual(names, ["apple", "google", "microsoft", "broken"])
        self.screenshot("11-providers")

    def test_an_empty_search_says_so(self):
        self.type_key(ADMIN_KEY)
        search = self.wait.until(EC.visibility_of_element_located((By.ID, "search")))
        search.send_keys("nobody-has-this-" + secrets.token_hex(4))
        self.wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#results .empty"), "No accounts match"))
        self.screenshot("07-empty-search")

    def test_an_operator_opens_a_family_and_dissolves_it(self):
        base = SERVER["base"]
        parent = sign_in("apple", "parent-" + secrets.token_hex(4), {"given_name": "Grace", "family_name": "Hopper"},
                         email="grace@privaterelay.appleid.com").json()
        child = sign_in("google", "child-" + secrets.token_hex(4), email="kid@example.org").json()
        auth = lambda session: {"Authorization": f"Bearer {session['access_token']}"}
        name = "Hoppers " + secrets.token_hex(3)
        group = httpx.post(f"{base}/v1/groups", json={"name": name}, headers=auth(parent)).json()
        code = httpx.post(f"{base}/v1/groups/{group['id']}/invites", json={}, headers=auth(parent)).json()["code"]
        self.assertEqual(httpx.post(f"{base}/v1/invites/{code}/accept", headers=auth(child)).status_code, 200)
        httpx.patch(f"{base}/v1/groups/{group['id']}/members/me", json={"share_email": True}, headers=auth(parent))
        pending = httpx.post(f"{base}/v1/groups/{group['id']}/invites", json={"role": "viewer", "max_uses": 5},
                             headers=auth(parent)).json()

        self.type_key(ADMIN_KEY)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr[data-user-id]")))
        self.browser.find_element(By.ID, "nav-groups").click()
        search = self.wait.until(EC.visibility_of_element_located((By.ID, "group-search")))
        search.send_keys(name)
        self.wait.until(lambda browser: len(browser.find_elements(By.CSS_SELECTOR, "tr[data-group-id]")) == 1)
        self.screenshot("08-groups")
        # The search re-renders the list for each pause in typing (a slow machine pauses mid-name): click the row
        # of the last rendering, and again if a re-rendering swallowed the click (the group's page did not open).
        for attempt in range(20):
            if self.browser.find_elements(By.ID, "group-title"):
                break
            try:
                self.browser.find_element(By.CSS_SELECTOR, f"tr[data-group-id='{group['id']}']").click()
                WebDriverWait(self.browser, 3).until(EC.visibility_of_element_located((By.ID, "group-title")))
                break
            except (StaleElementReferenceException, NoSuchElementException, TimeoutException):
                time.sleep(0.25)
        try:
            title = self.wait.until(EC.visibility_of_element_located((By.ID, "group-title")))
        except TimeoutException:
            # What the page shows instead (an error, "Loading…", another view) says which part failed.
            self.screenshot("09-group-did-not-open")
            view = self.browser.find_element(By.ID, "view")
            self.fail(f"the group's page did not open: at {self.browser.execute_script('return location.hash')}, "
                      f"the view shows {view.text[:500]!r} (hidden: {view.get_attribute('hidden')})")
        self.assertIn(name, title.text)
        members = self.browser.find_elements(By.CSS_SELECTOR, "#members tr[data-member-id]")
        self.assertEqual([row.get_attribute("data-member-id") for row in members],
                         [parent["user"]["id"], child["user"]["id"]])
        self.assertIn("owner", members[0].text.lower())
        # The page never shows a relay address, and never an invite's code.
        page = self.browser.find_element(By.ID, "view").text
        self.assertNotIn("privaterelay", page)
        self.assertNotIn(pending["code"], page)
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, "#invites tr[data-invite-id]")), 1)
        self.screenshot("09-group")

        self.browser.find_element(By.ID, "dissolve").click()
        self.confirm()
        self.wait.until(EC.visibility_of_element_located((By.ID, "group-search")))
        gone = httpx.get(f"{base}/v1/groups/{group['id']}", headers=auth(child))
        self.assertEqual(gone.status_code, 404)

    def test_an_operator_reverts_a_merge_from_the_user_page(self):
        base = SERVER["base"]
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        kept = sign_in("apple", "kept-" + secrets.token_hex(4), email="kept@example.org").json()
        google_sub = "absorbed-" + secrets.token_hex(4)
        absorbed = sign_in("google", google_sub, email="absorbed@example.org").json()
        merged = httpx.post(f"{base}/v1/admin/merges", json={"into": kept["user"]["id"], "from": absorbed["user"]["id"]},
                            headers=admin)
        self.assertEqual(merged.status_code, 200)

        self.type_key(ADMIN_KEY)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr[data-user-id]")))
        self.browser.get(f"{base}/admin#/users/{kept['user']['id']}")
        row = self.wait.until(EC.visibility_of_element_located(
            (By.CSS_SELECTOR, f"#merges tr[data-merge-id='{merged.json()['merge_id']}']")))
        self.assertIn(absorbed["user"]["id"], row.text)
        # The account's own sign-in method is still the primary one.
        primary = self.browser.find_elements(By.CSS_SELECTOR, "tr[data-identity-id] [data-primary]")
        self.assertEqual(len(primary), 1)
        self.assertIn("Apple", primary[0].find_element(By.XPATH, "./..").text)
        self.screenshot("10-merges")
        row.find_element(By.CSS_SELECTOR, "button.revert-merge").click()
        self.confirm()
        self.wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#merges"), "Reverted"))
        # The absorbed account is back: its Google sign-in reaches it again.
        self.assertEqual(sign_in("google", google_sub).json()["user"]["id"], absorbed["user"]["id"])

    def test_an_operator_sees_a_users_passkeys_and_removes_one(self):
        base = SERVER["base"]
        # Two passkeys made in this browser (its virtual authenticator) on the dev page, opened as localhost.
        self.browser.get(base.replace("127.0.0.1", "localhost") + "/_emulator/passkeys")
        authenticator = VirtualAuthenticatorOptions()
        authenticator.protocol, authenticator.transport = Protocol.CTAP2, Transport.INTERNAL
        authenticator.has_resident_key = authenticator.has_user_verification = authenticator.is_user_verified = True
        # One per authenticator: a second registration on the same one is refused by the browser itself (the
        # options exclude the passkey it already holds), so each passkey comes from a fresh virtual authenticator.
        for _ in range(2):
            self.browser.add_virtual_authenticator(authenticator)
            try:
                self.browser.execute_script("document.getElementById('result').textContent = 'running'")
                self.browser.find_element(By.ID, "register").click()
                self.wait.until(lambda b: b.find_element(By.ID, "result").text != "running")
                self.assertIn('"status": 201', self.browser.find_element(By.ID, "result").text)
            finally:
                self.browser.remove_virtual_authenticator()
        user_id = self.browser.execute_script("return window.lanyard.session.user.id")

        self.browser.get(f"{base}/admin#/")
        self.type_key(ADMIN_KEY)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr[data-user-id]")))
        self.browser.get(f"{base}/admin#/users/{user_id}")
        rows = self.wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#passkeys tr[data-passkey-id]"))
        self.assertEqual(len(rows), 2)
        self.assertIn("This browser", rows[0].text)
        self.assertIn("This device only", rows[0].text)
        self.screenshot("13-passkeys")
        rows[0].find_element(By.CSS_SELECTOR, "button.remove-passkey").click()
        self.confirm()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#passkeys tr[data-passkey-id]")) == 1)
        self.wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, ".timeline"), "identity.unlinked"))
        self.assertIn("actor: admin", self.browser.find_element(By.CSS_SELECTOR, ".timeline").text)
        # The last one is the account's only way in: it cannot be removed.
        remaining = self.browser.find_element(By.CSS_SELECTOR, "#passkeys button.remove-passkey")
        self.assertFalse(remaining.is_enabled())

    def test_email_deliveries_show_sent_retrying_and_failed_and_an_operator_sends_a_recovery_code(self):
        base = SERVER["base"]
        address = f"ada-{secrets.token_hex(4)}@example.com"
        started = httpx.post(f"{base}/v1/auth/email/start", json={"email": address}).json()
        session = httpx.post(f"{base}/v1/auth/email/verify", json={
            "flow_id": started["flow_id"], "flow_secret": started["flow_secret"], "code": SERVER["mail"].code(address)})
        self.assertEqual(session.status_code, 200, session.text)
        user_id = session.json()["user"]["id"]
        bounce = f"bounce-{secrets.token_hex(4)}@example.com"
        later = f"later-{secrets.token_hex(4)}@example.com"
        for other in (bounce, later):
            self.assertEqual(httpx.post(f"{base}/v1/auth/email/start", json={"email": other}).status_code, 202)

        self.type_key(ADMIN_KEY)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr[data-user-id]")))
        self.browser.get(f"{base}/admin#/users/{user_id}")
        self.wait.until(EC.visibility_of_element_located((By.ID, "single-method")))
        self.assertIn("Email", self.browser.find_element(By.CSS_SELECTOR, "tr[data-identity-id]").text)
        self.browser.find_element(By.ID, "send-recovery").click()
        self.confirm()
        self.wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, ".timeline"), "user.recovery_sent"))

        def row_states():
            self.browser.get(f"{base}/admin#/email")
            self.browser.refresh()
            self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#deliveries, .empty")))
            return {row.find_element(By.CSS_SELECTOR, "td").text: row.find_elements(By.CSS_SELECTOR, "td")[2].text
                    for row in self.browser.find_elements(By.CSS_SELECTOR, "tr[data-delivery-id]")}
        deadline = time.monotonic() + 60
        states = row_states()
        while time.monotonic() < deadline and not (states.get(bounce) == "Failed" and states.get(later) == "Retrying"
                                                   and states.get(address) == "Sent"):
            time.sleep(0.5)
            states = row_states()
        self.assertEqual(states.get(bounce), "Failed", states)
        self.assertEqual(states.get(later), "Retrying", states)
        self.assertEqual(states.get(address), "Sent", states)
        failed = self.browser.find_element(By.CSS_SELECTOR, "tr[data-status=failed]")
        self.assertIn("550", failed.text)
        self.screenshot("12-email-deliveries")
        self.browser.find_element(By.CSS_SELECTOR, "button[data-filter=retrying]").click()
        # The filtered list is rendered anew: wait for its rows, not for a moment with none (all() of none is true).
        self.wait.until(lambda browser: (rows := browser.find_elements(By.CSS_SELECTOR, "tr[data-delivery-id]"))
                        and all(later in row.text for row in rows))
        self.assertIn("next try", self.browser.find_element(By.CSS_SELECTOR, "tr[data-delivery-id]").text)

    def test_an_operator_follows_an_import_opens_its_report_and_undoes_it(self):
        base = SERVER["base"]
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        with open(os.path.join(ROOT, "Tests", "Fixtures", "imports", "lanyard.jsonl"), "rb") as fixture:
            lines = fixture.read()
        dry = httpx.post(f"{base}/v1/admin/imports?dry_run=1", content=lines, headers=admin)
        self.assertEqual(dry.status_code, 200, dry.text)
        self.assertIsNone(dry.json()["batch_id"])
        imported = httpx.post(f"{base}/v1/admin/imports", content=lines, headers=admin)
        self.assertEqual(imported.status_code, 201, imported.text)
        report = imported.json()
        batch = report["batch_id"]
        self.assertEqual(report["created"], 11)
        conflicts = sum(report["conflict_counts"].values())
        self.assertEqual(report["conflict_counts"], {"unverified_email": 1})  # Elif never verified her address

        # Bruno's updated app sends its Firebase session once (the bridge): he has crossed; nobody else has yet.
        bruno_uid = "wpprNZm3luJOtUNdxSyClVIOH3i0"
        token = httpx.post(f"{base}/_emulator/firebase/id-token", json={
            "sub": bruno_uid, "identities": {"google.com": ["104918273645091827364"]}, "sign_in_provider": "google.com",
            "email": "bruno.okafor@example.com", "email_verified": True, "name": "Bruno Okafor"})
        token.raise_for_status()
        crossed = httpx.post(f"{base}/v1/auth/migrate/firebase", json={"id_token": token.json()["id_token"]})
        self.assertEqual(crossed.status_code, 200, crossed.text)
        bruno = crossed.json()
        sources = {row["source"]: row for row in
                   httpx.get(f"{base}/v1/admin/imports", headers=admin).json()["sources"]}
        self.assertEqual((sources["firebase"]["accounts"], sources["firebase"]["signed_in"]), (10, 1))

        self.type_key(ADMIN_KEY)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr[data-user-id]")))
        # The user page says which system knew the account, and by which id.
        self.browser.get(f"{base}/admin#/users/{bruno['user']['id']}")
        legacy = self.wait.until(EC.visibility_of_element_located((By.ID, "legacy")))
        self.assertEqual(legacy.find_element(By.CSS_SELECTOR, ".legacy-id").text, bruno_uid)
        self.assertEqual(legacy.find_element(By.CSS_SELECTOR, ".legacy-source").text, "Firebase")
        self.assertEqual(legacy.get_attribute("data-legacy-source"), "firebase")
        # A part the page leaves out (a passkeys or merges card) is left out, not printed as "null".
        self.assertNotIn("null", self.browser.find_element(By.ID, "view").text.split())
        self.screenshot("14-legacy-id")

        # The Imports page: the switching-day counts, and the batch.
        self.browser.find_element(By.ID, "nav-imports").click()
        firebase = self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#crossing [data-source=firebase]")))
        self.assertEqual(firebase.find_element(By.CSS_SELECTOR, ".crossed").text, "1")
        self.assertIn("of 10", firebase.text)
        self.assertEqual(firebase.find_element(By.CSS_SELECTOR, ".waiting").text, "9")
        supabase = self.browser.find_element(By.CSS_SELECTOR, "#crossing [data-source=supabase]")
        self.assertEqual((supabase.find_element(By.CSS_SELECTOR, ".crossed").text,
                          supabase.find_element(By.CSS_SELECTOR, ".waiting").text), ("0", "1"))
        row = self.browser.find_element(By.CSS_SELECTOR, f"tr[data-batch-id='{batch}']")
        self.assertEqual(row.get_attribute("data-undone"), "false")
        self.assertEqual(row.find_element(By.CSS_SELECTOR, ".created").text, "11")
        self.assertEqual(row.find_element(By.CSS_SELECTOR, ".signed-in").text, "1")
        self.assertEqual(row.find_element(By.CSS_SELECTOR, ".conflicts").text, str(conflicts))
        self.assertEqual(row.find_element(By.CSS_SELECTOR, ".warnings").text, str(len(report["warnings"])))
        self.assertIn("Imported", row.text)
        self.screenshot("15-imports")

        # Its report, conflicts line by line.
        row.click()
        self.wait.until(EC.visibility_of_element_located((By.ID, "batch-title")))
        self.assertIn(batch, self.browser.find_element(By.ID, "view").text)
        self.assertEqual(self.browser.find_element(By.CSS_SELECTOR, "[data-stat=read] .value").text, str(report["read"]))
        shown = self.browser.find_elements(By.CSS_SELECTOR, "#conflicts tr[data-conflict-kind]")
        self.assertEqual([element.get_attribute("data-conflict-kind") for element in shown],
                         [conflict["kind"] for conflict in report["conflicts"]])
        unverified = self.browser.find_element(By.CSS_SELECTOR, "#conflicts tr[data-conflict-kind=unverified_email]")
        self.assertIn("30aaukUcwWyrawdiCSaeZHaeFLB1", unverified.text)
        self.assertIn("elif.kaya@example.com was never verified", unverified.text)
        for provider, count in report["identities"].items():
            self.assertIn(f"{provider} {count}", self.browser.find_element(By.ID, "report-identities").text)
        self.screenshot("16-import-report")

        # Its accounts: the batch's eleven and nobody else's, then back to the batch from the filter's link.
        self.browser.find_element(By.ID, "batch-accounts").click()
        self.wait.until(EC.visibility_of_element_located((By.ID, "batch-filter")))
        self.wait.until(lambda _: len(self.browser.find_elements(By.CSS_SELECTOR, "tr[data-user-id]")) == 11)
        listed = {row.get_attribute("data-user-id") for row in self.browser.find_elements(By.CSS_SELECTOR, "tr[data-user-id]")}
        by_api = httpx.get(f"{base}/v1/admin/users?import_batch={batch}&limit=100", headers=admin).json()["users"]
        self.assertEqual(listed, {user["id"] for user in by_api})
        self.assertIn(bruno["user"]["id"], listed)
        self.browser.find_element(By.CSS_SELECTOR, "#batch-filter a").click()
        self.wait.until(EC.visibility_of_element_located((By.ID, "undo")))

        # Undo: refused, since Bruno has signed in; nothing removed.
        self.browser.find_element(By.ID, "undo").click()
        self.confirm()
        refusal = self.wait.until(EC.visibility_of_element_located((By.ID, "undo-refused")))
        self.assertIn("1 account of this batch has been signed into", refusal.text)
        self.screenshot("17-undo-refused")
        self.assertIsNone(httpx.get(f"{base}/v1/admin/imports/{batch}", headers=admin).json()["undone_at"])
        me = httpx.get(f"{base}/v1/users/me", headers={"Authorization": f"Bearer {bruno['access_token']}"})
        self.assertEqual(me.status_code, 200)

        # Forced: all eleven go, Bruno's session with his account.
        refusal.find_element(By.ID, "force-undo").click()
        self.confirm()
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "batch-state"), "Undone"))
        self.assertIn("Removed 11 accounts", self.browser.find_element(By.ID, "undo-result").text)
        self.assertNotIn("null", self.browser.find_element(By.ID, "view").text.split())
        self.assertIn("11 accounts removed", self.browser.find_element(By.ID, "undone").text)
        self.assertFalse(self.browser.find_elements(By.ID, "undo"))
        self.screenshot("18-import-undone")
        me = httpx.get(f"{base}/v1/users/me", headers={"Authorization": f"Bearer {bruno['access_token']}"})
        self.assertEqual(me.status_code, 401)
        self.assertEqual(httpx.get(f"{base}/v1/admin/users?legacy_id={bruno_uid}", headers=admin).json()["users"], [])

        # Back on the list, the batch is marked undone.
        self.browser.find_element(By.CSS_SELECTOR, "a.back").click()
        row = self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, f"tr[data-batch-id='{batch}']")))
        self.assertEqual(row.get_attribute("data-undone"), "true")
        self.assertIn("Undone", row.text)

    @staticmethod
    def session_id(session):
        import base64
        import json
        payload = session["access_token"].split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["sid"]


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)
