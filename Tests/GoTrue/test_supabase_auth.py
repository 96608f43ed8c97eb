"""Supabase's own Python client (supabase-auth, from PyPI) against Lanyard's GoTrue-compatible surface.

Starts `lanyard dev` (Tests/python/lanyard_dev.py), then drives the client as an app would. Run: python3 Tests/GoTrue/test_supabase_auth.py
"""
import hashlib
import os
import re
import secrets
import sys
import time
import unittest
from html import unescape
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from lanyard_dev import LanyardDev  # noqa: E402
ANON_KEY = "test-anon-key-" + secrets.token_hex(8)
SERVER = {}


def setUpModule():
    SERVER["lanyard"] = LanyardDev(LANYARD_GOTRUE_ANON_KEY=ANON_KEY, LANYARD_REFRESH_REUSE_GRACE="0",
                                   LANYARD_RATE_LIMIT_LINK="4/3600", LANYARD_OIDC_PROVIDERS="microsoft,keycloak",
                                   LANYARD_OIDC_KEYCLOAK_ISSUER="https://sso.example.com/realms/staff")
    SERVER.update(base=SERVER["lanyard"].base, auth=f"{SERVER['lanyard'].base}/auth/v1")


def tearDownModule():
    SERVER["lanyard"].stop()


def id_token(provider, sub, **claims):
    return SERVER["lanyard"].id_token(provider, sub, **claims)


def client(**headers):
    return SyncGoTrueClient(url=SERVER["auth"], headers={"apikey": ANON_KEY, **headers},
                            auto_refresh_token=False, persist_session=False)


def unique(name):
    return f"{name}-{secrets.token_hex(6)}"


