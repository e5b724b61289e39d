"""tools/mutation.py's choice of the tests a mutant runs, on a small made-up project.

A mutant runs only the tests its map says reach the changed line; a test the map misses is a test that
can never kill the mutant, and its survivor would be reported as a gap in the tests. These are the
places where a line's coverage does not name every test that depends on it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "mutation.py"

MODULE = "yacht_env/tables.py"
SOURCE = """\
from __future__ import annotations

import functools


@functools.cache
def table(size: int) -> list[int]:
    return [0] * size


class Shape:
    def area(self, scale: int = 2) -> int:
        raise NotImplementedError


def plain(x: int) -> int:
    return x + 1
"""
TESTS = "tests/test_tables.py"
TEST_SOURCE = """\
from yacht_env.tables import Shape, plain, table


def test_first_call():
    assert table(3) == [0, 0, 0]


def test_cached_call():
    assert table(3) is table(3)


def test_default():
    import inspect

    assert inspect.signature(Shape.area).parameters["scale"].default == 2


def test_plain():
    assert plain(1) == 2
"""


@pytest.fixture
def tool(tmp_path, monkeypatch):
    """The tool, its tree and work folder in ``tmp_path``, and the made-up module with its one test file."""
    spec = importlib.util.spec_from_file_location("mutation_tool", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    tree, work = tmp_path / "tree", tmp_path / "work"
    for relative, text in ((MODULE, SOURCE), (TESTS, TEST_SOURCE)):
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_text(text)
    work.mkdir()
    (work / f"{tool.slug(MODULE)}.original").write_text(SOURCE)
    monkeypatch.setattr(tool, "TREE", tree)
    monkeypatch.setattr(tool, "WORK", work)
    monkeypatch.setattr(tool, "PACKAGES", ("yacht_env",))
    monkeypatch.setattr(tool, "MODULES", {MODULE: (TESTS,)})
    return tool


def line_of(text: str) -> int:
    """The number of the module's line that reads ``text`` (indentation aside)."""
    return next(number for number, line in enumerate(SOURCE.splitlines(), start=1) if line.strip() == text)


def made_up_map(tool, reached: dict[str, list[str]]):
    """A map in which each line of ``reached`` ran under the tests named (``|run`` contexts), and nothing else."""
    contexts = ["", *sorted({f"{TESTS}::{test}|run" for tests in reached.values() for test in tests})]
    files = {
        MODULE: {
            str(line_of(text)): [contexts.index(f"{TESTS}::{test}|run") for test in tests] for text, tests in reached.items()
        }
    }
    durations = {f"{TESTS}::{name}": 0.1 for name in ("test_first_call", "test_cached_call", "test_default", "test_plain")}
    return tool.TestMap(MODULE, {"contexts": contexts, "files": files, "durations": durations})


def test_a_cached_function_s_body_runs_every_test_that_uses_it_not_only_the_first_caller(tool):
    # coverage saw the body once, under the first test to call it; the second test reads what it kept
    tests = made_up_map(tool, {"return [0] * size": ["test_first_call"]})
    chosen = tests.line_tests(MODULE, line_of("return [0] * size"))
    assert {f"{TESTS}::test_first_call", f"{TESTS}::test_cached_call"} <= chosen


def test_a_default_of_a_method_no_test_calls_runs_the_tests_that_use_its_class(tool):
    tests = made_up_map(tool, {})
    chosen = tests.line_tests(MODULE, line_of("def area(self, scale: int = 2) -> int:"))
    assert f"{TESTS}::test_default" in chosen


def test_a_plain_line_runs_the_tests_that_reach_it_and_no_others(tool):
    tests = made_up_map(tool, {"return x + 1": ["test_plain"]})
    assert tests.line_tests(MODULE, line_of("return x + 1")) == {f"{TESTS}::test_plain"}


def test_only_a_change_to_a_function_s_annotations_is_told_apart(tool):
    assert tool.only_annotations_changed(SOURCE, SOURCE.replace("size: int)", "size: float)"))
    assert not tool.only_annotations_changed(SOURCE, SOURCE.replace("scale: int = 2", "scale: int = 3"))
    assert not tool.only_annotations_changed(SOURCE, SOURCE.replace("[0] * size", "[1] * size"))
    without_postponed = SOURCE.replace("from __future__ import annotations\n", "")
    assert not tool.only_annotations_changed(without_postponed, without_postponed.replace("size: int)", "size: float)"))
