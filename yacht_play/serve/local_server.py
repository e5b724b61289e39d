"""``yacht serve`` started on this machine for a while, as the benchmarks, the examples and the tests start it.

:class:`LocalServer` runs it in a subprocess on 127.0.0.1 and a free port (:func:`free_port`) and waits until it
answers; :func:`postgres_bindir` finds PostgreSQL's ``initdb`` and ``pg_ctl`` for a throwaway cluster to store
its games in. Needs the ``serve`` extra.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from yacht_env.extras import needs_extra


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now (the system's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """``yacht serve`` in a subprocess on 127.0.0.1: :meth:`start` starts it and waits until it answers.

    ``db`` is the store's file or URL (``postgresql://...``); ``agents`` the ``--agents`` list (``None``:
    ``yacht serve``'s own default); ``log`` the file its output is appended to (default: the database file's
    name with ``.log``; a URL needs one); ``options`` more ``yacht serve`` options; ``cwd`` its working
    folder (default: this process's), against which relative paths in ``agents`` are read.
    :meth:`stop` ends it, :meth:`kill` kills it (SIGKILL), and :meth:`start` starts it again.
    """

    def __init__(
        self,
        db: str | Path,
        agents: str | None = None,
        port: int | None = None,
        log: Path | None = None,
        options: tuple[str, ...] = (),
        cwd: Path | None = None,
    ):
        if log is None and "://" in str(db):
            from yacht_play.store import shown_url

            raise ValueError(f"a server on the database URL {shown_url(str(db))} needs log=FILE for its output")
        self.db = db
        self.agents = agents
        self.port = port or free_port()
        self.log = log or Path(db).with_suffix(".log")
        self.options = list(options)
        self.cwd = cwd
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The server's address, ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180) -> LocalServer:
        """Start ``yacht serve`` and return once it answers its list of agents (asked every 0.1 s, 2 s an ask).

        ``RuntimeError`` quoting the last 2,000 characters of the log if it exits or does not answer within ``timeout``
        seconds (loading the agents and solving their tables takes a while).
        """
        with needs_extra("serve"):
            import httpx

        agents = [] if self.agents is None else ["--agents", self.agents]
        command = [sys.executable, "-m", "yacht_play.cli", "serve", "--port", str(self.port), "--db", str(self.db)]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [*command, *agents, *self.options], cwd=self.cwd, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"yacht serve exited with {self.process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/api/agents", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass  # not listening yet
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"yacht serve did not answer within {timeout} s: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed that was not committed."""
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """End the server (SIGTERM), killing it if it has not exited within 10 seconds."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def postgres_bindir() -> Path | None:
    """The folder that holds PostgreSQL's ``initdb`` and ``pg_ctl``, or ``None`` where there is none.

    ``pg_config --bindir`` first, else one of Debian's ``/usr/lib/postgresql/*/bin``.
    """
    candidates = []
    if shutil.which("pg_config"):
        found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(found.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None
