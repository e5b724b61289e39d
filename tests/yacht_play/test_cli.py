"""The ``yacht`` command (yacht_play/cli.py): its commands, their help, and a refused output in one line naming the command."""

from __future__ import annotations

import pytest

from tests.yacht_play.test_records import table_game
from yacht_play.cli import main

COMMANDS = ["play", "analyze", "serve", "export", "import", "report", "simulate-players"]


def test_the_help_lists_every_command_with_what_it_does(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: yacht [-h] COMMAND ...")
    commands = shown.split("  COMMAND\n", 1)[1].split("\n\n", 1)[0].splitlines()
    listed = [line.split()[0] for line in commands if line.startswith("    ") and not line[4].isspace()]
    assert listed == COMMANDS
    assert "play a game: solitaire, --vs agents, or --duplicate AGENT" in shown
    assert "simulated people playing a yacht serve through its API" in shown


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_help_of_its_own_under_its_name(capsys, command):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith(f"usage: yacht {command} ")


@pytest.mark.parametrize("argv", [[], ["rol"]])
def test_no_command_or_an_unknown_one_is_a_usage_error(capsys, argv):
    with pytest.raises(SystemExit) as done:
        main(argv)
    error = capsys.readouterr().err
    assert done.value.code == 2 and error.startswith("usage: yacht [-h] COMMAND ...")
    assert ("required: COMMAND" if not argv else "invalid choice: 'rol'") in error


def test_an_output_the_one_writer_refuses_is_one_line_naming_the_command_and_the_status_is_2(tmp_path, capsys):
    store = pytest.importorskip("yacht_play.store", reason="yacht export needs the serve extra")
    database = str(tmp_path / "empty.db")
    store.connect(database).dispose()
    assert main(["export", "--db", database, "-o", str(tmp_path)]) == 2  # export leaves the refusal to the command
    assert capsys.readouterr().err == f"yacht export: cannot write {tmp_path}: it is a folder; give a file path in it\n"


def test_a_commands_own_status_is_passed_on(tmp_path, capsys):
    record = table_game(tmp_path / "game.jsonl")
    assert main(["analyze", str(record), "--worst", "1"]) == 0
    assert main(["analyze", str(tmp_path / "none.jsonl")]) == 2
    assert "none.jsonl" in capsys.readouterr().err
