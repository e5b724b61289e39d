"""tools/mutation.py's choice of the tests a mutant runs, on a small made-up project.

A mutant runs only the tests its map says reach the changed line; a test the map misses is a test that
can never kill the mutant, and its survivor would be reported as a gap in the tests. These are the
places where a line's coverage does not name every test that depends on it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
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


def maybe(x: int | None = None) -> int | None:
    '''Zero for no value.'''
    return 0 if x is None else x


def named(*, x: int = 0) -> int:
    return x
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
    monkeypatch.setattr(tool, "ROOT", tree)
    monkeypatch.setattr(tool, "WORK", work)
    monkeypatch.setattr(tool, "PACKAGES", ("yacht_env",))
    monkeypatch.setattr(tool, "REASONS", tmp_path / "reasons.toml")
    monkeypatch.setattr(tool, "SCORES", tmp_path / "scores.md")
    monkeypatch.setattr(tool, "RESULTS", tmp_path / "results.json")
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


FIELDS = """\
from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple


@dataclasses.dataclass(frozen=True)
class Result:
    name: str | None
    size: int = 0
    LIMIT: ClassVar[int] = 3


class Row(NamedTuple):
    name: str | None
"""


def replacing_in(tool, source: str):
    """``changed(before, after)``: whether ``source`` with its first ``before`` made ``after`` differs only where Python
    never runs."""
    return lambda before, after: tool.only_annotations_changed(source, source.replace(before, after, 1))


def test_a_dataclass_field_s_annotation_is_never_run_but_a_class_var_s_or_another_class_s_is():
    tool = fresh_tool("mutation_tool_fields")
    changed = replacing_in(tool, FIELDS)
    assert changed("    name: str | None\n    size", "    name: str & None\n    size")
    assert changed("size: int = 0", "size: float = 0")
    assert not changed("size: int = 0", "size: int = 1")
    assert not changed("LIMIT: ClassVar[int]", "LIMIT: int")  # a class variable would become a field
    named_tuple = FIELDS.rpartition("name: str | None")
    assert not tool.only_annotations_changed(FIELDS, named_tuple[0] + "name: str & None" + named_tuple[2])  # read by it
    without_postponed = FIELDS.replace("from __future__ import annotations\n", "")
    assert not tool.only_annotations_changed(without_postponed, without_postponed.replace("size: int", "size: float"))


LOCALS = """\
from __future__ import annotations

from pydantic import BaseModel


class Env:
    def __init__(self, n: int) -> None:
        self.seeds: list[int | None] = [None] * n
        count: int = n

        class Settings(BaseModel):
            size: int = count

        self.settings = Settings()
