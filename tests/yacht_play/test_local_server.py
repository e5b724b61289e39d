"""``yacht serve`` in a subprocess (yacht_play.serve.local_server): what it is started with before it starts.

Starting it, killing it and starting it again are the serve tests' own (``tests/yacht_play/serve_support.py``).
"""

from __future__ import annotations

import glob
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from yacht_play.serve.local_server import LocalServer, free_port, postgres_bindir


def test_a_server_on_a_database_file_logs_beside_it_on_a_port_of_its_own(tmp_path):
    server = LocalServer(tmp_path / "games.db")
    assert server.log == tmp_path / "games.log"
    assert server.url == f"http://127.0.0.1:{server.port}" and server.port > 0
    assert LocalServer(tmp_path / "games.db", port=8123).url == "http://127.0.0.1:8123"


def test_a_server_on_a_database_url_needs_a_log_file(tmp_path):
    with pytest.raises(ValueError, match=r"database URL 'postgresql://postgres@127\.0\.0\.1:5432/postgres' needs log=FILE"):
        LocalServer("postgresql://postgres@127.0.0.1:5432/postgres")
    assert LocalServer("postgresql://postgres@127.0.0.1:5432/postgres", log=tmp_path / "serve.log").log == tmp_path / "serve.log"


def test_before_it_starts_stopping_or_killing_it_does_nothing(tmp_path):
    server = LocalServer(tmp_path / "games.db")
    server.stop()
    server.kill()
    assert server.process is None


def test_it_starts_answers_stops_and_starts_again_on_the_same_database(tmp_path):
    httpx = pytest.importorskip("httpx", reason="the serve extra")
    server = LocalServer(tmp_path / "games.db", agents="random").start()
    try:
        assert httpx.get(server.url + "/api/agents", timeout=10).status_code == 200
        server.stop()
        assert server.process.returncode is not None  # ended
        server.stop()  # already ended: nothing to do
        server.start()
        assert httpx.get(server.url + "/api/agents", timeout=10).status_code == 200
        server.kill()
        assert server.process.returncode == -signal.SIGKILL
    finally:
        server.stop()
    assert server.log.read_bytes()  # its output went to the log beside the database


def test_a_server_that_exits_at_once_is_said_with_its_log(tmp_path):
    server = LocalServer(tmp_path / "games.db", options=("--no-such-option",))
    with pytest.raises(RuntimeError, match=r"^yacht serve exited with 2: (.|\n)*unrecognized arguments: --no-such-option"):
        server.start()


def test_a_server_that_exits_quotes_the_tail_of_a_long_log_not_all_of_it(tmp_path):
    """The log is appended to across starts: the error quotes its end (this start's complaint), not every line."""
    server = LocalServer(tmp_path / "games.db", options=("--no-such-option",))
    server.log.write_text("an earlier start's line\n" * 1_000)
    with pytest.raises(RuntimeError) as error:
        server.start()
    message, log = str(error.value), server.log.read_text()
    assert message == f"yacht serve exited with 2: {log[-2_000:]}"  # its last 2,000 characters, no more, no fewer
    assert "unrecognized arguments: --no-such-option" in message


def test_a_server_that_does_not_answer_in_time_is_stopped_and_said(tmp_path):
    server = LocalServer(tmp_path / "games.db", agents="random")
    with pytest.raises(RuntimeError, match=r"^yacht serve did not answer within 0\.01 s"):
        server.start(timeout=0.01)
    assert server.process.returncode is not None  # not left running


@pytest.mark.parametrize("timeout", [5, None])
def test_start_gives_up_when_its_timeout_has_passed_on_the_clock_and_quotes_the_log_s_tail(tmp_path, monkeypatch, timeout):
    """A clock that moves a second a reading: a timeout of 5 s (or the default of 180 s) allows the probes made before
    the deadline, each given 2 s to answer, then the server is stopped and the last 2,000 characters of its log (not
    all of an earlier start's lines) are quoted."""
    import httpx

    from yacht_play.serve import local_server

    probes, now = [], iter(range(1_000, 100_000))

    def refused(url, timeout):
        probes.append(timeout)
        raise httpx.ConnectError("connection refused")

    monkeypatch.setattr(httpx, "get", refused)
    monkeypatch.setattr(local_server.time, "monotonic", lambda: float(next(now)))
    monkeypatch.setattr(local_server.time, "sleep", lambda seconds: None)
    run_instead(monkeypatch, WAITING)
    server = LocalServer(tmp_path / "games.db")
    server.log.write_text("".join(f"an earlier start's line {line}\n" for line in range(1_000)))
    try:
        with pytest.raises(RuntimeError) as error:
            server.start() if timeout is None else server.start(timeout=timeout)
    finally:
        server.kill()
    seconds = 180 if timeout is None else timeout
    assert probes == [2] * (seconds - 1)  # the clock read at 1001 up to the deadline of 1000 + seconds, not at it
    assert str(error.value) == f"yacht serve did not answer within {seconds} s: {server.log.read_text()[-2_000:]}"


