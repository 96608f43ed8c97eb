#!/usr/bin/env python3
"""The benchmark's stand-in for Apple's and Google's key endpoints when the allauth peer (and its identity
provider) is not run beside it: an RSA key per provider in KEYS/apple.pem, KEYS/google.pem and KEYS/acme.pem (made once),
published as JWKS at /apple/auth/keys, /google/oauth2/v3/certs and /acme/keys (with /acme's discovery document), the paths Benchmarks/run.sh points Lanyard
at. lanyard-bench signs its tokens with the same PEM files.

    python3 Benchmarks/key_server.py --keys DIR --port 8702
"""
import argparse
import base64
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def load_or_create(path):
    if os.path.exists(path):
        with open(path, "rb") as file:
            return serialization.load_pem_private_key(file.read(), password=None)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
        file.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    return key


def unsigned(number):
    return base64.urlsafe_b64encode(number.to_bytes((number.bit_length() + 7) // 8, "big")).rstrip(b"=").decode()


def key_set(provider, key):
    numbers = key.public_key().public_numbers()
    return json.dumps({"keys": [{"kty": "RSA", "alg": "RS256", "use": "sig", "kid": f"bench-{provider}",
                                 "n": unsigned(numbers.n), "e": unsigned(numbers.e)}]}).encode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", required=True)
    parser.add_argument("--port", type=int, default=8702)
    options = parser.parse_args()
    os.makedirs(options.keys, exist_ok=True)
    routes = {path: key_set(provider, load_or_create(os.path.join(options.keys, f"{provider}.pem")))
              for provider, path in [("apple", "/apple/auth/keys"), ("google", "/google/oauth2/v3/certs"),
                                     ("acme", "/acme/keys")]}
    # `acme`, an OpenID Connect provider found through its discovery document (LANYARD_OIDC_ACME_ISSUER).
    issuer = f"http://127.0.0.1:{options.port}/acme"
    routes["/acme/.well-known/openid-configuration"] = json.dumps(
        {"issuer": issuer, "jwks_uri": issuer + "/keys", "id_token_signing_alg_values_supported": ["RS256"]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = routes.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "public, max-age=3600")
            self.end_headers()
            self.wfile.write(body or b"{}")

        def log_message(self, *arguments):
            pass

    ThreadingHTTPServer(("127.0.0.1", options.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