class SignInTests(unittest.TestCase):
    def test_apple_with_a_nonce_then_the_session_user_and_refresh(self):
        raw = secrets.token_urlsafe(16)
        supabase = client()
        sub = unique("apple")
        signed_in = supabase.sign_in_with_id_token({
            "provider": "apple", "nonce": raw,
            "token": id_token("apple", sub, email="a@privaterelay.appleid.com",
                              nonce=hashlib.sha256(raw.encode()).hexdigest()),
        })
        session, user = signed_in.session, signed_in.user
        self.assertEqual(session.token_type, "bearer")
        self.assertIsInstance(session.expires_in, int)
        self.assertGreater(session.expires_at, time.time())
        self.assertEqual(user.aud, "authenticated")
        self.assertEqual(user.role, "authenticated")
        self.assertFalse(user.is_anonymous)
        self.assertEqual(user.email, "a@privaterelay.appleid.com")
        self.assertEqual(user.app_metadata, {"provider": "apple", "providers": ["apple"]})
        [identity] = user.identities
        self.assertEqual((identity.provider, identity.id, identity.user_id), ("apple", sub, user.id))
        self.assertEqual(identity.identity_data["sub"], sub)

        self.assertEqual(supabase.get_user().user.id, user.id)
        refreshed = supabase.refresh_session()
        self.assertNotEqual(refreshed.session.refresh_token, session.refresh_token)
        self.assertEqual(refreshed.user.id, user.id)

    def test_azure_is_microsoft_and_keycloak_passes_through(self):
        """Supabase's clients name Microsoft `azure`; Lanyard's `microsoft` (the emulator's, in dev mode) answers."""
        sub = unique("oid")
        azure = client().sign_in_with_id_token({"provider": "azure", "nonce": "n-1",
                                                "token": id_token("microsoft", sub, nonce="n-1")})
        self.assertEqual(azure.user.app_metadata, {"provider": "azure", "providers": ["azure"]})
        [identity] = azure.user.identities
        self.assertEqual(identity.provider, "azure")
        self.assertTrue(identity.id.endswith(":" + sub), identity.id)  # tid:oid
        keycloak = client().sign_in_with_id_token({"provider": "keycloak", "nonce": "n-2",
                                                   "token": id_token("keycloak", unique("kc"), nonce="n-2")})
        self.assertEqual(keycloak.user.app_metadata["provider"], "keycloak")
        with self.assertRaises(AuthApiError):
            client().sign_in_with_id_token({"provider": "okta", "token": id_token("keycloak", unique("kc"), nonce="n")})
        settings = httpx.get(f"{SERVER['auth']}/settings", headers={"apikey": ANON_KEY}).json()
        self.assertTrue(settings["external"]["azure"] and settings["external"]["keycloak"])
        self.assertFalse(settings["external"]["facebook"])

    def test_apple_and_google_without_a_nonce_and_google_with_a_raw_one(self):
        apple = client().sign_in_with_id_token({"provider": "apple", "token": id_token("apple", unique("a"))})
        self.assertEqual(apple.user.app_metadata["provider"], "apple")
        google = client().sign_in_with_id_token({"provider": "google", "token": id_token("google", unique("g"),
                                                                                        nonce="n-1"), "nonce": "n-1"})
        self.assertEqual(google.user.app_metadata["provider"], "google")
        plain = client().sign_in_with_id_token({"provider": "google", "token": id_token("google", unique("g"))})
        self.assertEqual(plain.user.identities[0].provider, "google")

    def test_the_same_identity_signs_into_the_same_account(self):
        sub = unique("g")
        first = client().sign_in_with_id_token({"provider": "google", "token": id_token("google", sub)})
        second = client().sign_in_with_id_token({"provider": "google", "token": id_token("google", sub)})
        self.assertEqual(first.user.id, second.user.id)

    def test_the_access_token_verifies_with_the_jwks_and_carries_supabase_claims(self):
        signed_in = client().sign_in_anonymously()
        keys = jwt.PyJWKClient(f"{SERVER['auth']}/.well-known/jwks.json")
        token = signed_in.session.access_token
        claims = jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["ES256"],
                            audience="authenticated")
        self.assertEqual(claims["sub"], signed_in.user.id)
        self.assertEqual(claims["role"], "authenticated")
        self.assertTrue(claims["is_anonymous"])
        self.assertEqual(claims["session_id"], claims["sid"])
        self.assertEqual(claims["app_metadata"], {"provider": "anonymous", "providers": ["anonymous"]})

    def test_row_level_security_reads_the_user_from_the_token(self):
        email = unique("rls") + "@example.com"
        signed_in = client().sign_in_with_id_token({"provider": "google",
                                                    "token": id_token("google", unique("g"), email=email)})
        claims = jwt.decode(signed_in.session.access_token, options={"verify_signature": False})
        # What policies such as `auth.jwt() ->> 'email'` or `auth.jwt() -> 'app_metadata' ->> 'provider'` read.
        self.assertEqual(claims["email"], email)
        self.assertEqual(claims["phone"], "")
        self.assertEqual(claims["app_metadata"], {"provider": "google", "providers": ["google"]})
        self.assertEqual(claims["user_metadata"], signed_in.user.user_metadata)


