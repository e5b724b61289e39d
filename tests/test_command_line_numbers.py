"""Every command line of the project reads its integer and decimal options in ASCII forms only
(:mod:`yacht_env.option_values`): another script's digits, spaces, underscores, NaN and infinity get argparse's exit
status 2 and one line naming the value, and the forms a person types are read as before.

The parsers are the programs' own: each program's ``main`` is run until it asks argparse to parse, and the parser it
built is taken there (nothing is parsed, nothing runs).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yacht_env.echo import echoed
from yacht_env.option_values import DecimalNumber, WholeNumber, WholeNumbers

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("agents", "yacht_play", "benchmarks", "examples", "tools")
# tools/mutation.py imports none of the packages it mutates (its test command runs on a mutated copy of them)
NOT_THE_PROJECT_S = {"tools/mutation.py"}
NON_ASCII_DIGITS = st.characters(categories=["Nd"]).filter(lambda c: not "0" <= c <= "9")


class Built(BaseException):
    """Raised where a program asks argparse to parse: carries the parser it built."""

    def __init__(self, parser: argparse.ArgumentParser):
        super().__init__()
        self.parser = parser


def programs() -> list[str]:
    """Every file of the project that builds a command line and has a ``main``: its path from the root."""
    files = [ROOT / "train.py", *(path for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py")))]
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        if "ArgumentParser(" in text and "\ndef main(" in text:
            found.append(path.relative_to(ROOT).as_posix())
    return [name for name in found if name not in NOT_THE_PROJECT_S]


@functools.cache
def built_parser(name: str) -> argparse.ArgumentParser:
    """The parser the program ``name`` builds, taken when its ``main`` parses the command line."""
    module_name = name.removesuffix(".py").replace("/", ".")
    # A benchmark sets NUMBA_NUM_THREADS and BLAS threads when imported, as its own process wants: in this
    # process numba's threads may already run, and its next compile refuses a thread count changed under it.
    environment = dict(os.environ)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and error.name.split(".")[0] in ("agents", "yacht_env", "yacht_play", "benchmarks", "examples"):
            raise
        pytest.skip(f"{name} needs {error.name}, not installed here")
    finally:
        os.environ.clear()
        os.environ.update(environment)

    def build(parser, *args, **kwargs):
        raise Built(parser)

    argv = sys.argv
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_known_args", build)
        sys.argv = [name]
        try:
            module.main()
        except Built as built:
            return built.parser
        finally:
            sys.argv = argv
    raise AssertionError(f"{name}'s main returned without parsing a command line")


def options(parser: argparse.ArgumentParser):
    """Every (parser, action) of ``parser`` and of its subcommands' parsers."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from options(sub)
        else:
            yield parser, action


def number_options(name: str) -> list[tuple[argparse.ArgumentParser, argparse.Action]]:
    """(parser, action) of every number option of the program ``name`` (its subcommands' too)."""
    return [
        (sub, action)
        for sub, action in options(built_parser(name))
        if isinstance(action.type, (WholeNumber, WholeNumbers, DecimalNumber))
    ]


PROGRAMS = programs()  # found from the files' text: collecting builds no parser


def test_taking_a_benchmark_s_parser_leaves_this_process_environment_as_it_was(monkeypatch):
    """Each benchmark sets its thread counts on import; numba refuses a compile after they change under it."""
    benchmarks = [name for name in PROGRAMS if name.startswith("benchmarks/")]
    before = dict(os.environ)
    for name in benchmarks:
        monkeypatch.delitem(sys.modules, name.removesuffix(".py").replace("/", "."), raising=False)
        built_parser.__wrapped__(name)
    assert "benchmarks/bench_plan.py" in benchmarks
    assert dict(os.environ) == before


@pytest.mark.parametrize("name", PROGRAMS)
def test_no_option_of_any_program_reads_numbers_with_python_s_int_or_float(name):
    for sub, action in options(built_parser(name)):
        assert action.type not in (int, float), f"{sub.prog} {action.option_strings}: type={action.type.__name__}"


def test_the_programs_found_include_every_command_and_their_number_options():
    found = {}
    for name in PROGRAMS:
        try:
            found[name] = number_options(name)
        except pytest.skip.Exception:  # a program whose extra is not installed here
            continue
    progs = {parser.prog for pairs in found.values() for parser, _ in pairs}
    assert {"yacht serve", "yacht play", "yacht analyze", "yacht simulate-players", "python -m agents.evaluate"} <= progs
    assert {"train.py", "agents/benchmark/aggregate.py", "benchmarks/bench_env.py"} <= {n for n, pairs in found.items() if pairs}
    assert sum(map(len, found.values())) >= 50


def refused(parser: argparse.ArgumentParser, argv: list[str]) -> str:
    """The one line argparse exits with (status 2) on ``argv``, after its usage."""
    err = io.StringIO()
    with pytest.raises(SystemExit) as exit, contextlib.redirect_stderr(err):
        parser.parse_args(argv)
    assert exit.value.code == 2 and "Traceback" not in err.getvalue()
    return err.getvalue().strip().splitlines()[-1]


@pytest.mark.parametrize("name", PROGRAMS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_a_number_option_given_another_script_s_digits_is_refused_in_one_line_naming_it(name, data):
    for parser, action in number_options(name):
        digits = "".join(data.draw(st.lists(NON_ASCII_DIGITS, min_size=1, max_size=5)))
        value = data.draw(st.sampled_from(["{}", "1{}", " {} ", "{}_0"])).format(digits)
        line = refused(parser, [action.option_strings[0], value])
        assert line.startswith(f"{parser.prog}: error: argument {'/'.join(action.option_strings)}: expected ")
        assert line.endswith(f", got {echoed(value)}") and "in digits 0-9" in line


@pytest.mark.parametrize("name", PROGRAMS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_a_number_option_reads_a_person_s_ascii_number_as_before(name, data):
    for parser, action in number_options(name):
        read = action.type
        low = read.least if read.least is not None else -(10**9)
        high = read.most if read.most is not None else low + 10**12
        if isinstance(read, WholeNumber):
            text = str(data.draw(st.integers(low, high)))
            assert read(text) == int(text)
        elif isinstance(read, WholeNumbers):
            numbers = data.draw(st.lists(st.integers(low, high), min_size=1, max_size=6))
            assert read(",".join(map(str, numbers))) == numbers
        else:
            text = repr(data.draw(st.floats(low, high, allow_nan=False, allow_infinity=False)))
            assert read(text) == float(text)
            for other in ("nan", "inf"):
                assert refused(parser, [action.option_strings[0], other]).endswith(f", got {echoed(other)}")


def test_yacht_serve_refuses_a_port_in_arabic_indic_digits_with_status_2_and_one_line():
    yacht = "import sys; from yacht_play.cli import main; sys.exit(main())"  # the `yacht` command of this tree
    result = subprocess.run(
        [sys.executable, "-c", yacht, "serve", "--port", "٨٠٨٠"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "yacht serve: error: argument --port: expected a port from 0 to 65535 in digits 0-9, got '٨٠٨٠'"
    )
