"""``python -m agents.benchmark``: the two commands dispatched, help, and anything else refused with the usage."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agents.benchmark.__main__ import USAGE, main
from yacht_env.echo import echoed


@pytest.mark.parametrize("argv", [["-h"], ["--help"], ["--help", "run"], ["-h", "nope"]])
def test_help_first_prints_the_usage_and_returns(argv, capsys):
    assert main(argv) is None
    assert capsys.readouterr().out == USAGE + "\n"


@pytest.mark.parametrize("argv", [["rnu"], ["Run"], ["aggregate2"], ["--help2"], ["x" * 300], ["\x1b[2Jrun"]])
def test_an_unknown_command_is_refused_with_the_usage_and_the_command_echoed(argv):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == f"{USAGE}: unknown command {echoed(argv[0])}"
    assert "\x1b" not in str(exit_.value.code)


def test_the_unknown_command_is_the_one_named_not_what_follows_it():
    with pytest.raises(SystemExit) as exit_:
        main(["rnu", "--track", "yacht-solo-1m"])
    assert exit_.value.code == f"{USAGE}: unknown command 'rnu'"


def test_the_command_reads_only_what_follows_it(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["aggregate"])  # no results files: aggregate's own usage error, not a file named "aggregate"
    assert exit_.value.code == 2
    assert "the following arguments are required" in capsys.readouterr().err


def test_no_command_is_refused_with_the_usage():
    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == USAGE


@pytest.mark.parametrize("command, words", [("run", "--track"), ("aggregate", "--out")])
def test_each_command_gets_the_arguments_after_it(command, words, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    help_text = capsys.readouterr().out
    assert help_text.startswith(f"usage: python -m agents.benchmark {command} [-h]") and words in help_text


def test_the_module_runs_from_the_shell():
    done = subprocess.run([sys.executable, "-m", "agents.benchmark", "nothing"], capture_output=True, text=True)
    assert done.returncode == 1 and done.stderr.strip() == f"{USAGE}: unknown command 'nothing'"
    done = subprocess.run([sys.executable, "-m", "agents.benchmark", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == USAGE