class AccountTests(unittest.TestCase):
    def test_anonymous_sign_up_with_metadata_and_update_user_merging_it(self):
        supabase = client()
        signed_in = supabase.sign_in_anonymously({"options": {"data": {"theme": "dark", "level": 3}}})
        user = signed_in.user
        self.assertTrue(user.is_anonymous)
        self.assertEqual(user.email, "")
        self.assertEqual(user.identities, [])
        self.assertEqual(user.user_metadata, {"theme": "dark", "level": 3})
        updated = supabase.update_user({"data": {"level": 4, "theme": None, "nickname": "ada"}}).user
        self.assertEqual(updated.user_metadata, {"level": 4, "nickname": "ada"})
        self.assertEqual(supabase.get_user().user.user_metadata, {"level": 4, "nickname": "ada"})

    def test_identities_listed_linked_with_an_id_token_and_unlinked(self):
        supabase = client()
        signed_in = supabase.sign_in_with_id_token({"provider": "google", "token": id_token("google", unique("g"))})
        # What supabase-swift's linkIdentityWithIdToken and supabase-js's linkIdentity send.
        linked = httpx.post(f"{SERVER['auth']}/token", params={"grant_type": "id_token"},
                            headers={"apikey": ANON_KEY, "Authorization": f"Bearer {signed_in.session.access_token}"},
                            json={"provider": "apple", "id_token": id_token("apple", unique("a")),
                                  "link_identity": True})
        self.assertEqual(linked.status_code, 200, linked.text)
        self.assertEqual(linked.json()["user"]["id"], signed_in.user.id)
        supabase.set_session(linked.json()["access_token"], linked.json()["refresh_token"])

        identities = supabase.get_user_identities().identities
        self.assertEqual([identity.provider for identity in identities], ["google", "apple"])
        # Supabase's Swift client sends the id as a Swift UUID prints it, upper case: the same identity.
        identities[1].identity_id = identities[1].identity_id.upper()
        supabase.unlink_identity(identities[1])
        remaining = supabase.get_user_identities().identities
        self.assertEqual([identity.provider for identity in remaining], ["google"])
        with self.assertRaises(AuthApiError) as refused:
            supabase.unlink_identity(remaining[0])
        self.assertEqual(refused.exception.code, "single_identity_not_deletable")

    def test_sign_out_ends_the_session_everywhere(self):
        supabase = client()
        signed_in = supabase.sign_in_with_id_token({"provider": "google", "token": id_token("google", unique("g"))})
        supabase.sign_out()
        self.assertIsNone(supabase.get_session())
        with self.assertRaises(AuthApiError) as refused:
            client().refresh_session(signed_in.session.refresh_token)
        self.assertEqual(refused.exception.code, "refresh_token_not_found")

    def test_a_device_signed_out_elsewhere_hears_session_not_found_and_signs_out(self):
        sub = unique("g")
        phone, tablet = client(), client()
        phone.sign_in_with_id_token({"provider": "google", "token": id_token("google", sub)})
        tablet.sign_in_with_id_token({"provider": "google", "token": id_token("google", sub)})
        phone.sign_out({"scope": "others"})
        with self.assertRaises(AuthApiError) as refused:
            tablet.get_user()
        self.assertEqual((refused.exception.code, refused.exception.status), ("session_not_found", 403))
        tablet.sign_out()  # the client treats session_not_found as signed out already
        self.assertIsNone(tablet.get_session())
        self.assertIsNotNone(phone.get_user())