"""


@pytest.mark.parametrize(
    "source, before, after, never_run",
    [
        (LOCALS, "list[int | None]", "list[int >> None]", True),  # an attribute's, set in a method
        (LOCALS, "count: int", "count: float", True),  # a local's
        (LOCALS, "[None] * n", "[None] * 2", False),
        (LOCALS, "size: int", "size: float", False),  # a class's defined in the method: pydantic reads it
        (LOCALS.replace("from __future__ import annotations\n", ""), "count: int", "count: float", False),
    ],
)
def test_a_function_s_annotation_of_a_local_or_of_an_attribute_is_never_run_but_a_class_s_defined_there_is(
    source, before, after, never_run
):
    assert replacing_in(fresh_tool("mutation_tool_locals"), source)(before, after) is never_run


def test_a_plain_line_runs_the_tests_that_reach_it_and_no_others(tool):
    tests = made_up_map(tool, {"return x + 1": ["test_plain"]})
    assert tests.line_tests(MODULE, line_of("return x + 1")) == {f"{TESTS}::test_plain"}


def test_only_a_change_to_a_function_s_annotations_is_told_apart(tool):
    assert tool.only_annotations_changed(SOURCE, SOURCE.replace("size: int)", "size: float)"))
    assert not tool.only_annotations_changed(SOURCE, SOURCE.replace("scale: int = 2", "scale: int = 3"))
    assert not tool.only_annotations_changed(SOURCE, SOURCE.replace("[0] * size", "[1] * size"))
    without_postponed = SOURCE.replace("from __future__ import annotations\n", "")
    assert not tool.only_annotations_changed(without_postponed, without_postponed.replace("size: int)", "size: float)"))
    assert tool.only_annotations_changed(SOURCE, SOURCE.replace("Zero for no value.", "One for no value."))
    assert tool.only_annotations_changed(SOURCE, SOURCE.replace("-> int | None:", "-> int & None:"))
    assert not tool.only_annotations_changed(SOURCE, SOURCE.replace("x: int | None = None", "x: int | None = 1"))
    # without postponed annotations, a function's are evaluated when it is defined
    assert not tool.only_annotations_changed(SOURCE, without_postponed)


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


def test_every_module_with_code_is_found_and_one_added_later_without_an_edit(tool):
    assert tool.discover_modules(tool.TREE) == [MODULE]
    write(
        tool.TREE, {"yacht_env/__init__.py": '"""The package."""\n\nfrom yacht_env.tables import table\n\n__all__ = ["table"]\n'}
    )
    write(tool.TREE, {"yacht_env/later.py": "LIMIT = 3\n"})
    assert tool.discover_modules(tool.TREE) == ["yacht_env/later.py", MODULE]  # the __init__ only re-exports


def test_a_module_s_test_files_are_those_importing_it_through_its_package_or_helpers_nearest_first(tool):
    write(
        tool.TREE,
        {
            "yacht_env/__init__.py": "from yacht_env.tables import table\n",
            "yacht_env/user.py": "from yacht_env import tables\n\nX = 1\n",
            "yacht_env/deep.py": "X = 2\n",
            "yacht_env/middle.py": "from .deep import X\n",
            "tests/helper.py": "import yacht_env.user\n",
            "tests/test_package.py": "from yacht_env import table\n",
            "tests/test_user.py": "from tests.helper import yacht_env\n",
            "tests/test_middle.py": "import yacht_env.middle\n",
        },
    )
    # its own test file first, then by name; a test of another module that imports it is one step further
    assert tool.test_files(MODULE) == (TESTS, "tests/test_package.py")
    assert tool.test_files("yacht_env/user.py") == ("tests/test_user.py",)  # through a test helper
    assert tool.test_files("yacht_env/deep.py") == ("tests/test_middle.py",)  # none nearer: one step further
    assert tool.test_files("yacht_env/later.py") == ()


def test_a_kernel_s_mutant_compiles_again_only_the_kernels_of_files_its_change_can_reach(tool):
    # a kernel compiled from the unmutated code may be reused only where the change cannot be inlined into it
    write(
        tool.TREE,
        {
            "yacht_env/uses_tables.py": "from yacht_env.tables import table\n",
            "yacht_env/sub/uses_that.py": "import yacht_env.uses_tables\n",
            "yacht_env/sub/tables.py": "LIMIT = 1\n",  # the module's name in another folder: another file, kept
            "yacht_env/apart.py": "LIMIT = 2\n",
            "tests/test_uses.py": "import yacht_env.uses_tables\n",
        },
    )
    shared, fresh = tool.WORK / "shared", tool.WORK / "fresh"
    kept = ["yacht_env_1a2b/apart.f-1.py311.nbi", "yacht_env_1a2b/apart.f-1.py311.1.nbc", "sub_77/tables.m-1.py311.nbi"]
    dropped = [
        "yacht_env_1a2b/tables.f-7.py311.nbi",
        "yacht_env_1a2b/uses_tables.h-1.py311.nbi",
        "sub_77/uses_that.k-2.py311.nbi",
    ]
    for name in kept + dropped:
        (shared / name).parent.mkdir(parents=True, exist_ok=True)
        (shared / name).write_bytes(name.encode())
    assert tool.reached_by_change(MODULE) == {MODULE, "yacht_env/uses_tables.py", "yacht_env/sub/uses_that.py"}
    assert tool.seed_numba_cache(MODULE, shared, fresh) == len(kept)
    assert sorted(path.relative_to(fresh).as_posix() for path in fresh.rglob("*") if path.is_file()) == sorted(kept)
    assert all((fresh / name).read_bytes() == name.encode() for name in kept)
    assert tool.seed_numba_cache(MODULE, tool.WORK / "no such cache", tool.WORK / "none") == 0


def test_a_module_tested_by_the_same_files_on_the_same_tree_takes_the_map_another_module_took(tool):
    # one run of the tests under coverage maps every file of the packages: it need not run again for each module
    write(tool.TREE, {"yacht_env/other.py": "LIMIT = 3\n", TESTS: "import yacht_env.other\n" + TEST_SOURCE})
    other = "yacht_env/other.py"
    (tool.WORK / f"{tool.slug(other)}.original").write_text("LIMIT = 3\n")
    assert tool.test_files(other) == tool.test_files(MODULE) == (TESTS,)
    taken = {"source": "s", "tests": tool.tests_digest(other), "tree": tool.tree_digest(), "seconds": 1.0, "files": {}}
    tool.map_file(other).write_text(json.dumps(taken))
    (tool.WORK / f"numba-{tool.slug(other)}" / "yacht_env_1a").mkdir(parents=True)
    (tool.WORK / f"numba-{tool.slug(other)}" / "yacht_env_1a" / "other.f-1.py311.nbi").write_text("compiled")
    shared = tool.load_map(MODULE)
    assert shared == {**taken, "source": tool.source_digest(MODULE)}
    assert json.loads(tool.map_file(MODULE).read_text()) == shared  # kept as the module's own
    assert (tool.WORK / f"numba-{tool.slug(MODULE)}" / "yacht_env_1a" / "other.f-1.py311.nbi").read_text() == "compiled"
    # another tree (a file of the packages changed since): no map of it to share
    tool.map_file(MODULE).unlink()
    write(tool.TREE, {"yacht_env/other.py": "LIMIT = 4\n"})
    tool.tree_digest.cache_clear()
    assert tool.shared_map(MODULE) is None
    # this tree, but other test files: not shared either
    tool.map_file(other).write_text(json.dumps({**taken, "tree": tool.tree_digest(), "tests": "0" * 64}))
    assert tool.shared_map(MODULE) is None and not tool.map_file(MODULE).exists()


def made_up_session(tool):
    """A Cosmic Ray session of the made-up module, as a run begins it (its mutants generated, none tested)."""
    tool.write_config(MODULE)
    session = tool.WORK / f"{tool.slug(MODULE)}.sqlite"
    tool.cosmic_ray("cosmic-ray", "init", str(tool.WORK / f"{tool.slug(MODULE)}.toml"), str(session))
    left_out = tool.leave_out_what_never_runs(MODULE, session)
    return session, left_out


def test_mutants_of_what_never_runs_are_not_generated_and_every_other_is(tool):
    pytest.importorskip("cosmic_ray", reason="the mutation extra: pip install -e '.[mutation]'")
    from cosmic_ray.work_db import WorkDB, use_db

    session, left_out = made_up_session(tool)
    assert left_out > 0  # the annotations of ``maybe``
    with use_db(str(session), WorkDB.Mode.open) as database:
        skipped = {item.job_id for item, result in database.completed_work_items if result.output == tool.NOT_GENERATED}
        assert len(skipped) == left_out
        for item in database.work_items:
            mutated = tool.mutated_source(SOURCE, item.mutations[0])
            left_out = mutated is not None and (not tool.is_python(mutated) or tool.only_annotations_changed(SOURCE, mutated))
            assert (item.job_id in skipped) == left_out
        assert any(item.job_id not in skipped for item in database.work_items)
        # the `*` of ``named`` turned into an operator is no program: left out, not counted as killed
        broken = [item for item in database.work_items if not tool.is_python(tool.mutated_source(SOURCE, item.mutations[0]))]
        assert broken and all(item.job_id in skipped for item in broken)


def test_cosmic_ray_is_run_from_beside_the_interpreter_with_no_venv_activated(tool, monkeypatch, tmp_path):
    pytest.importorskip("cosmic_ray", reason="the mutation extra: pip install -e '.[mutation]'")
    if shutil.which("cosmic-ray", path=str(Path(sys.executable).parent)) is None:
        pytest.skip(f"cosmic-ray is not installed beside {sys.executable}")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # as when a venv's python is run by its path
    session, _ = made_up_session(tool)
    assert session.exists()
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nothing" / "python"))
    with pytest.raises(SystemExit, match="cosmic-ray is not installed beside .*nothing.*mutation"):
        tool.cosmic_ray("cosmic-ray", "--help")


UNMADE_SOURCE = """\
import json


