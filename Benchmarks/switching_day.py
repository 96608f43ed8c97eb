"""Switching day, measured (reference section 24): an import of `--users` Firebase users, and the bridge beside a sign-in.

1. A Firebase Admin SDK `listUsers` file of `--users` people is generated (Google, Apple, both, password users with
   a verified address, anonymous users), then `lanyard import firebase FILE --json` runs into a fresh SQLite
   database and, with $LANYARD_TEST_POSTGRES_URL (scripts/start-test-postgres), a fresh PostgreSQL database: the
   wall time and the peak resident memory of the `lanyard` process (wait4's ru_maxrss).
2. `lanyard dev` on a fresh SQLite database with `--bridge-users` of those people imported: one Python client
   (httpx, asyncio) measures Apple's existing-user sign-in (tokens minted beforehand), then each imported person's
   first crossing through `POST /v1/auth/migrate/firebase` (each token once; Firebase ID tokens minted
   beforehand by the emulator, verified through the production path), then a person crossing again.

$LANYARD_BINARY names the binary (default .build/debug/lanyard; use a release build for numbers to compare).
Prints one JSON line per measurement.
Run: python3 Benchmarks/switching_day.py [--users 100000] [--bridge-users 3000] [--seconds 10] [--concurrency 4]
"""
import argparse
import asyncio
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from email.utils import formatdate

import httpx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tests", "python"))
from lanyard_dev import LanyardDev, ROOT  # noqa: E402
from passkey_signin import run, summary  # noqa: E402

BINARY = os.environ.get("LANYARD_BINARY", os.path.join(ROOT, ".build", "debug", "lanyard"))


def person(index, rng):
    """One user of listUsers' JSON: a kind by share, ids and times like Firebase's."""
    uid = f"uid{index:08d}" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
                                      for _ in range(16))
    created = 1_600_000_000 + index * 60
    user = {"uid": uid, "metadata": {"creationTime": formatdate(created, usegmt=True),
                                     "lastSignInTime": formatdate(created + 86_400, usegmt=True)},
            "providerData": [], "disabled": index % 500 == 0}
    share = index % 20
    email = f"person{index}@example.org"
    google = {"providerId": "google.com", "uid": f"1{index:020d}", "email": email}
    apple = {"providerId": "apple.com", "uid": f"00{index:04d}.{index:032x}.1012", "email": f"r{index}@privaterelay.appleid.com"}
    if share < 8:
        user.update(email=email, emailVerified=True, displayName=f"Person {index}", providerData=[google])
    elif share < 14:
        user.update(email=apple["email"], emailVerified=True, providerData=[apple])
    elif share < 15:
        user.update(email=email, emailVerified=True, providerData=[google, apple])
    elif share < 18:
        user.update(email=email, emailVerified=True, passwordHash=base64.b64encode(os.urandom(32)).decode(),
                    passwordSalt=base64.b64encode(os.urandom(8)).decode(),
                    providerData=[{"providerId": "password", "uid": email, "email": email}])
    # the rest: anonymous (no provider), guests in Lanyard
    return user


def write_export(path, count, seed=7):
    rng = random.Random(seed)
    people = [person(index, rng) for index in range(count)]
    with open(path, "w") as file:
        json.dump({"users": people}, file)
    return people


