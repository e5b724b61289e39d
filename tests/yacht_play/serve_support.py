"""Helpers of the ``yacht serve`` tests: a server in a subprocess, a throwaway PostgreSQL server, and Debian's
chromium for Playwright."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from yacht_play.serve.local_server import LocalServer, free_port, postgres_bindir

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


class Server(LocalServer):
    """``yacht serve`` as the tests start it: the quick agents, the repository as its working folder."""

    def __init__(self, db: Path, agents: str = TEST_AGENTS, **settings):
        super().__init__(db, agents=agents, cwd=ROOT, **settings)


@contextmanager
def served_here(service):
    """``service`` served by uvicorn in a thread of this process (which then sees what a test patched); its URL."""
    import uvicorn

    from yacht_play.serve.app import create_app

    port = free_port()
    config = uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not running.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(10)


def chromium_or_skip():
    """Playwright's sync API and the path of Debian's chromium, or a skip saying what is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser tests need the playwright package: pip install playwright (its own browser download is not used)")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM}: apt-get install -y chromium (or YACHT_CHROMIUM=PATH)")
    return sync_playwright


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
