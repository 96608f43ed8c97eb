"""No secret reaches the log, at any level (reference section 25): `lanyard dev` at `trace` with every secret
configured (the master key, a webhook secret, an admin key, GoTrue's anon key, SMTP credentials) runs each flow
for real: Apple sign-in with an authorization code (the emulator's Apple key signs the client secret), refresh,
email through a real SMTP server (aiosmtpd, STARTTLS, AUTH) with its code and its link's page, a passkey
registered and used (a software authenticator written here), webhooks to a real receiver, GoTrue's OTP, the admin
API, account deletion (Apple's token revoked). Then the whole log is searched for every secret, in every form a
careless print would take (base64, hex, a byte array), and for the codes, link tokens, flow secrets, refresh and
access tokens the flows handled.

Run: python3 Tests/Logs/test_secrets_never_logged.py
"""
import base64
import email
import email.policy
import hashlib
import http.server
import json
import os
import re
import secrets
import sys
import threading
import unittest

import httpx
from aiosmtpd.controller import Controller
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Mail"))
from lanyard_dev import LanyardDev  # noqa: E402
from test_smtp import Recorder, free_port, make_certificates, wait_for  # noqa: E402

MASTER_KEY = secrets.token_bytes(32)
WEBHOOK_KEY = secrets.token_bytes(24)
WEBHOOK_SECRET = "whsec_" + base64.b64encode(WEBHOOK_KEY).decode()
ADMIN_KEY = "admin-" + secrets.token_hex(24)
ANON_KEY = "anon-" + secrets.token_hex(24)
SMTP_PASSWORD = "s3cret p@ss"


