"""Passkey sign-in beside Apple's existing-user sign-in, measured from outside with one client (reference section 19).

Starts `lanyard dev` ($LANYARD_BINARY, default .build/debug/lanyard; use a release build for numbers to compare),
registers passkeys for `--accounts` accounts with a software authenticator (P-256, counter 0 as synced passkeys
report), signs the same number of accounts up with Apple, then for `--seconds` each at `--concurrency`: a passkey
sign-in is its two requests (options, then the signed assertion); an Apple sign-in is one request with a token
minted beforehand. Prints one JSON line.
Run: python3 Benchmarks/passkey_signin.py [--accounts 50] [--seconds 20] [--concurrency 16]
"""
import argparse
import asyncio
import base64
import hashlib
import json
import os
import struct
import sys
import time

import httpx
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tests", "python"))
from lanyard_dev import LanyardDev  # noqa: E402


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cbor_bytes(data):
    return (bytes([0x58, len(data)]) if len(data) < 256 else bytes([0x59]) + struct.pack(">H", len(data))) + data


def cbor_text(text):
    return bytes([0x60 | len(text)]) + text.encode()


class Passkey:
    """A software passkey for relying party `localhost`: registration and assertions, signed for real."""
    def __init__(self, origin):
        self.origin = origin
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.id = os.urandom(16)
        self.rp_hash = hashlib.sha256(b"localhost").digest()

    def client_data(self, kind, challenge):
        return json.dumps({"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": False},
                          separators=(",", ":")).encode()

    def create(self, options):
        numbers = self.key.public_key().public_numbers()
        cose = (bytes([0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21]) + cbor_bytes(numbers.x.to_bytes(32, "big"))
                + bytes([0x22]) + cbor_bytes(numbers.y.to_bytes(32, "big")))
        auth_data = self.rp_hash + bytes([0x45]) + struct.pack(">I", 0) + bytes(16) + struct.pack(">H", 16) + self.id + cose
        attestation = (bytes([0xA3]) + cbor_text("fmt") + cbor_text("none") + cbor_text("attStmt") + bytes([0xA0])
                       + cbor_text("authData") + cbor_bytes(auth_data))
        return {"id": b64url(self.id), "rawId": b64url(self.id), "type": "public-key",
                "response": {"clientDataJSON": b64url(self.client_data("webauthn.create", options["challenge"])),
                             "attestationObject": b64url(attestation)}}

    def get(self, options):
        client_data = self.client_data("webauthn.get", options["challenge"])
        auth_data = self.rp_hash + bytes([0x05]) + struct.pack(">I", 0)
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": b64url(self.id), "rawId": b64url(self.id), "type": "public-key",
                "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                             "signature": b64url(signature), "userHandle": None}}


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


async def run(seconds, concurrency, attempt):
    """Runs `attempt` from `concurrency` workers for `seconds`: the latencies of those that succeeded, and failures."""
    latencies, failures = [], 0
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency)) as client:
        async def worker(index):
            nonlocal failures
            turn = index
            while time.monotonic() < deadline:
                start = time.monotonic()
                if await attempt(client, turn):
                    latencies.append(time.monotonic() - start)
                else:
                    failures += 1
                turn += concurrency
        await asyncio.gather(*(worker(index) for index in range(concurrency)))
    return latencies, failures


def summary(latencies, failures, seconds):
    return {"per_second": round(len(latencies) / seconds, 1), "p50_ms": round(percentile(latencies, 0.5) * 1000, 2),
            "p99_ms": round(percentile(latencies, 0.99) * 1000, 2), "completed": len(latencies), "failed": failures}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accounts", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--concurrency", type=int, default=16)
    arguments = parser.parse_args()
    lanyard = LanyardDev(LANYARD_RATE_LIMITS="off")
    try:
        base = lanyard.base
        origin = base.replace("127.0.0.1", "localhost")
        passkeys = []
        for _ in range(arguments.accounts):
            guest = httpx.post(f"{base}/v1/auth/anonymous", json={}).json()["access_token"]
            bearer = {"Authorization": f"Bearer {guest}"}
            options = httpx.post(f"{base}/v1/auth/passkeys/register/options", json={}, headers=bearer).json()
            passkey = Passkey(origin)
            registered = httpx.post(f"{base}/v1/auth/passkeys/register", json={"credential": passkey.create(options)},
                                    headers=bearer)
            assert registered.status_code == 201, registered.text
            passkeys.append(passkey)
        tokens = [lanyard.id_token("apple", f"bench-apple-{index}") for index in range(arguments.accounts)]
        for token in tokens:
            assert httpx.post(f"{base}/v1/auth/signin/apple", json={"id_token": token}).status_code == 200

        async def passkey_signin(client, turn):
            options = (await client.post(f"{base}/v1/auth/passkeys/signin/options", json={})).json()
            answer = await client.post(f"{base}/v1/auth/passkeys/signin",
                                       json={"credential": passkeys[turn % len(passkeys)].get(options)})
            return answer.status_code == 200

        async def apple_signin(client, turn):
            answer = await client.post(f"{base}/v1/auth/signin/apple", json={"id_token": tokens[turn % len(tokens)]})
            return answer.status_code == 200

        results = {}
        for name, attempt in [("apple_existing_user", apple_signin), ("passkey", passkey_signin)]:
            asyncio.run(run(2, arguments.concurrency, attempt))  # warm-up
            results[name] = summary(*asyncio.run(run(arguments.seconds, arguments.concurrency, attempt)), arguments.seconds)
        print(json.dumps({"benchmark": "passkey_signin", "binary": os.environ.get("LANYARD_BINARY", ".build/debug/lanyard"),
                          "accounts": arguments.accounts, "seconds": arguments.seconds,
                          "concurrency": arguments.concurrency, **results}))
    finally:
        lanyard.stop()


if __name__ == "__main__":
    main()
