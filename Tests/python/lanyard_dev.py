"""Starts `lanyard dev` for a Python test: a temporary SQLite database, a free loopback port, the binary at
$LANYARD_BINARY or .build/debug/lanyard, extra LANYARD_* settings from the caller. Stopped by `stop()`."""
import os
import socket
import subprocess
import tempfile
import time

import httpx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class LanyardDev:
    def __init__(self, **settings):
        self.folder = tempfile.mkdtemp(prefix="lanyard-python-")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        binary = os.environ.get("LANYARD_BINARY", os.path.join(ROOT, ".build", "debug", "lanyard"))
        environment = dict(os.environ, LANYARD_PORT=str(port), LANYARD_DATA_DIR=self.folder,
                           LANYARD_DATABASE_URL=f"sqlite:{self.folder}/lanyard.sqlite", LANYARD_LOG_LEVEL="warning")
        environment.update(settings)  # the caller's settings win (a log level too)
        with open(os.path.join(self.folder, "server.log"), "w") as log:
            self.process = subprocess.Popen([binary, "dev"], env=environment, stdout=subprocess.DEVNULL, stderr=log)
        self.base = f"http://127.0.0.1:{port}"
        # Up to a minute: a debug build starting on a busy machine is slow.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/healthz").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.process.kill()
        raise RuntimeError(f"lanyard dev did not start; see {self.folder}/server.log")

    def id_token(self, provider, sub, **claims):
        """What Apple's or Google's SDK hands the app; the emulator signs it like the real provider."""
        path = provider if provider in ("apple", "google") else f"oidc/{provider}"  # LANYARD_OIDC_PROVIDERS
        answer = httpx.post(f"{self.base}/_emulator/{path}/id-token", json={"sub": sub, **claims})
        answer.raise_for_status()
        return answer.json()["id_token"]

    def stop(self):
        self.process.terminate()
        self.process.wait(30)