def parse(text):
    try:
        return json.loads(text)
    except (ValueError, json.JSONDecodeError):
        return None
"""


def test_a_mutant_cosmic_ray_cannot_make_is_not_generated_and_leaves_no_sample_short(tool):
    """Cosmic Ray's exception replacer fails on ``json.JSONDecodeError`` in a tuple of exceptions: there is no mutant
    to test, so it is counted as not generated, never as a mutant pending or in error (a sample short of its size)."""
    pytest.importorskip("cosmic_ray", reason="the mutation extra: pip install -e '.[mutation]'")
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    write(tool.TREE, {MODULE: UNMADE_SOURCE})
    (tool.WORK / f"{tool.slug(MODULE)}.original").write_text(UNMADE_SOURCE)
    session, left_out = made_up_session(tool)
    with use_db(str(session), WorkDB.Mode.open) as database:
        (unmade,) = [item for item, result in database.completed_work_items if result.output == tool.NOT_MADE]
        assert left_out == 1 and unmade.mutations[0].operator_name == "core/ExceptionReplacer"
        tested = [item.job_id for item in database.pending_work_items]  # the other replacement (ValueError) among them
        killed = WorkResult(WorkerOutcome.NORMAL, output="", test_outcome=TestOutcome.KILLED)
        database.set_multiple_results(tested, killed)
    counts = {name: tool.measured(MODULE)[name] for name in tool.COUNTS}
    assert counts == {"killed": len(tested), "survived": 0, "sample": len(tested), "mutants": len(tested), "not_generated": 1}
    # a session begun before: the worker's failure to make it, a traceback through Cosmic Ray's apply_mutation
    failed = 'Traceback (most recent call last):\n  File "cosmic_ray/mutating.py", line 130, in apply_mutation\n'
    with use_db(str(session), WorkDB.Mode.open) as database:
        database.set_result(unmade.job_id, WorkResult(WorkerOutcome.EXCEPTION, failed, TestOutcome.INCOMPETENT))
    assert {name: tool.measured(MODULE)[name] for name in tool.COUNTS} == counts
    # any other failure of the worker is a mutant not measured, which leaves the sample short
    elsewhere = failed.replace("apply_mutation", "run_tests")
    with use_db(str(session), WorkDB.Mode.open) as database:
        database.set_result(unmade.job_id, WorkResult(WorkerOutcome.EXCEPTION, elsewhere, TestOutcome.INCOMPETENT))
    short = counts | {"mutants": len(tested) + 1, "not_generated": 0}
    assert {name: tool.measured(MODULE)[name] for name in tool.COUNTS} == short


def fresh_tool(name: str):
    """The tool as it stands, with its own paths (not the fixture's made-up project)."""
    spec = importlib.util.spec_from_file_location(name, TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_a_mutant_s_key_is_the_lines_it_changes_wherever_they_move():
    tool = fresh_tool("mutation_tool_keys")
    mutated = SOURCE.replace("return x + 1", "return x - 1")
    key = tool.mutant_key(SOURCE, mutated)
    assert key == "return x + 1 -> return x - 1"
    assert tool.mutant_key("X = 0\n\n" + SOURCE, "X = 0\n\n" + mutated) == key


def test_a_reason_of_another_kind_or_without_a_why_is_refused_naming_it(tool):
    tool.REASONS.write_text('["m.py"]\n"a -> b" = { kind = "fine", why = "x" }\n')
    with pytest.raises(SystemExit, match=r"\[m.py\] 'a -> b': expected \{ kind = one of equivalent, accepted"):
        tool.read_reasons()
    tool.REASONS.write_text('["m.py"]\n"a -> b" = { kind = "equivalent", why = " " }\n')
    with pytest.raises(SystemExit, match="why = a sentence"):
        tool.read_reasons()


def test_a_reasons_file_that_is_not_toml_is_refused_in_one_line(tool):
    tool.REASONS.write_text('["m.py"]\n"a -> b" = { kind = "equivalent", why = "x" }\n\n["m.py"]\n')
    with pytest.raises(SystemExit, match=r"^reasons.toml: Cannot declare \('m.py',\) twice"):
        tool.read_reasons()


def test_the_kept_reasons_read_and_each_names_a_module_of_the_packages():
    tool = fresh_tool("mutation_tool_kept_reasons")
    reasons = tool.read_reasons(tool.ROOT / "tools" / "mutation_reasons.toml")
    assert reasons and set(reasons) <= set(tool.discover_modules())


def test_the_report_scores_a_module_over_its_mutants_that_are_not_equivalent_with_each_survivor_s_reason(tool):
    pytest.importorskip("cosmic_ray", reason="the mutation extra: pip install -e '.[mutation]'")
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    session, _ = made_up_session(tool)
    with use_db(str(session), WorkDB.Mode.open) as database:
        items = sorted(database.pending_work_items, key=lambda item: item.job_id)
        survivors, killed = items[:3], items[3:]
        for item in killed:
            database.set_result(item.job_id, WorkResult(WorkerOutcome.NORMAL, "", TestOutcome.KILLED, ""))
        for item in survivors:
            database.set_result(item.job_id, WorkResult(WorkerOutcome.NORMAL, "", TestOutcome.SURVIVED, "a diff"))
    keys = [tool.mutant_key(SOURCE, tool.mutated_source(SOURCE, item.mutations[0])) for item in survivors]
    tool.REASONS.write_text(
        f'["{MODULE}"]\n"{keys[0]}" = {{ kind = "equivalent", why = "the same either way" }}\n'
        f'"{keys[1]}" = {{ kind = "accepted", why = "a gap kept" }}\n'
    )
    report = tool.write_report([MODULE, "yacht_env/later.py"]).read_text()
    n = len(items)
    low, high = tool.wilson_interval(n - 3, n - 1)
    row = f"| `{MODULE}` | {n - 3} | 1 | 1 | 1 | {n} | {n} | {(n - 3) / (n - 1):.1%} | {low:.1%} to {high:.1%} |"
    assert row in report
    assert f"`{keys[0]}`: equivalent: the same either way" in report
    assert f"`{keys[1]}`: accepted: a gap kept" in report
    assert f"`{keys[2]}`: **not explained**" in report
    assert "`yacht_env/later.py` (no test file imports it)" in report


def session_tested(tool, survived: int = 3):
    """The made-up module's session with its first ``survived`` mutants survived and the rest killed; their keys."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    session, _ = made_up_session(tool)
    with use_db(str(session), WorkDB.Mode.open) as database:
        items = sorted(database.pending_work_items, key=lambda item: item.job_id)
        for number, item in enumerate(items):
            outcome = TestOutcome.SURVIVED if number < survived else TestOutcome.KILLED
            database.set_result(item.job_id, WorkResult(WorkerOutcome.NORMAL, "", outcome, "a diff"))
    return len(items), [tool.mutant_key(SOURCE, tool.mutated_source(SOURCE, item.mutations[0])) for item in items[:survived]]


def test_survivors_are_tested_again_but_those_explained_as_equivalent(tool):
    pytest.importorskip("cosmic_ray", reason="the mutation extra: pip install -e '.[mutation]'")
    _, keys = session_tested(tool)
    tool.REASONS.write_text(
        f'["{MODULE}"]\n"{keys[0]}" = {{ kind = "equivalent", why = "the same either way" }}\n'
        f'"{keys[1]}" = {{ kind = "accepted", why = "a gap kept" }}\n'
    )
    again = tool.survivors_to_retest(MODULE)
    assert sorted(tool.mutant_key(SOURCE, tool.mutated_source(SOURCE, item.mutations[0])) for item in again) == sorted(keys[1:])
    (unexplained,) = tool.survivors_to_retest(MODULE, unexplained=True)  # the accepted one is left out too
    assert tool.mutant_key(SOURCE, tool.mutated_source(SOURCE, unexplained.mutations[0])) == keys[2]


def test_unexplained_goes_with_retest_survivors_alone():
    run = subprocess.run([sys.executable, str(TOOL), "--unexplained", "yacht_env/dice.py"], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.splitlines()[-1].endswith("--unexplained goes with --retest-survivors")


LATER = "yacht_env/later.py"
LATER_SOURCE = "LIMIT = 3\n"


def measured_elsewhere(source: str = LATER_SOURCE, when: str = "2026-01-02T03:04:05Z") -> dict:
    """An outcome of ``yacht_env/later.py`` as another checkout kept it: 5 killed, one survivor, of 9 mutants."""
    survivor = {"key": "LIMIT = 3 -> LIMIT = 4", "line": 1, "diff": "-LIMIT = 3\n+LIMIT = 4", "output": "Every test passed."}
    digest = hashlib.sha256(source.encode()).hexdigest()
    counts = {"killed": 5, "survived": 1, "sample": 6, "mutants": 9, "not_generated": 0}
    return {"source": digest, "measured": when, **counts, "survivors": [survivor]}


def test_a_module_of_which_no_mutant_is_made_is_measured_as_none_to_score_not_as_untested(tool):
    """``python -m`` entry points are a call alone (``sys.exit(main())``): Cosmic Ray makes no mutant of them, and
    their session, run to its end, was reported as a module not tested yet."""
    pytest.importorskip("cosmic_ray", reason="the mutation extra: pip install -e '.[mutation]'")
    entry_point = "yacht_env/__main__.py"
    write(tool.TREE, {entry_point: '"""Runs it."""\n\nfrom yacht_env.tables import table\n\ntable()\n'})
    assert entry_point in tool.discover_modules(tool.TREE)  # it has code
    tool.write_config(entry_point)
    session = tool.WORK / f"{tool.slug(entry_point)}.sqlite"
    tool.cosmic_ray("cosmic-ray", "init", str(tool.WORK / f"{tool.slug(entry_point)}.toml"), str(session))
    outcome = tool.measured(entry_point)
    assert {name: outcome[name] for name in tool.COUNTS} == dict.fromkeys(tool.COUNTS, 0)
    assert outcome["survivors"] == [] and outcome["source"] == hashlib.sha256((tool.TREE / entry_point).read_bytes()).hexdigest()
    report = tool.write_report([entry_point]).read_text()
    assert f"| `{entry_point}` | 0 | 0 | 0 | 0 | 0 | 0 | - | - | 0 | " in report
    assert "## Modules not tested yet\n\nNone." in report
    # a session begun on a module with mutants, none tested yet, is still not measured
    write(tool.TREE, {entry_point: '"""Runs it."""\n\nfrom yacht_env.tables import table\n\ntable(3)\n'})
    session.unlink()
    tool.cosmic_ray("cosmic-ray", "init", str(tool.WORK / f"{tool.slug(entry_point)}.toml"), str(session))
    assert tool.measured(entry_point) is None


def test_a_sample_short_of_sixty_mutants_or_of_all_a_module_has_is_marked_short(tool):
    def entry(sample: int, mutants: int) -> dict:
        counts = {"killed": sample, "survived": 0, "sample": sample, "mutants": mutants, "not_generated": 0}
        return {"source": "0" * 64, "measured": "2026-01-02T03:04:05Z", **counts, "survivors": []}

    shown = {(60, 100): "60", (59, 100): "59 (short of 60)", (42, 42): "42", (41, 42): "41 (short of 42)"}
    for (sample, mutants), cell in shown.items():
        table, _, _ = tool.report_tables([LATER], {LATER: entry(sample, mutants)}, {})
        assert table[0].split(" | ")[5] == cell


def keep_results(tool, modules: dict) -> None:
    tool.RESULTS.write_text(json.dumps({"format": 1, "modules": modules}))


def test_a_module_measured_elsewhere_keeps_its_row_beside_one_measured_here(tool):
    pytest.importorskip("cosmic_ray", reason="the mutation extra: pip install -e '.[mutation]'")
    write(tool.TREE, {LATER: LATER_SOURCE})
    n, keys = session_tested(tool)
    keep_results(tool, {LATER: measured_elsewhere()})  # no session of it here: a fresh checkout's case
    report = tool.write_report([MODULE, LATER]).read_text()
    low, high = tool.wilson_interval(n - 3, n)
    assert f"| `{MODULE}` | {n - 3} | 0 | 0 | 3 | {n} | {n} | {(n - 3) / n:.1%} | {low:.1%} to {high:.1%} |" in report
    low, high = tool.wilson_interval(5, 6)
    # 6 of its 9 mutants tested: a run stopped short of its sample
    assert (
        f"| `{LATER}` | 5 | 0 | 0 | 1 | 6 (short of 9) | 9 | {5 / 6:.1%} | {low:.1%} to {high:.1%} | 0 | 2026-01-02 |" in report
    )
    assert f"- `{LATER}`:1 `LIMIT = 3 -> LIMIT = 4`: **not explained**: Every test passed." in report
    assert "## Modules not tested yet\n\nNone." in report
    kept = tool.read_results()
    assert kept[LATER] == measured_elsewhere()
    assert kept[MODULE]["source"] == hashlib.sha256(SOURCE.encode()).hexdigest()
    assert sorted(survivor["key"].split(" #")[0] for survivor in kept[MODULE]["survivors"]) == sorted(keys)
    assert (kept[MODULE]["killed"], kept[MODULE]["sample"], kept[MODULE]["mutants"]) == (n - 3, n, n)
    # a second report from the file alone, the session gone, is the same report
    (tool.WORK / f"{tool.slug(MODULE)}.sqlite").unlink()
    assert tool.write_report([MODULE, LATER]).read_text() == report


def test_a_session_here_does_not_replace_an_outcome_measured_later_elsewhere(tool):
    pytest.importorskip("cosmic_ray", reason="the mutation extra: pip install -e '.[mutation]'")
    n, _ = session_tested(tool)
    later = {**measured_elsewhere(SOURCE, "2999-01-01T00:00:00Z"), "survivors": [], "survived": 0, "sample": 5}
    keep_results(tool, {MODULE: later})
    tool.write_report([MODULE])
    assert tool.read_results()[MODULE] == later
    keep_results(tool, {MODULE: {**later, "measured": "2000-01-01T00:00:00Z"}})
    tool.write_report([MODULE])
    assert tool.read_results()[MODULE]["sample"] == n


def test_a_module_changed_since_it_was_measured_is_marked_as_an_earlier_version(tool):
    write(tool.TREE, {LATER: LATER_SOURCE})
    keep_results(tool, {LATER: measured_elsewhere()})
    report = tool.write_report([LATER]).read_text()
    assert "| 0 | 2026-01-02 |" in report and "(earlier version) |" not in report
    assert f"- `{LATER}`:1 `LIMIT = 3 -> LIMIT = 4`: **not explained**" in report
    write(tool.TREE, {LATER: "LIMIT = 3  # the most\n"})
    report = tool.write_report([LATER]).read_text()
    assert "| 0 | 2026-01-02 (earlier version) |" in report
    assert f"- `{LATER}`:1 `LIMIT = 3 -> LIMIT = 4` (earlier version): **not explained**" in report
    (tool.TREE / LATER).unlink()  # a module removed since: no longer its current version either
    assert "2026-01-02 (earlier version) |" in tool.write_report([LATER]).read_text()


def change(data: dict, path: tuple, value) -> dict:
    """A copy of ``data`` with the field at ``path`` (keys and list indices) set to ``value``, or removed for ``...``."""
    copy = json.loads(json.dumps(data))
    *parents, last = path
    target = copy
    for part in parents:
        target = target[part]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return copy


GOOD = {"format": 1, "modules": {LATER: measured_elsewhere()}}


@pytest.mark.parametrize(
    "data, named",
    [
        (change(GOOD, ("format",), 2), "format: expected 1, got 2"),
        (change(GOOD, ("format",), True), "format: expected 1, got True"),
        (change(GOOD, ("modules",), []), "modules: expected an object of module paths"),
        ({"format": 1, "modules": {"../etc/later.py": measured_elsewhere()}}, "modules: expected module paths under"),
        ({"format": 1, "modules": {"agents/later.py": measured_elsewhere()}}, "got 'agents/later.py'"),
        (change(GOOD, ("modules", LATER), "5 killed"), f"modules['{LATER}']: expected an object of source, measured"),
        (change(GOOD, ("modules", LATER, "killed"), ...), f"modules['{LATER}'].killed: expected only the fields"),
        (change(GOOD, ("modules", LATER, "extra"), 1), f"modules['{LATER}'].extra: expected only the fields"),
        (change(GOOD, ("modules", LATER, "source"), "abc"), f"modules['{LATER}'].source: expected the sha256"),
        (change(GOOD, ("modules", LATER, "measured"), "yesterday"), f"modules['{LATER}'].measured: expected a UTC time"),
        (change(GOOD, ("modules", LATER, "measured"), 20260102), f"modules['{LATER}'].measured: expected a UTC time"),
        (change(GOOD, ("modules", LATER, "killed"), -1), f"modules['{LATER}'].killed: expected a whole number from 0"),
        (change(GOOD, ("modules", LATER, "killed"), 5.0), f"modules['{LATER}'].killed: expected a whole number"),
        (change(GOOD, ("modules", LATER, "survived"), True), f"modules['{LATER}'].survived: expected a whole number"),
        (change(GOOD, ("modules", LATER, "killed"), 6), f"modules['{LATER}'].sample: expected killed + survived, got 6"),
        (change(GOOD, ("modules", LATER, "mutants"), 5), f"modules['{LATER}'].mutants: expected at least the sample, 6"),
        (change(GOOD, ("modules", LATER, "survivors"), []), f"modules['{LATER}'].survivors: expected a list of the 1"),
        (change(GOOD, ("modules", LATER, "survivors", 0, "line"), 0), f"'{LATER}'].survivors[0].line: expected a line number"),
        (change(GOOD, ("modules", LATER, "survivors", 0, "key"), "a\nb"), "survivors[0].key: expected a string on one line"),
        (change(GOOD, ("modules", LATER, "survivors", 0, "key"), " "), "survivors[0].key: expected the lines the mutant"),
        (change(GOOD, ("modules", LATER, "survivors", 0, "output"), None), "survivors[0].output: expected a string"),
        (change(GOOD, ("modules", LATER, "survivors", 0, "diff"), ["-a"]), "survivors[0].diff: expected a string, got"),
        (change(GOOD, ("modules", LATER, "survivors", 0, "why"), "x"), "survivors[0].why: expected only the fields key"),
        ("[1, 2", "results.json: not a JSON file in UTF-8 (Expecting"),
    ],
)
def test_a_results_file_of_another_shape_is_refused_in_one_line_naming_the_field_before_anything_is_written(tool, data, named):
    write(tool.TREE, {LATER: LATER_SOURCE})
    tool.RESULTS.write_text(data if isinstance(data, str) else json.dumps(data))
    kept = tool.RESULTS.read_bytes()
    with pytest.raises(SystemExit) as refused:
        tool.write_report([LATER])
    message = str(refused.value)
    assert message.startswith("results.json: ") and "\n" not in message
    assert named in message
    assert tool.RESULTS.read_bytes() == kept and not tool.SCORES.exists()
    tool.RESULTS.write_text(json.dumps(GOOD))
    assert tool.read_results() == GOOD["modules"]  # the same file, well formed, is read


def test_the_project_s_kept_results_are_well_formed_and_name_its_modules():
    tool = fresh_tool("mutation_tool_results")
    results = tool.read_results()
    assert results and set(results) <= set(tool.discover_modules())


def test_a_test_run_that_spins_is_stopped_by_its_cpu_limit_and_one_that_ends_is_not(tool):
    # without the limit the spinning run would reach the timeout and raise: the limit, not the clock, must stop it
    assert tool.run_within_cpu([sys.executable, "-c", "while True: pass"], 1, timeout=120) != 0
    assert tool.run_within_cpu([sys.executable, "-c", "pass"], 1, timeout=120) == 0


def test_a_mutant_may_use_four_times_the_cpu_of_the_map_s_run_and_two_minutes_at_least(tool):
    assert tool.mutant_cpu_limit({"seconds": 900.0, "cpu_seconds": 50.0}) == 200.0  # the CPU, not the wall clock
    assert tool.mutant_cpu_limit({"seconds": 900.0, "cpu_seconds": 10.0}) == 120.0
    assert tool.mutant_cpu_limit({"seconds": 40.0}) == 160.0  # a map kept before CPU seconds were recorded


def test_a_mutant_s_test_may_take_four_times_the_map_s_slowest_and_a_minute_at_least(tool):
    assert tool.mutant_test_limit({"seconds": 900.0, "durations": {"a": 30.0, "b": 5.0}}) == 120.0
    assert tool.mutant_test_limit({"seconds": 900.0, "durations": {"a": 2.0}}) == 60.0
    assert tool.mutant_test_limit({"seconds": 40.0}) == 160.0  # a map kept before each test's seconds were


WAITS = "import threading\n\n\ndef test_waits():\n    threading.Event().wait()\n"  # a test that waits for ever, using no CPU


def with_the_tool() -> dict[str, str]:
    """An environment where pytest, run in a test's folder, loads the tool as its ``mutation`` plugin (as the tree's does)."""
    return dict(os.environ, PYTHONPATH=str(TOOL.parent))


def test_a_mutant_s_test_that_waits_for_ever_is_stopped_at_its_limit(tool, tmp_path):
    # a wait uses no CPU: without the per-test limit the run would reach the timeout below and raise
    (tmp_path / "test_waits.py").write_text(WAITS)
    (tmp_path / "test_ends.py").write_text("def test_ends():\n    pass\n")
    for name, failed in (("test_waits.py", True), ("test_ends.py", False)):
        listing = tmp_path / f"{name}.txt"
        listing.write_text(name + "\n")
        command = tool.mutant_test_command(listing, 2.0)
        code = tool.run_within_cpu(command, 60, cwd=tmp_path, env=with_the_tool(), timeout=60, capture_output=True)
        assert (code != 0) == failed, name


# A test that fails the first time it runs in the folder and passes after (a browser test on a busy machine); one that
# always fails; one that fails only after another test of the same run (a state the mutant leaves behind).
ONCE = """from pathlib import Path

import pytest


@pytest.mark.parametrize("case", ["a case"], ids=["a case"])  # a node id with a space in it
def test_once(case):
    first = Path("ran-once")
    if not first.exists():
        first.write_text("")
        raise AssertionError("the machine was busy")
"""
ALWAYS = "def test_always():\n    assert 1 == 2\n"
AFTER = """LEFT = []


def test_leaves():
    LEFT.append(1)


def test_after():
    assert not LEFT
"""


def stage_runs(tool, tmp_path, monkeypatch, tests: list[str], limit: float, confirm: bool) -> tuple[int, list[list[str]]]:
    """``run_stage`` of ``tests`` in ``tmp_path``: its status, and the tests each of its pytest runs was given."""
    runs, run = [], tool.run_within_cpu

    def counted(command, cpu_seconds, **options):
        runs.append((tmp_path / "listing.txt").read_text().splitlines())
        return run(command, cpu_seconds, **options)

    monkeypatch.setattr(tool, "run_within_cpu", counted)
    code = tool.run_stage(tests, tmp_path / "listing.txt", limit, 60.0, confirm, cwd=tmp_path, env=with_the_tool(), timeout=60)
    assert not (tmp_path / "listing.failed").exists()
    return code, runs


@pytest.mark.parametrize(
    ("source", "confirm", "failed", "runs"),
    [
        (ONCE, True, False, ["test_once[a case]"]),  # fails, passes alone, passes in the stage again: not the mutant's
        (ONCE, False, True, []),  # a stage not confirmed counts its first failure
        (ALWAYS, True, True, ["test_always"]),  # fails alone too: the mutant's
        (AFTER, True, True, ["test_after"]),  # passes alone, fails again in the stage: the mutant's
    ],
    ids=["flaky", "flaky-unconfirmed", "always", "after-another"],
)
def test_a_failure_of_the_last_stage_counts_only_if_it_is_the_mutant_s(
    tool, tmp_path, monkeypatch, capfd, source, confirm, failed, runs
):
    (tmp_path / "test_stage.py").write_text(source)
    code, made = stage_runs(tool, tmp_path, monkeypatch, ["test_stage.py"], 30.0, confirm)
    assert (code not in (0, 5)) == failed
    # the stage, then the failed test alone by its node id, then the stage again where that one passed alone
    expected = [["test_stage.py"]] + [[f"test_stage.py::{name}"] for name in runs]
    expected += [["test_stage.py"]] if source is not ALWAYS and confirm else []
    assert made == expected
    assert ("failed and passed alone" in capfd.readouterr().out) == (len(made) == 3)


def test_a_stage_stopped_before_it_names_a_failed_test_counts_as_it_is(tool, tmp_path, monkeypatch):
    # a test past its limit stops the whole run (pytest-timeout's thread method): no failure is named, nothing reruns
    (tmp_path / "test_waits.py").write_text(WAITS)
    code, made = stage_runs(tool, tmp_path, monkeypatch, ["test_waits.py"], 2.0, True)
    assert code not in (0, 5)
    assert made == [["test_waits.py"]]


def test_a_missing_requirement_stops_the_run_in_one_line_naming_it(tool, monkeypatch):
    monkeypatch.setattr(tool, "REQUIREMENTS", ("pytest", "no_such_package_for_the_mutation_tool"))
    monkeypatch.setattr(tool, "RESULTS", tool.ROOT / "results.json")  # the help names both under the checkout
    monkeypatch.setattr(tool, "SCORES", tool.ROOT / "scores.md")
    with pytest.raises(SystemExit, match=r"needs no_such_package_for_the_mutation_tool: pip install -e '\.\[mutation\]'$"):
        tool.main(["--report"])
    monkeypatch.setattr(tool, "REQUIREMENTS", ("pytest",))
    tool.check_requirements()  # what is there passes


def test_a_survivor_s_reason_to_live_says_what_it_passed(tool):
    # after the tests the map chose, a mutant runs every test file of its module (run_tests): so does one the map
    # reaches with none, and its survival says so rather than that nothing ran
    why = tool.why_survived
    assert why("mutation: lines [12], 0 tests and 0 whole test files\n") == (
        "No test reaches lines [12] in the map; every test file of the module passed."
    )
    assert why("mutation: lines [3, 4], 2 tests and 1 whole test files") == (
        "Lines [3, 4]: what reaches them passed (2 tests and 1 whole test files)."
    )
    assert why("mutation: lines [7], an annotation never evaluated: equivalent") == (
        "Lines [7]: an annotation never evaluated: equivalent."
    )
    assert why("") == "Every test file of the module passed."
