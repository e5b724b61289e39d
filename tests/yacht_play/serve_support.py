"""Helpers of the ``yacht serve`` tests: a server in a subprocess, a throwaway PostgreSQL server, and Debian's
chromium for Playwright."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
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


def postgres_bindir() -> Path | None:
    """The folder of initdb and pg_ctl, or None."""
    candidates = []
    if shutil.which("pg_config"):
        found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(found.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


@pytest.fixture(scope="module")
def postgres_url():
    """The URL of a throwaway PostgreSQL server (a skip saying why where there can be none)."""
    pytest.importorskip("psycopg", reason="PostgreSQL needs psycopg 3: pip install 'yacht-rl[serve]'")
    bindir = postgres_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        runuser = shutil.which("runuser")
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            runuser = None
        if runuser is None:
            pytest.skip("running as root without a postgres user (or runuser) to own a throwaway cluster")
        as_user = [runuser, "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="yacht-pg-"))
    data = folder / "data"
    if as_user:
        shutil.chown(folder, "postgres")
    port = free_port()

    def run(*command):
        return subprocess.run([*as_user, *command], capture_output=True, text=True, timeout=120)

    made = run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
    if made.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"initdb failed: {made.stderr.strip().splitlines()[-1] if made.stderr.strip() else made.returncode}")
    started = run(
        str(bindir / "pg_ctl"),
        "-D",
        str(data),
        "-l",
        str(folder / "log"),
        "-w",
        "-t",
        "60",
        "start",
        "-o",
        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=on",
    )
    if started.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"pg_ctl could not start a server: {started.stderr.strip() or started.stdout.strip()}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(folder, ignore_errors=True)