class ErrorTests(unittest.TestCase):
    def assertRefusedWith(self, code, call, status=None):
        with self.assertRaises(AuthApiError) as refused:
            call()
        self.assertEqual(refused.exception.code, code, refused.exception.message)
        if status:
            self.assertEqual(refused.exception.status, status)
        return refused.exception

    def test_a_token_that_fails_verification(self):
        self.assertRefusedWith("bad_id_token", lambda: client().sign_in_with_id_token(
            {"provider": "apple", "token": id_token("apple", unique("a"), nonce="x"), "nonce": "y"}), 400)
        self.assertRefusedWith("provider_disabled", lambda: client().sign_in_with_id_token(
            {"provider": "github", "token": "x.y.z"}))

    def test_refresh_tokens_unknown_and_reused(self):
        self.assertRefusedWith("refresh_token_not_found", lambda: client().refresh_session("not-a-token"))
        signed_in = client().sign_in_anonymously()
        client().refresh_session(signed_in.session.refresh_token)
        self.assertRefusedWith("refresh_token_already_used",
                               lambda: client().refresh_session(signed_in.session.refresh_token))

    def test_an_identity_of_another_account_cannot_be_linked(self):
        taken = unique("g")
        client().sign_in_with_id_token({"provider": "google", "token": id_token("google", taken)})
        mine = client().sign_in_with_id_token({"provider": "apple", "token": id_token("apple", unique("a"))})
        answer = httpx.post(f"{SERVER['auth']}/token", params={"grant_type": "id_token"},
                            headers={"apikey": ANON_KEY, "Authorization": f"Bearer {mine.session.access_token}",
                                     "X-Supabase-Api-Version": "2024-01-01"},
                            json={"provider": "google", "id_token": id_token("google", taken), "link_identity": True})
        self.assertEqual(answer.status_code, 422)
        self.assertEqual(answer.headers["x-supabase-api-version"], "2024-01-01")
        body = answer.json()
        self.assertEqual((body["code"], body["error_code"]), ("identity_already_exists", "identity_already_exists"))
        self.assertEqual(body["msg"], body["message"])

    def test_link_attempts_over_the_limit(self):
        token = client().sign_in_with_id_token({"provider": "google", "token": id_token("google", unique("g"))})
        statuses = []
        for _ in range(5):
            answer = httpx.post(f"{SERVER['auth']}/token", params={"grant_type": "id_token"},
                                headers={"apikey": ANON_KEY, "Authorization": f"Bearer {token.session.access_token}"},
                                json={"provider": "google", "id_token": id_token("google", unique("g2")),
                                      "link_identity": True})
            statuses.append((answer.status_code, answer.json().get("code")))
        self.assertEqual(statuses[-1], (429, "over_request_rate_limit"))

    def test_a_bad_bearer_on_user_endpoints(self):
        self.assertRefusedWith("bad_jwt", lambda: client().get_user("not.a.jwt"), 403)

    def test_unsupported_features_are_named(self):
        self.assertRefusedWith("unsupported_grant_type", lambda: client().sign_in_with_password(
            {"email": "a@example.com", "password": "secret-secret"}))
        self.assertRefusedWith("email_provider_disabled", lambda: client().sign_up(
            {"email": "a@example.com", "password": "secret-secret"}))
        recover = self.assertRefusedWith("feature_not_supported", lambda: client().reset_password_for_email(
            "a@example.com"), 501)
        self.assertIn("not supported by Lanyard", recover.message)

    def test_the_api_key_is_required_when_configured(self):
        keyless = SyncGoTrueClient(url=SERVER["auth"], auto_refresh_token=False, persist_session=False)
        self.assertRefusedWith("invalid_api_key", lambda: keyless.sign_in_anonymously(), 401)

    def test_settings_and_health(self):
        settings = httpx.get(f"{SERVER['auth']}/settings", headers={"apikey": ANON_KEY}).json()
        self.assertTrue(settings["external"]["apple"] and settings["external"]["google"])
        # Email codes (signInWithOTP) are offered: `lanyard dev` keeps the mail in its mailbox. Phone is not.
        self.assertTrue(settings["external"]["email"])
        self.assertFalse(settings["external"]["phone"])
        self.assertEqual(httpx.get(f"{SERVER['auth']}/health", headers={"apikey": ANON_KEY}).status_code, 200)


class GuestStoryTests(unittest.TestCase):
    def test_a_guest_with_data_signs_into_an_existing_account_and_keeps_it(self):
        sub = unique("a")
        owner = client().sign_in_with_id_token({"provider": "apple", "token": id_token("apple", sub)})

        guest = client().sign_in_anonymously()
        bearer = {"Authorization": f"Bearer {guest.session.access_token}"}
        saved = httpx.put(f"{SERVER['base']}/v1/data/habits/h1", headers=bearer, json={"data": {"streak": 12}})
        self.assertEqual(saved.status_code, 200, saved.text)

        # The guest's client sends its session's token, so the server merges the guest into the account.
        merged = client(**bearer).sign_in_with_id_token({"provider": "apple", "token": id_token("apple", sub)})
        self.assertEqual(merged.user.id, owner.user.id)
        record = httpx.get(f"{SERVER['base']}/v1/data/habits/h1",
                           headers={"Authorization": f"Bearer {merged.session.access_token}"})
        self.assertEqual(record.status_code, 200)
        self.assertEqual(record.json()["data"], {"streak": 12})

    def test_an_anon_key_or_a_foreign_token_as_bearer_is_ignored(self):
        for bearer in [ANON_KEY, "eyJhbGciOiJIUzI1NiJ9.e30.c2ln"]:
            signed_in = client(Authorization=f"Bearer {bearer}").sign_in_with_id_token(
                {"provider": "google", "token": id_token("google", unique("g"))})
            self.assertFalse(signed_in.user.is_anonymous)
            self.assertIsNotNone(client(Authorization=f"Bearer {bearer}").sign_in_anonymously().session)


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)


