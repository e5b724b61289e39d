"""Record files as hostile input: JSON nested too deep, devices and FIFOs, lines too long, and imports
that must add every game given or none. Each refusal is one line naming the file (and line)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.yacht_play.test_records import ROOT, analyze, edit_line, real_records, resume  # noqa: F401  (a fixture)

DEEP = b"[" * 100_000 + b"]" * 100_000


def yacht(*argv: str, seconds: float = 60) -> subprocess.CompletedProcess:
    """``yacht ARGV`` in a child with 4 GB of address space and a time limit, so that a regression fails, not hangs."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "yacht_play.cli", *argv]
    try:
        return subprocess.run(
            command, capture_output=True, text=True, cwd=ROOT, timeout=seconds, preexec_fn=limit_memory, env=environment
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"yacht {' '.join(argv)} still ran after {seconds} s")


def one_line_refusal(code: int, err: str, *words: str) -> None:
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err


def lines_of(data: bytes) -> int:
    return data.count(b"\n")


def run_import(*files: Path, db: Path | str, capsys) -> tuple[int, str]:
    from yacht_play.cli import main

    capsys.readouterr()
    code = main(["import", *map(str, files), "--db", str(db)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("newline", [b"\n", b""], ids=["a full line", "the last line, without its newline"])
def test_a_record_line_nested_too_deep_is_refused_in_one_line(tmp_path, real_records, newline, capsys):  # noqa: F811
    path = tmp_path / "deep.jsonl"
    path.write_bytes(real_records[1] + DEEP + newline)
    line = f"{path}:{lines_of(real_records[1]) + 1}"
    for code, out in (analyze(path, capsys=capsys), resume(path, capsys)):
        one_line_refusal(code, out.err, line, "nested deeper than the 64 levels allowed")
    code, err = run_import(path, db=tmp_path / "x.db", capsys=capsys)
    one_line_refusal(code, err, line, "nested deeper")


def test_a_last_line_nested_too_deep_is_cut_off_by_the_next_writer(tmp_path, real_records):  # noqa: F811
    """A last line without its newline that is nested too deep is no record: a writer removes it before appending."""
    from yacht_play.records import RecordWriter

    path = tmp_path / "deep.jsonl"
    path.write_bytes(real_records[1] + DEEP)
    RecordWriter(path).close()
    assert path.read_bytes() == real_records[1]


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path, real_records, capsys):  # noqa: F811
    from yacht_env.bounded_input import load_json

    assert load_json('{"a": "' + "[{" * 1000 + '\\"' + "]}" * 1000 + '"}', "x") == {"a": "[{" * 1000 + '"' + "]}" * 1000}
    path = tmp_path / "named.jsonl"
    path.write_bytes(real_records[1].replace(b'"ann"', json.dumps("[{" * 50).encode()))  # the person's name, everywhere
    code, out = analyze(path, capsys=capsys)
    assert code == 0, out.err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("command", ["analyze", "import"])
def test_a_device_is_refused_before_it_is_read(tmp_path, device, command):
    extra = ["--db", str(tmp_path / "x.db")] if command == "import" else []
    result = yacht(command, device, *extra)
    one_line_refusal(result.returncode, result.stderr, device, "not a regular file (a character device)")


@pytest.mark.parametrize("command", ["analyze", "import"])
@pytest.mark.parametrize("kind", ["missing", "bad-line", "fifo"])
def test_a_file_name_with_an_escape_is_echoed_escaped(tmp_path, command, kind):
    """A file name holding ESC (which retitles a terminal, \\x1b]0;...\\x07) was echoed raw in the refusal."""
    path = tmp_path / "games\x1b]0;owned\x07.jsonl"
    if kind == "bad-line":
        path.write_text("not json\nnor this\n")
    elif kind == "fifo":
        os.mkfifo(path)
    extra = ["--db", str(tmp_path / "x.db")] if command == "import" else []
    result = yacht(command, str(path), *extra, seconds=30)
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    one_line_refusal(result.returncode, result.stderr, str(tmp_path / "games\\x1b]0;owned\\x07.jsonl"))


@pytest.mark.parametrize("command", ["analyze", "import"])
def test_a_file_name_of_100_000_characters_is_echoed_cut(tmp_path, command):
    extra = ["--db", str(tmp_path / "x.db")] if command == "import" else []
    result = yacht(command, "a" * 100_000, *extra, seconds=30)
    one_line_refusal(result.returncode, result.stderr, "... (100,000 characters)")
    assert len(result.stderr) < 600


@pytest.mark.parametrize("command", ["analyze", "import"])
def test_a_fifo_is_refused_never_opened(tmp_path, command):
    fifo = tmp_path / "records.jsonl"
    os.mkfifo(fifo)
    extra = ["--db", str(tmp_path / "x.db")] if command == "import" else []
    result = yacht(command, str(fifo), *extra, seconds=30)
    one_line_refusal(result.returncode, result.stderr, str(fifo), "not a regular file (a FIFO)")


@pytest.mark.parametrize("command", ["analyze", "import"])
def test_a_line_over_a_megabyte_is_refused_naming_its_line(tmp_path, real_records, command, capsys):  # noqa: F811
    path = tmp_path / "long.jsonl"
    path.write_bytes(real_records[0] + b'{"schema": 2, "pad": "' + b"a" * 2_000_000 + b'"}\n' + real_records[1])
    line = f"{path}:{lines_of(real_records[0]) + 1}"
    if command == "analyze":
        code, out = analyze(path, capsys=capsys)
        err = out.err
    else:
        code, err = run_import(path, db=tmp_path / "x.db", capsys=capsys)
    one_line_refusal(code, err, line, "a line longer than the 1,000,000 bytes allowed")


def forged(data: bytes) -> bytes:
    """``data`` with its first decision's total changed: the replay refuses it."""
    index = next(i for i, line in enumerate(data.split(b"\n")) if line and json.loads(line)["type"] == "decision")
    return edit_line(data, index, lambda record: record.update(total=record["total"] + 1)), index + 1


def imported(db: Path) -> list[str]:
    from yacht_play import store

    return [game.game_id for game in store.all_games(store.connect(str(db)))]


def test_an_import_with_a_forged_game_adds_nothing_and_names_the_line(tmp_path, real_records, capsys):  # noqa: F811
    bad, line = forged(real_records[1])
    one_file = tmp_path / "good_then_forged.jsonl"
    one_file.write_bytes(real_records[0] + bad)
    line += lines_of(real_records[0])
    db = tmp_path / "games.db"
    code, err = run_import(one_file, db=db, capsys=capsys)
    one_line_refusal(code, err, f"{one_file}:{line}", "nothing was imported")
    assert imported(db) == []

    good, forged_file = tmp_path / "good.jsonl", tmp_path / "forged.jsonl"
    good.write_bytes(real_records[0])
    forged_file.write_bytes(bad)
    code, err = run_import(good, forged_file, db=db, capsys=capsys)
    one_line_refusal(code, err, f"{forged_file}:{line - lines_of(real_records[0])}", "nothing was imported")
    assert imported(db) == []

    # the good files alone go in, each game once, also when two files hold the same game
    again = tmp_path / "again.jsonl"
    again.write_bytes(real_records[0])
    code, err = run_import(good, again, db=db, capsys=capsys)
    assert code == 0 and "2 games added, 2 already in the database" in err, err
    assert len(imported(db)) == 2


def test_a_write_failing_at_the_commit_takes_every_game_with_it(tmp_path, real_records, capsys, monkeypatch):  # noqa: F811
    from yacht_play import store

    files = [tmp_path / "agents.jsonl", tmp_path / "table.jsonl"]
    for path, data in zip(files, real_records):
        path.write_bytes(data)
    db = tmp_path / "games.db"
    real_insert, calls = store.insert_game, []

    def insert_then_fail_once(engine, game_id, *args, **kwargs):
        real_insert(engine, game_id, *args, **kwargs)
        calls.append(game_id)
        if len(calls) == 2:  # a write of the second game that the database refuses, once all are queued
            store.committed(engine, lambda connection: connection.exec_driver_sql("INSERT INTO nowhere VALUES (1)"))

    monkeypatch.setattr(store, "insert_game", insert_then_fail_once)
    code, err = run_import(*files, db=db, capsys=capsys)
    one_line_refusal(code, err, "the database refused the import", "nothing was imported")
    assert len(calls) == 3 and imported(db) == []