WAITING = [sys.executable, "-c", "import time; time.sleep(60)"]  # a server that runs and leaves answering to get


def run_instead(monkeypatch, command: list[str]) -> None:
    """``yacht serve``'s subprocess replaced by ``command``, started as the server would be (its output to the log)."""
    from yacht_play.serve import local_server

    popen = subprocess.Popen
    monkeypatch.setattr(local_server.subprocess, "Popen", lambda *args, **kwargs: popen(command))


def test_start_waits_for_the_list_of_agents_not_for_any_answer(tmp_path, monkeypatch):
    import httpx

    answers, asked = iter([None, 503, 404, 200]), []  # not listening yet, loading its agents, not routed yet, ready

    def get(url, timeout):
        asked.append(url)
        status = next(answers)
        if status is None:
            raise httpx.ConnectError("connection refused")
        return SimpleNamespace(status_code=status)

    monkeypatch.setattr(httpx, "get", get)
    run_instead(monkeypatch, WAITING)
    server = LocalServer(tmp_path / "games.db")
    try:
        assert server.start(timeout=60) is server
        assert asked == [server.url + "/api/agents"] * 4
    finally:
        server.kill()


def test_a_server_that_ignores_sigterm_is_killed_when_its_grace_runs_out(tmp_path, monkeypatch):
    """``stop`` asks a server to end (SIGTERM) and waits; one that goes on running is killed (SIGKILL), not left."""
    import httpx

    ready = tmp_path / "ready"
    stubborn = [sys.executable, "-c", STUBBORN, str(ready)]
    run_instead(monkeypatch, stubborn)
    monkeypatch.setattr(httpx, "get", lambda url, timeout: SimpleNamespace(status_code=200 if ready.exists() else 503))
    server = LocalServer(tmp_path / "games.db").start(timeout=60)
    wait, graces = server.process.wait, []

    def short_wait(timeout=None):  # the grace asked for is recorded, and a short one waited
        graces.append(timeout)
        return wait(None if timeout is None else min(timeout, 0.5))

    server.process.wait = short_wait
    try:
        server.stop()
        assert server.process.returncode == -signal.SIGKILL
        assert graces[0] == 10  # the 10 seconds stop's docstring promises, then the kill's own wait
    finally:
        server.kill()


STUBBORN = """
import pathlib, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
pathlib.Path(sys.argv[1]).touch()
time.sleep(60)
"""


def test_a_free_port_can_be_listened_on_at_once():
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()


def test_postgresql_is_found_in_pg_configs_folder_first_else_in_debians_newest_with_both_programs(tmp_path, monkeypatch):
    from yacht_play.serve import local_server

    def bindir(version: str, *programs: str) -> str:
        folder = tmp_path / version / "bin"
        folder.mkdir(parents=True)
        for program in programs:
            (folder / program).touch()
        return str(folder)

    old, newer, newest = bindir("13", "initdb", "pg_ctl"), bindir("15", "initdb", "pg_ctl"), bindir("16", "initdb")
    monkeypatch.setattr(local_server.glob, "glob", lambda pattern: [old, newest, newer])
    monkeypatch.setattr(local_server.shutil, "which", lambda program: None)  # no pg_config
    assert postgres_bindir() == Path(newer)  # 16 lacks pg_ctl
    monkeypatch.setattr(local_server.shutil, "which", lambda program: f"/usr/bin/{program}")
    monkeypatch.setattr(local_server.subprocess, "run", lambda *args, **kwargs: SimpleNamespace(stdout=old + "\n"))
    assert postgres_bindir() == Path(old)  # pg_config's answer comes first
    monkeypatch.setattr(local_server.glob, "glob", lambda pattern: [newest])
    monkeypatch.setattr(local_server.subprocess, "run", lambda *args, **kwargs: SimpleNamespace(stdout=""))
    assert postgres_bindir() is None


def test_postgresql_is_found_with_both_of_its_programs_or_not_at_all():
    folder = postgres_bindir()
    assert folder is None or ((folder / "initdb").exists() and (folder / "pg_ctl").exists())
    if shutil.which("pg_config") is None and not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        assert folder is None