def mailbox_code(address):
    """The code `lanyard dev` kept in the emulator's mailbox instead of sending it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        mails = httpx.get(f"{SERVER['base']}/_emulator/mail", params={"to": address}).json()
        if mails:
            return mails[0]["code"], mails[0]
        time.sleep(0.05)
    raise AssertionError(f"no mail to {address}")


class RedirectSignInTests(unittest.TestCase):
    """signInWithOAuth and exchangeCodeForSession with the PKCE flow; a browser (httpx, following nothing) between:
    the provider is the emulator's page in dev mode, the way back GoTrue's /auth/v1/callback."""
    APP = "http://localhost:5173/auth/callback"

    @staticmethod
    def pkce_client():
        return SyncGoTrueClient(url=SERVER["auth"], headers={"apikey": ANON_KEY}, flow_type="pkce",
                                auto_refresh_token=False, persist_session=False)

    def browse(self, url, sub, **fields):
        """The browser from the client's URL to the app's page; no apikey on any navigation. The app's query."""
        with httpx.Client(follow_redirects=False) as browser:
            started = browser.get(url)
            self.assertEqual(started.status_code, 302, started.text)
            page = started.headers["location"]
            asked = {k: v[0] for k, v in parse_qs(urlsplit(page).query).items()}
            self.assertEqual(asked["redirect_uri"], f"{SERVER['auth']}/callback")
            kept = {k: asked.get(k, "") for k in ("client_id", "redirect_uri", "state", "nonce", "response_mode", "scope")}
            answer = browser.post(page, data={**kept, "sub": sub, **fields})
            if answer.status_code == 302:
                back = browser.get(answer.headers["location"])
            else:  # Apple's form_post: the page's hidden fields, posted to GoTrue's callback
                action = unescape(re.search(r'action="([^"]*)"', answer.text).group(1))
                hidden = {unescape(n): unescape(v) for n, v in
                          re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', answer.text)}
                back = browser.post(action, data=hidden)
            self.assertEqual(back.status_code, 302, back.text)
            arrived = back.headers["location"]
            self.assertTrue(arrived.startswith(self.APP), arrived)
            return {k: v[0] for k, v in parse_qs(urlsplit(arrived).query).items()}

    def test_google_by_redirect_then_exchange_code_for_session(self):
        supabase = self.pkce_client()
        sub = unique("google")
        oauth = supabase.sign_in_with_oauth({"provider": "google", "options": {"redirect_to": self.APP}})
        self.assertIn("code_challenge_method=s256", oauth.url)
        arrived = self.browse(oauth.url, sub, email="grace@example.com", name="Grace Hopper")
        signed_in = supabase.exchange_code_for_session({"auth_code": arrived["code"]})
        self.assertEqual(signed_in.user.app_metadata, {"provider": "google", "providers": ["google"]})
        self.assertEqual(signed_in.user.identities[0].id, sub)
        self.assertEqual(supabase.get_user().user.id, signed_in.user.id)
        # The code is spent: Supabase's client hears GoTrue's name for it.
        again = self.pkce_client()
        again._storage.set_item(f"{again._storage_key}-code-verifier", "x" * 43)
        with self.assertRaises(AuthApiError) as used:
            again.exchange_code_for_session({"auth_code": arrived["code"]})
        self.assertEqual(used.exception.code, "flow_state_not_found")

    def test_apple_by_form_post_keeps_its_name_and_azure_is_microsoft(self):
        supabase = self.pkce_client()
        oauth = supabase.sign_in_with_oauth({"provider": "apple", "options": {"redirect_to": self.APP}})
        arrived = self.browse(oauth.url, unique("apple"), email="a@privaterelay.appleid.com",
                              given_name="Ada", family_name="Lovelace")
        apple = supabase.exchange_code_for_session({"auth_code": arrived["code"]})
        self.assertEqual(apple.user.user_metadata.get("full_name"), "Ada Lovelace")

        azure = self.pkce_client()
        oauth = azure.sign_in_with_oauth({"provider": "azure", "options": {"redirect_to": self.APP}})
        arrived = self.browse(oauth.url, unique("oid"))
        signed_in = azure.exchange_code_for_session({"auth_code": arrived["code"]})
        self.assertEqual(signed_in.user.app_metadata["provider"], "azure")

    def test_a_wrong_verifier_and_the_implicit_flow_are_refused(self):
        supabase = self.pkce_client()
        oauth = supabase.sign_in_with_oauth({"provider": "google", "options": {"redirect_to": self.APP}})
        arrived = self.browse(oauth.url, unique("google"))
        with self.assertRaises(AuthApiError) as wrong:
            supabase.exchange_code_for_session({"auth_code": arrived["code"], "code_verifier": "y" * 43})
        self.assertEqual(wrong.exception.code, "bad_code_verifier")
        implicit = client().sign_in_with_oauth({"provider": "google", "options": {"redirect_to": self.APP}})
        page = httpx.get(implicit.url, follow_redirects=False)
        self.assertEqual(page.status_code, 400)
        self.assertIn("flowType", page.text)
        # An address not listed is named on the page, and the browser is sent nowhere.
        unlisted = self.pkce_client().sign_in_with_oauth(
            {"provider": "google", "options": {"redirect_to": "https://evil.example/steal"}})
        refused = httpx.get(unlisted.url, follow_redirects=False)
        self.assertEqual(refused.status_code, 400)
        self.assertIn("https://evil.example/steal", refused.text)
        self.assertNotIn("location", refused.headers)


class EmailOTPTests(unittest.TestCase):
    def test_sign_in_with_otp_then_verify_otp_signs_up_and_in(self):
        address = f"{unique('ada')}@example.com"
        supabase = client()
        sent = supabase.sign_in_with_otp({"email": address})
        self.assertIsNone(sent.session)
        code, mail = mailbox_code(address)
        self.assertIsNone(mail["link"], "GoTrue's clients hold no flow secret: a code only")
        with self.assertRaises(AuthApiError) as wrong:
            supabase.verify_otp({"email": address, "token": "000000" if code != "000000" else "111111", "type": "email"})
        self.assertEqual(wrong.exception.code, "otp_expired")
        verified = supabase.verify_otp({"email": address, "token": code, "type": "email"})
        self.assertEqual(verified.user.email, address)
        self.assertEqual(verified.user.app_metadata["provider"], "email")
        self.assertEqual(verified.session.user.id, verified.user.id)
        self.assertEqual(supabase.get_user().user.id, verified.user.id)
        # The code is spent; a second mail within the minute is refused with GoTrue's code.
        with self.assertRaises(AuthApiError) as used:
            supabase.verify_otp({"email": address, "token": code, "type": "email"})
        self.assertEqual(used.exception.code, "otp_expired")
        with self.assertRaises(AuthApiError) as limited:
            client().sign_in_with_otp({"email": address})
        self.assertEqual(limited.exception.code, "over_request_rate_limit")

    def test_a_bad_address_is_refused_and_phone_is_not_offered(self):
        with self.assertRaises(AuthApiError) as bad:
            client().sign_in_with_otp({"email": "ada@example.com\r\nBcc: all@example.com"})
        self.assertEqual(bad.exception.code, "validation_failed")
        with self.assertRaises(AuthApiError) as phone:
            client().sign_in_with_otp({"phone": "+15555550100"})
        self.assertEqual(phone.exception.code, "phone_provider_disabled")
