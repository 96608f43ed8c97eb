"""Mail over real SMTP servers (Python's aiosmtpd, from PyPI): `lanyard dev` with LANYARD_SMTP_URL sends each flow's
mail to a server that requires STARTTLS and AUTH, with a certificate from a test CA; a server that offers no STARTTLS
gets nothing (not even MAIL FROM), the mail fails at once, the flow says undeliverable and the app's backend hears
`email.failed`; a certificate Lanyard does not trust is retried, never sent in the clear.

Run: python3 Tests/Mail/test_smtp.py
"""
import datetime
import email
import email.policy
import http.server
import ipaddress
import json
import os
import secrets
import socket
import ssl
import sys
import tempfile
import threading
import time
import unittest

import httpx
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from lanyard_dev import LanyardDev  # noqa: E402

ADMIN_KEY = "admin-key-for-the-smtp-tests-" + secrets.token_hex(8)
WEBHOOK_SECRET = "whsec_" + "c2VjcmV0LWZvci10aGUtc210cC10ZXN0cw=="
FOLDER = tempfile.mkdtemp(prefix="lanyard-smtp-")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition, seconds=60):
    """Waits for the event `condition` tells of; only a hang reaches the bound."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    return condition()


def make_certificates():
    """A test CA, and a certificate it signs for localhost: Lanyard trusts it only through LANYARD_SMTP_CA_FILE."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Lanyard test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
                   .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                               x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                   .sign(ca_key, hashes.SHA256()))
    paths = {name: os.path.join(FOLDER, name) for name in ("ca.pem", "server.pem", "server.key")}
    with open(paths["ca.pem"], "wb") as out:
        out.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.pem"], "wb") as out:
        out.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(paths["server.key"], "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    return paths


class Recorder:
    """An SMTP server's handler: what reached MAIL FROM, and the messages accepted."""
    def __init__(self):
        self.mail_from = []
        self.messages = []
        self.logins = []

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        self.mail_from.append(address)
        envelope.mail_from = address
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append({"from": envelope.mail_from, "to": list(envelope.rcpt_tos), "content": envelope.content,
                              "tls": session.ssl is not None})
        return "250 Message accepted"

    def authenticator(self, server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login == b"mailer" and auth_data.password == b"s3cret p@ss"
        self.logins.append((mechanism, ok, session.ssl is not None))
        return AuthResult(success=ok)


class WebhookReceiver(http.server.BaseHTTPRequestHandler):
    events = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        WebhookReceiver.events.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


SERVERS = {}


def setUpModule():
    paths = make_certificates()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(paths["server.pem"], paths["server.key"])
    SERVERS["tls"] = Recorder()
    SERVERS["tls_port"] = free_port()
    SERVERS["tls_controller"] = Controller(SERVERS["tls"], hostname="127.0.0.1", port=SERVERS["tls_port"],
                                           tls_context=context, require_starttls=True,
                                           authenticator=SERVERS["tls"].authenticator, auth_require_tls=True)
    SERVERS["tls_controller"].start()
    SERVERS["implicit"] = Recorder()
    SERVERS["implicit_port"] = free_port()
    SERVERS["implicit_controller"] = Controller(SERVERS["implicit"], hostname="127.0.0.1", port=SERVERS["implicit_port"],
                                                ssl_context=context, authenticator=SERVERS["implicit"].authenticator,
                                                auth_require_tls=False)
    SERVERS["implicit_controller"].start()
    SERVERS["plain"] = Recorder()
    SERVERS["plain_port"] = free_port()
    SERVERS["plain_controller"] = Controller(SERVERS["plain"], hostname="127.0.0.1", port=SERVERS["plain_port"],
                                             authenticator=SERVERS["plain"].authenticator, auth_require_tls=False)
    SERVERS["plain_controller"].start()
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), WebhookReceiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    SERVERS["receiver"] = receiver
    common = dict(LANYARD_ADMIN_KEY=ADMIN_KEY, LANYARD_EMAIL_FROM="Lanyard Tests <no-reply@lanyard.example>",
                  LANYARD_WEBHOOK_URL=f"http://127.0.0.1:{receiver.server_address[1]}/hook",
                  LANYARD_WEBHOOK_SECRET=WEBHOOK_SECRET)
    # The password holds characters a URL must escape.
    SERVERS["trusted"] = LanyardDev(LANYARD_SMTP_URL=f"smtp://mailer:s3cret%20p%40ss@localhost:{SERVERS['tls_port']}",
                                    LANYARD_SMTP_CA_FILE=paths["ca.pem"], **common)
    SERVERS["no_starttls"] = LanyardDev(LANYARD_SMTP_URL=f"smtp://mailer:s3cret%20p%40ss@localhost:{SERVERS['plain_port']}",
                                        LANYARD_SMTP_CA_FILE=paths["ca.pem"], **common)
    SERVERS["smtps"] = LanyardDev(LANYARD_SMTP_URL=f"smtps://mailer:s3cret%20p%40ss@localhost:{SERVERS['implicit_port']}",
                                  LANYARD_SMTP_CA_FILE=paths["ca.pem"], **common)
    SERVERS["untrusted"] = LanyardDev(LANYARD_SMTP_URL=f"smtp://mailer:s3cret%20p%40ss@localhost:{SERVERS['tls_port']}",
                                      **common)


def tearDownModule():
    for name in ("trusted", "no_starttls", "smtps", "untrusted"):
        if name in SERVERS:
            SERVERS[name].stop()
    for name in ("tls_controller", "implicit_controller", "plain_controller"):
        if name in SERVERS:
            SERVERS[name].stop()
    if "receiver" in SERVERS:
        SERVERS["receiver"].shutdown()


def start(lanyard, address):
    answer = httpx.post(f"{lanyard.base}/v1/auth/email/start", json={"email": address})
    assert answer.status_code == 202, answer.text
    return answer.json()


def deliveries(lanyard, status=None):
    query = f"?status={status}" if status else ""
    answer = httpx.get(f"{lanyard.base}/v1/admin/email/deliveries{query}", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    answer.raise_for_status()
    return answer.json()


class SMTPTests(unittest.TestCase):
    def test_a_flows_mail_goes_over_starttls_with_auth_and_both_parts(self):
        address = f"ada-{secrets.token_hex(4)}@example.com"
        flow = start(SERVERS["trusted"], address)
        recorder = SERVERS["tls"]
        message = wait_for(lambda: next((m for m in recorder.messages if address in m["to"]), None))
        self.assertIsNotNone(message, "the mail reached the SMTP server")
        self.assertTrue(message["tls"], "the mail was sent after STARTTLS")
        self.assertEqual(message["from"], "no-reply@lanyard.example")
        self.assertIn(("PLAIN", True, True), recorder.logins)
        parsed = email.message_from_bytes(message["content"], policy=email.policy.default)
        self.assertEqual(parsed["To"].addresses[0].addr_spec, address)
        sender = parsed["From"].addresses[0]
        self.assertEqual((sender.display_name, sender.addr_spec), ("Lanyard Tests", "no-reply@lanyard.example"))
        self.assertEqual(parsed["Subject"], "Your sign-in code")
        self.assertTrue(parsed["Message-ID"].startswith(f"<{flow['flow_id']}@"))
        self.assertIsNotNone(parsed["Date"])
        self.assertEqual(parsed.get_content_type(), "multipart/alternative")
        text = parsed.get_body(("plain",)).get_content()
        html = parsed.get_body(("html",)).get_content()
        code = next(word for word in text.split() if word.isdigit() and len(word) == 6)
        self.assertIn(code, html)
        self.assertIn("/e/", text)
        # The code from the real mail signs in; the stored mail is gone once sent.
        session = httpx.post(f"{SERVERS['trusted'].base}/v1/auth/email/verify",
                             json={"flow_id": flow["flow_id"], "flow_secret": flow["flow_secret"], "code": code})
        self.assertEqual(session.status_code, 200, session.text)
        self.assertEqual(session.json()["linked_providers"], ["email"])
        sent = [row for row in deliveries(SERVERS["trusted"], "sent") if row["recipient"] == address]
        self.assertEqual(len(sent), 1)
        self.assertEqual(sent[0]["attempts"], 1)
        mailbox = httpx.get(f"{SERVERS['trusted'].base}/_emulator/mail?to={address}").json()
        self.assertEqual(mailbox, [], "a sent mail's body is erased")
        # An operator's recovery code: mailed (code only), and the app's backend hears of it.
        user_id = session.json()["user"]["id"]
        recovery = httpx.post(f"{SERVERS['trusted'].base}/v1/admin/users/{user_id}/recovery",
                              headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        self.assertEqual(recovery.status_code, 202, recovery.text)
        second = wait_for(lambda: [m for m in recorder.messages if address in m["to"]][1:])
        self.assertTrue(second, "the recovery mail reached the SMTP server")
        recovered = email.message_from_bytes(second[0]["content"], policy=email.policy.default)
        self.assertEqual(recovered["Subject"], "Get back into your account")
        self.assertNotIn("/e/", recovered.get_body(("plain",)).get_content())
        event = wait_for(lambda: next((e for e in WebhookReceiver.events
                                       if e["type"] == "user.recovery_sent" and e["data"].get("user_id") == user_id), None))
        self.assertIsNotNone(event, "the app's backend heard user.recovery_sent")
        self.assertEqual(event["data"]["actor"], "admin")

    def test_smtps_speaks_tls_from_the_first_byte(self):
        address = f"cy-{secrets.token_hex(4)}@example.com"
        start(SERVERS["smtps"], address)
        message = wait_for(lambda: next((m for m in SERVERS["implicit"].messages if address in m["to"]), None))
        self.assertIsNotNone(message, "the mail reached the SMTPS server")
        # The listener speaks only TLS (aiosmtpd marks only STARTTLS sessions as TLS): a plain client gets nowhere.
        self.assertIn(("PLAIN", True), [login[:2] for login in SERVERS["implicit"].logins])

    def test_a_server_without_starttls_gets_nothing_and_the_flow_says_undeliverable(self):
        address = f"bob-{secrets.token_hex(4)}@example.com"
        lanyard = SERVERS["no_starttls"]
        flow = start(lanyard, address)
        failed = wait_for(lambda: [row for row in deliveries(lanyard, "failed") if row["recipient"] == address])
        self.assertTrue(failed, "the mail failed")
        self.assertIn("STARTTLS", failed[0]["last_error"])
        self.assertEqual(failed[0]["attempts"], 1, "not retried: a server without STARTTLS never gets the mail")
        self.assertEqual(SERVERS["plain"].mail_from, [], "no MAIL FROM reached the server")
        self.assertEqual(SERVERS["plain"].logins, [], "no credentials reached the server")
        self.assertEqual(SERVERS["plain"].messages, [])
        answer = httpx.post(f"{lanyard.base}/v1/auth/email/verify",
                            json={"flow_id": flow["flow_id"], "flow_secret": flow["flow_secret"], "code": "000000"})
        self.assertEqual(answer.status_code, 401)
        self.assertEqual(answer.json()["error"]["details"]["reason"], "undeliverable")
        event = wait_for(lambda: next((e for e in WebhookReceiver.events
                                       if e["type"] == "email.failed" and e["data"].get("email") == address), None))
        self.assertIsNotNone(event, "the app's backend heard email.failed")
        self.assertEqual(event["data"]["flow_id"], flow["flow_id"])
        self.assertEqual(event["data"]["code"], "EMAIL_UNDELIVERABLE")

    def test_an_untrusted_certificate_is_retried_and_nothing_is_sent(self):
        address = f"eve-{secrets.token_hex(4)}@example.com"
        lanyard = SERVERS["untrusted"]
        start(lanyard, address)
        retrying = wait_for(lambda: [row for row in deliveries(lanyard, "pending")
                                     if row["recipient"] == address and row["attempts"] >= 1])
        self.assertTrue(retrying, "the attempt failed and waits for a retry")
        self.assertIn("TLS", retrying[0]["last_error"])
        self.assertFalse(any(address in m["to"] for m in SERVERS["tls"].messages))
        self.assertFalse(any(address in str(sender) for sender in SERVERS["tls"].mail_from))


if __name__ == "__main__":
    unittest.main(verbosity=2)
