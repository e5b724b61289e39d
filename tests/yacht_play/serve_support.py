"""Helpers of the ``yacht serve`` tests: a server in a subprocess, and Debian's chromium for Playwright."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("YACHT_CHROMIUM", "/usr/bin/chromium")  # Debian's package; another path by the variable
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-gpu",
]
TEST_AGENTS = "random,greedy,optimal"  # no ppo: loading torch would double the server's start


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``yacht serve`` in a subprocess on 127.0.0.1; :meth:`kill` sends SIGKILL, :meth:`start` starts it again."""

    def __init__(
        self, db: Path, agents: str = TEST_AGENTS, port: int | None = None, log: Path | None = None, options: tuple[str, ...] = ()
    ):
        self.db = db
        self.options = list(options)  # more yacht serve options
        self.agents = agents
        self.port = port or free_port()
        self.log = log or db.with_suffix(".log")
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180) -> "Server":
        import httpx

        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "yacht_play.cli",
                    "serve",
                    "--port",
                    str(self.port),
                    "--db",
                    str(self.db),
                    "--agents",
                    self.agents,
                    *self.options,
                ],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"yacht serve exited with {self.process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/api/agents", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"yacht serve did not answer within {timeout} s: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed that was not committed."""
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def chromium_or_skip():
    """Playwright's sync API and the path of Debian's chromium, or a skip saying what is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser tests need the playwright package: pip install playwright (its own browser download is not used)")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM}: apt-get install -y chromium (or YACHT_CHROMIUM=PATH)")
    return sync_playwright
