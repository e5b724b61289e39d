"""``python -m yacht_play``: the same program as ``yacht play``, its exit status passed on."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run_as_module(monkeypatch, argv) -> SystemExit:
    """Import ``yacht_play.__main__`` afresh with ``argv`` as the command line; the exit it raises."""
    monkeypatch.setattr(sys, "argv", ["python -m yacht_play", *argv])
    monkeypatch.delitem(sys.modules, "yacht_play.__main__", raising=False)
    with pytest.raises(SystemExit) as exit_:
        import yacht_play.__main__  # noqa: F401  (running it is importing it)
    return exit_.value


def test_help_is_yacht_play_s_and_exits_0(monkeypatch, capsys):
    assert run_as_module(monkeypatch, ["--help"]).code == 0
    assert capsys.readouterr().out.startswith("usage: yacht play")


def test_a_refusal_of_yacht_play_is_its_exit_status(monkeypatch, capsys):
    exit_ = run_as_module(monkeypatch, ["--rules", "nope"])
    assert exit_.code == 2 and "nope" in capsys.readouterr().err


def test_the_status_yacht_play_returns_is_the_process_s(monkeypatch, tmp_path, capsys):
    missing = tmp_path / "no-such-record.json"
    assert run_as_module(monkeypatch, ["--resume", str(missing)]).code == 2  # returned by main, not raised by argparse
    assert capsys.readouterr().err.strip() == f"yacht play: error: cannot read {missing}: No such file or directory"


def test_the_module_runs_from_the_shell():
    done = subprocess.run([sys.executable, "-m", "yacht_play", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("usage: yacht play")
