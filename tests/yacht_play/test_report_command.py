"""``yacht report`` where its environment fails it: the serve extra missing, a disk that fills while it writes."""

from __future__ import annotations

import errno
import os
import sys

import pytest

import yacht_play
from yacht_play.cli import main


def test_without_the_serve_extra_the_report_names_what_is_missing_and_how_to_install_it(tmp_path, monkeypatch, capsys):
    """The store needs SQLAlchemy, which only the serve extra installs: one line and exit 2, not a traceback."""
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # as if it were not installed: importing it fails
    monkeypatch.delitem(sys.modules, "yacht_play.store", raising=False)
    monkeypatch.delattr(yacht_play, "store", raising=False)
    assert main(["report", "--db", str(tmp_path / "yacht.db")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "yacht report: needs the serve extra (sqlalchemy is missing): pip install 'yacht-rl[serve]'\n"


def test_a_disk_that_fills_while_the_report_is_written_is_one_line_and_leaves_no_file(tmp_path, monkeypatch, capsys):
    """The outputs are checked before the report is built, but a disk can still fill while it is written: the text
    report is printed, the file that could not be written is not left half-written, and the exit status says so."""
    pytest.importorskip("sqlalchemy", reason="the store needs the serve extra")
    from yacht_play import store

    database = str(tmp_path / "empty.db")
    store.connect(database).dispose()
    target = tmp_path / "out" / "report.json"
    target.parent.mkdir()

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    assert main(["report", "--db", database, "--json", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out.startswith("0 finished games under the yacht rules")
    assert err == f"yacht report: cannot write {target}: {os.strerror(errno.ENOSPC)}\n"
    assert list(target.parent.iterdir()) == []  # neither the file nor its temporary copy