def derived(purpose):
    """A key derived from the master key as Lanyard derives it (HKDF-SHA256, no salt)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose.encode()).derive(MASTER_KEY)


def forms(key):
    """Every way a careless print could write these bytes."""
    return [base64.b64encode(key).decode(), base64.urlsafe_b64encode(key).decode().rstrip("="), key.hex(),
            ", ".join(str(b) for b in key[:8]), "".join(f"\\x{b:02x}" for b in key[:8])]


# A minimal WebAuthn authenticator: ES256, attestation "none", what a platform authenticator sends.
def cbor(value):
    def head(major, length):
        if length < 24:
            return bytes([major << 5 | length])
        if length < 256:
            return bytes([major << 5 | 24, length])
        return bytes([major << 5 | 25]) + length.to_bytes(2, "big")
    if isinstance(value, bool):
        return bytes([0xF5 if value else 0xF4])
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        return head(3, len(value.encode())) + value.encode()
    if isinstance(value, dict):
        return head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(value)


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator:
    def __init__(self, origin):
        self.origin = origin
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = secrets.token_bytes(16)
        self.user_handle = None

    def client_data(self, kind, challenge):
        return json.dumps({"type": kind, "challenge": challenge, "origin": self.origin}).encode()

    def create(self, options):
        numbers = self.key.public_key().public_numbers()
        cose = cbor({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        auth_data = (hashlib.sha256(options["rp"]["id"].encode()).digest() + bytes([0x45]) + (0).to_bytes(4, "big")
                     + bytes(16) + len(self.credential_id).to_bytes(2, "big") + self.credential_id + cose)
        self.user_handle = options["user"]["id"]
        return {"id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
                "response": {"clientDataJSON": b64url(self.client_data("webauthn.create", options["challenge"])),
                             "attestationObject": b64url(cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})),
                             "transports": ["internal"]}}

    def get(self, options, count):
        client_data = self.client_data("webauthn.get", options["challenge"])
        auth_data = hashlib.sha256(options["rpId"].encode()).digest() + bytes([0x05]) + count.to_bytes(4, "big")
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
                "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                             "signature": b64url(signature), "userHandle": self.user_handle}}


def text_of(message):
    """The plain-text part of a mail as the SMTP server received it."""
    parsed = email.message_from_bytes(message["content"], policy=email.policy.default)
    return parsed.get_body(("plain",)).get_content()


class Receiver(http.server.BaseHTTPRequestHandler):
    deliveries = []

    def do_POST(self):
        Receiver.deliveries.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


class SecretsNeverLoggedTests(unittest.TestCase):
    def test_every_flow_at_trace_leaves_no_secret_in_the_log(self):
        certificates = make_certificates()
        recorder = Recorder()
        import ssl
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certificates["server.pem"], certificates["server.key"])
        smtp_port = free_port()
        controller = Controller(recorder, hostname="127.0.0.1", port=smtp_port, tls_context=context, require_starttls=True,
                                authenticator=recorder.authenticator, auth_require_tls=True, auth_exclude_mechanism=["CRAM-MD5"])
        controller.start()
        receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        # The test's SMTP server authenticates "mailer" with SMTP_PASSWORD (Recorder's rule).
        server = LanyardDev(
            LANYARD_LOG_LEVEL="trace", LANYARD_MASTER_KEY=base64.b64encode(MASTER_KEY).decode(),
            LANYARD_WEBHOOK_URL=f"http://127.0.0.1:{receiver.server_address[1]}/hook", LANYARD_WEBHOOK_SECRET=WEBHOOK_SECRET,
            LANYARD_ADMIN_KEY=ADMIN_KEY, LANYARD_GOTRUE_ANON_KEY=ANON_KEY,
            LANYARD_SMTP_URL=f"smtp://mailer:{SMTP_PASSWORD.replace(' ', '%20').replace('@', '%40')}@localhost:{smtp_port}",
            LANYARD_SMTP_CA_FILE=certificates["ca.pem"], LANYARD_EMAIL_FROM="Lanyard <no-reply@lanyard.example>")
        handled = []  # every token, code and secret the flows saw
        try:
            base = server.base
            admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
            # Apple with an authorization code: Lanyard signs a client secret with the Apple key and keeps Apple's
            # refresh token sealed.
            code = httpx.post(f"{base}/_emulator/apple/authorization-code", json={"sub": "ada"}).json()["code"]
            signed = httpx.post(f"{base}/v1/auth/signin/apple", json={
                "id_token": server.id_token("apple", "ada", email="ada@example.com"), "authorization_code": code})
            self.assertEqual(signed.status_code, 200, signed.text)
            session = signed.json()
            handled += [code, session["access_token"], session["refresh_token"]]
            refreshed = httpx.post(f"{base}/v1/auth/refresh", json={"refresh_token": session["refresh_token"]}).json()
            handled += [refreshed["access_token"], refreshed["refresh_token"]]
            bearer = {"Authorization": f"Bearer {refreshed['access_token']}"}
            self.assertEqual(httpx.get(f"{base}/v1/users/me", headers=bearer).status_code, 200)
            self.assertEqual(httpx.post(f"{base}/v1/auth/refresh", json={"refresh_token": "x" + session["refresh_token"]})
                             .status_code, 401)

            # Email over SMTP: the code from the real mail, the link's page looked at and confirmed.
            started = httpx.post(f"{base}/v1/auth/email/start", json={"email": "mail@example.com"}).json()
            handled.append(started["flow_secret"])
            mail = wait_for(lambda: [m for m in recorder.messages if "mail@example.com" in m["to"]])
            self.assertTrue(mail, "the mail reached the SMTP server")
            content = text_of(mail[0])
            mail_code = re.search(r"\b(\d{6})\b", content).group(1)
            link_token = re.search(r"/e/([A-Za-z0-9_-]{43})", content).group(1)
            handled += [mail_code, link_token]
            self.assertEqual(httpx.get(f"{base}/e/{link_token}").status_code, 200)
            self.assertEqual(httpx.post(f"{base}/e/{link_token}", data={"match": str(started["match"])}).status_code, 200)
            finished = httpx.post(f"{base}/v1/auth/email/complete", json={
                "flow_id": started["flow_id"], "flow_secret": started["flow_secret"], "wait": 5})
            self.assertEqual(finished.status_code, 200, finished.text)
            handled += [finished.json()["access_token"], finished.json()["refresh_token"]]
            wrong = httpx.post(f"{base}/v1/auth/email/verify", json={
                "flow_id": started["flow_id"], "flow_secret": started["flow_secret"], "code": "000000"})
            self.assertEqual(wrong.status_code, 401)
            # GoTrue's OTP, with the anon key.
            gotrue = {"apikey": ANON_KEY}
            self.assertEqual(httpx.post(f"{base}/auth/v1/otp", json={"email": "otp@example.com"}, headers=gotrue).status_code, 200)
            otp_mail = wait_for(lambda: [m for m in recorder.messages if "otp@example.com" in m["to"]])
            otp_code = re.search(r"\b(\d{6})\b", text_of(otp_mail[0])).group(1)
            handled.append(otp_code)
            verified = httpx.post(f"{base}/auth/v1/verify", json={"type": "email", "email": "otp@example.com",
                                                                  "token": otp_code}, headers=gotrue)
            self.assertEqual(verified.status_code, 200, verified.text)
            handled += [verified.json()["access_token"], verified.json()["refresh_token"]]

            # A passkey registered and used.
            port = base.rsplit(":", 1)[1]
            authenticator = Authenticator(f"http://localhost:{port}")
            options = httpx.post(f"{base}/v1/auth/passkeys/register/options", headers=bearer).json()
            registered = httpx.post(f"{base}/v1/auth/passkeys/register", headers=bearer,
                                    json={"credential": authenticator.create(options)})
            self.assertEqual(registered.status_code, 201, registered.text)
            sign_in_options = httpx.post(f"{base}/v1/auth/passkeys/signin/options").json()
            handled += [options["challenge"], sign_in_options["challenge"]]
            passkey = httpx.post(f"{base}/v1/auth/passkeys/signin",
                                 json={"credential": authenticator.get(sign_in_options, 1)})
            self.assertEqual(passkey.status_code, 200, passkey.text)
            handled += [passkey.json()["access_token"], passkey.json()["refresh_token"]]

            # The admin API, right and wrong keys; an operator's recovery code by mail.
            user_id = session["user"]["id"]
            self.assertEqual(httpx.get(f"{base}/v1/admin/users", headers=admin).status_code, 200)
            self.assertEqual(httpx.get(f"{base}/v1/admin/users", headers={"Authorization": "Bearer " + ADMIN_KEY[::-1]})
                             .status_code, 403)
            mail_user = finished.json()["user"]["id"]
            self.assertEqual(httpx.post(f"{base}/v1/admin/users/{mail_user}/recovery", headers=admin).status_code, 202)
            recovery_mail = wait_for(lambda: [m for m in recorder.messages if "mail@example.com" in m["to"]][1:])
            handled.append(re.search(r"\b(\d{6})\b", text_of(recovery_mail[0])).group(1))

            # Deletion: Apple's token revoked through the outbox; webhooks delivered, signed.
            fresh = httpx.post(f"{base}/v1/auth/signin/apple", json={
                "id_token": server.id_token("apple", "ada", email="ada@example.com")}).json()
            handled += [fresh["access_token"], fresh["refresh_token"]]
            self.assertEqual(httpx.delete(f"{base}/v1/users/me", headers={
                "Authorization": f"Bearer {fresh['access_token']}"}).status_code, 204)
            revoked = wait_for(lambda: httpx.get(f"{base}/_emulator/apple/revocations").json()["revoked"])
            self.assertTrue(revoked, "Apple's token was revoked")
            handled += revoked
            self.assertTrue(wait_for(lambda: len(Receiver.deliveries) >= 5), "webhooks were delivered")
            self.assertTrue(user_id)
        finally:
            server.stop()
            controller.stop()
            receiver.shutdown()

        with open(os.path.join(server.folder, "server.log")) as log_file:
            log = log_file.read()
        # The log is a trace: it says a lot, just nothing secret.
        self.assertIn(" trace ", log)
        self.assertIn("debug", log)
        with open(os.path.join(server.folder, "apple-team-key.p8")) as pem:
            apple_key_lines = [line.strip() for line in pem if line.strip() and "-----" not in line]
        searched = {
            "the master key": forms(MASTER_KEY),
            "the refresh successor key": forms(derived("lanyard refresh token successor v1")),
            "the email flows' key": forms(derived("lanyard email flow v1")),
            "the webhook secret": [WEBHOOK_SECRET, base64.b64encode(WEBHOOK_KEY).decode()] + forms(WEBHOOK_KEY),
            "the admin key": [ADMIN_KEY, ADMIN_KEY[::-1]],
            "the anon key": [ANON_KEY],
            "the SMTP password": [SMTP_PASSWORD, "s3cret%20p%40ss", base64.b64encode(b"\0mailer\0" + SMTP_PASSWORD.encode()).decode()],
            "the Apple key": apple_key_lines,
        }
        codes = [value for value in handled if re.fullmatch(r"\d{6}", value)]
        for index, value in enumerate(value for value in handled if value not in codes):
            searched[f"handled value {index}"] = [value] + (value.split(".") if value.count(".") == 2 else [])
        for name, values in searched.items():
            for value in values:
                if len(value) >= 6 and value in log:
                    at = log.index(value)
                    self.fail(f"{name} is in the log: …{log[max(0, at - 120):at + len(value) + 20]}…")
        # A six-digit code could hide in a number of the log (a duration): only a code standing alone counts.
        for code in codes:
            self.assertIsNone(re.search(rf"(?<![\d.]){code}(?![\d.])", log), f"the code {code} is in the log")


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)
