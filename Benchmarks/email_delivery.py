"""Email delivery, measured from outside (reference section 18): how long from `POST /v1/auth/email/start` until
the SMTP server has the mail, and that a flood of starts from one client IP is refused before any mail is queued.

Starts an SMTP server (aiosmtpd, STARTTLS required, a test CA as Tests/Mail does) and `lanyard dev` pointed at it
($LANYARD_BINARY, default .build/debug/lanyard; use a release build for numbers to compare). Prints one JSON line.
Run: python3 Benchmarks/email_delivery.py [--flows 300] [--concurrency 4]
"""
import argparse
import asyncio
import json
import os
import ssl
import statistics
import sys
import threading
import time

import httpx
from aiosmtpd.controller import Controller

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tests", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tests", "Mail"))
from lanyard_dev import LanyardDev  # noqa: E402
from test_smtp import free_port, make_certificates  # noqa: E402


class Arrivals:
    def __init__(self):
        self.at = {}
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            for address in envelope.rcpt_tos:
                self.at[address] = time.monotonic()
        return "250 OK"


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


async def measure(lanyard, arrivals, flows, concurrency):
    sent = {}
    async with httpx.AsyncClient() as client:
        queue = asyncio.Queue()
        for index in range(flows):
            queue.put_nowait(f"bench-{index}-{os.getpid()}@example.com")

        async def worker():
            while not queue.empty():
                address = queue.get_nowait()
                sent[address] = time.monotonic()
                answer = await client.post(f"{lanyard.base}/v1/auth/email/start", json={"email": address})
                assert answer.status_code == 202, answer.text
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    deadline = time.monotonic() + 120
    while len(arrivals.at) < flows and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return [(arrivals.at[address] - sent[address]) * 1000 for address in sent if address in arrivals.at]


def flood(lanyard, arrivals, starts):
    before = len(arrivals.at)
    statuses = []
    with httpx.Client() as client:
        for index in range(starts):
            statuses.append(client.post(f"{lanyard.base}/v1/auth/email/start",
                                        json={"email": f"flood-{index}-{os.getpid()}@example.com"}).status_code)
    time.sleep(3)
    return {"starts": starts, "accepted": statuses.count(202), "refused_429": statuses.count(429),
            "mails_received": len(arrivals.at) - before}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flows", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--flood", type=int, default=1000)
    options = parser.parse_args()
    paths = make_certificates()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(paths["server.pem"], paths["server.key"])
    arrivals = Arrivals()
    port = free_port()
    controller = Controller(arrivals, hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True)
    controller.start()
    common = dict(LANYARD_SMTP_URL=f"smtp://localhost:{port}", LANYARD_SMTP_CA_FILE=paths["ca.pem"])
    # Latency: the per-IP limit raised so one machine can start many flows.
    fast = LanyardDev(LANYARD_EMAIL_IP_PER_HOUR="1000000", LANYARD_EMAIL_MAX_PER_HOUR="10000000", **common)
    try:
        latencies = asyncio.run(measure(fast, arrivals, options.flows, options.concurrency))
    finally:
        fast.stop()
    # The flood: the default limits.
    limited = LanyardDev(**common)
    try:
        flooded = flood(limited, arrivals, options.flood)
    finally:
        limited.stop()
        controller.stop()
    print(json.dumps({
        "binary": os.environ.get("LANYARD_BINARY", ".build/debug/lanyard"),
        "flows": options.flows, "concurrency": options.concurrency, "delivered": len(latencies),
        "start_to_smtp_ms": {"p50": round(statistics.median(latencies), 1), "p90": round(percentile(latencies, 0.9), 1),
                             "p99": round(percentile(latencies, 0.99), 1), "max": round(max(latencies), 1)},
        "flood": flooded,
    }))


if __name__ == "__main__":
    main()
