"""What the served-app benchmarks share: a free port, the load average, and starting ``explorer serve`` until it
answers."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request

__all__ = ["free_port", "load", "launch"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load() -> str:
    """The load averages over 1, 5 and 15 minutes."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def launch(cmd: list[str], port: int, log, env: dict | None = None, seconds: float = 300) -> subprocess.Popen:
    """Start the server command ``cmd`` (output to the file ``log``) and wait until ``http://127.0.0.1:port/``
    answers; exit with the end of its log if it does not within ``seconds``."""
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=90):
                return server
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(0.5)
    server.kill()
    log.seek(0)
    raise SystemExit(f"explorer serve did not start: {log.read().decode(errors='replace')[-2000:]}")