def timed_import(path, database_url, folder, master_key):
    """`lanyard import firebase` into `database_url`: seconds, peak memory (MiB), the report."""
    environment = dict(os.environ, LANYARD_DEV="1", LANYARD_DATA_DIR=folder, LANYARD_DATABASE_URL=database_url,
                       LANYARD_MASTER_KEY=master_key, LANYARD_LOG_LEVEL="warning")
    started = time.monotonic()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen([BINARY, "import", "firebase", path, "--json"], env=environment,
                                   stdout=subprocess.PIPE, stderr=errors)
        output = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = status
        seconds = time.monotonic() - started
        if status != 0:
            errors.seek(0)
            raise RuntimeError(f"import failed ({status}): {errors.read().decode()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, json.loads(output)


def fresh_postgres(name):
    url = os.environ.get("LANYARD_TEST_POSTGRES_URL")
    if not url:
        return None
    subprocess.run(["psql", url, "-qc", f"DROP DATABASE IF EXISTS {name}"], check=True)
    subprocess.run(["psql", url, "-qc", f"CREATE DATABASE {name}"], check=True)
    return url.replace("/postgres?", f"/{name}?")


def measure_imports(arguments, master_key):
    folder = tempfile.mkdtemp(prefix="lanyard-switching-")
    export = os.path.join(folder, "firebase-users.json")
    write_export(export, arguments.users)
    databases = [("sqlite", f"sqlite:{folder}/import.sqlite")]
    postgres = fresh_postgres("switching_day_import")
    if postgres:
        databases.append(("postgres", postgres))
    for name, url in databases:
        seconds, peak, report = timed_import(export, url, folder, master_key)
        again, _, second = timed_import(export, url, folder, master_key)
        print(json.dumps({"benchmark": "switching_day_import", "database": name, "users": arguments.users,
                          "seconds": round(seconds, 1), "users_per_second": round(arguments.users / seconds),
                          "peak_rss_mib": round(peak), "created": report["created"], "guests": report["guests"],
                          "identities": report["identities"], "password_users": report["password_users"],
                          "second_run_seconds": round(again, 1), "second_run_created": second["created"],
                          "second_run_unchanged": second["unchanged"], "binary": BINARY}), flush=True)


def measure_bridge(arguments, master_key):
    folder = tempfile.mkdtemp(prefix="lanyard-bridge-")
    export = os.path.join(folder, "firebase-users.json")
    people = [user for user in write_export(export, arguments.bridge_users, seed=11)
              if user["providerData"] and not user["disabled"]]
    database = f"sqlite:{folder}/lanyard.sqlite"
    timed_import(export, database, folder, master_key)
    lanyard = LanyardDev(LANYARD_RATE_LIMITS="off", LANYARD_DATA_DIR=folder, LANYARD_DATABASE_URL=database,
                         LANYARD_MASTER_KEY=master_key)
    try:
        base = lanyard.base

        def firebase_token(user):
            identities = {entry["providerId"]: [entry["uid"]] for entry in user["providerData"]}
            answer = httpx.post(f"{base}/_emulator/firebase/id-token", json={
                "sub": user["uid"], "identities": identities, "sign_in_provider": user["providerData"][0]["providerId"],
                "email": user.get("email"), "email_verified": True, "expires_in": 3600})
            answer.raise_for_status()
            return answer.json()["id_token"]

        crossings = [firebase_token(user) for user in people]
        apple = [lanyard.id_token("apple", f"bench-apple-{index}") for index in range(50)]
        for token in apple:
            assert httpx.post(f"{base}/v1/auth/signin/apple", json={"id_token": token}).status_code == 200
        warm = crossings[:50]
        for token in warm:  # the answer path's accounts, crossed once already
            assert httpx.post(f"{base}/v1/auth/migrate/firebase", json={"id_token": token}).status_code == 200
        first = crossings[50:]
        used = 0

        async def apple_signin(client, turn):
            answer = await client.post(f"{base}/v1/auth/signin/apple", json={"id_token": apple[turn % len(apple)]})
            return answer.status_code == 200

        async def first_crossing(client, turn):
            nonlocal used
            if used >= len(first):
                await asyncio.sleep(0.01)
                return False
            token = first[used]
            used += 1
            answer = await client.post(f"{base}/v1/auth/migrate/firebase", json={"id_token": token})
            return answer.status_code == 200

        async def crossing_again(client, turn):
            answer = await client.post(f"{base}/v1/auth/migrate/firebase", json={"id_token": warm[turn % len(warm)]})
            return answer.status_code == 200

        results = {}
        asyncio.run(run(2, arguments.concurrency, apple_signin))  # warm-up
        results["apple_existing_user"] = summary(*asyncio.run(run(arguments.seconds, arguments.concurrency, apple_signin)),
                                                 arguments.seconds)
        started = time.monotonic()
        latencies, failures = asyncio.run(run(arguments.seconds, arguments.concurrency, first_crossing))
        elapsed = min(arguments.seconds, time.monotonic() - started)
        # Workers stop finding tokens once every person crossed: the rate is over the time they had some.
        busy = min(elapsed, sum(latencies) / arguments.concurrency) if latencies else elapsed
        results["bridge_first_crossing"] = dict(summary(latencies, 0, busy), people=len(first))
        results["bridge_again"] = summary(*asyncio.run(run(arguments.seconds, arguments.concurrency, crossing_again)),
                                          arguments.seconds)
        print(json.dumps({"benchmark": "switching_day_bridge", "database": "sqlite", "binary": BINARY,
                          "seconds": arguments.seconds, "concurrency": arguments.concurrency, **results}), flush=True)
    finally:
        lanyard.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--bridge-users", type=int, default=3_000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--skip-import", action="store_true")
    arguments = parser.parse_args()
    master_key = base64.b64encode(os.urandom(32)).decode()
    if not arguments.skip_import:
        measure_imports(arguments, master_key)
    measure_bridge(arguments, master_key)


if __name__ == "__main__":
    main()
