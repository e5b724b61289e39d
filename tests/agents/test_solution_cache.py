"""One cache folder and one variable for every solver's arrays (agents.solvers.solution_cache)."""

from __future__ import annotations

import os
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

from agents.solvers import optimal, sheet_solver, solution_cache, target
from agents.solvers.array_files import write_array
from yacht_env.rules import Category, RuleSet, all_alike, total, upper

# Rows that score alone: the target DP solves them. With an upper bonus: the sheet solver.
TARGET_RULES = RuleSet(
    name="cache_target",
    categories=(Category("ones", upper(1)), Category("twos", upper(2)), Category("chance", total)),
    num_dice=2,
    num_faces=3,
    rolls_per_turn=2,
)
SHEET_RULES = RuleSet(
    name="cache_sheet",
    categories=(
        Category("ones", upper(1), upper=True),
        Category("twos", upper(2), upper=True),
        Category("chance", total),
        Category("yahtzee", all_alike(50)),
    ),
    num_dice=2,
    num_faces=3,
    rolls_per_turn=2,
    bonus_threshold=4,
    bonus_points=10,
    yahtzee_row="yahtzee",
)


@pytest.fixture
def no_cache_variables(monkeypatch):
    monkeypatch.delenv(solution_cache.CACHE_ENV, raising=False)
    return monkeypatch


def test_every_solver_keeps_its_tables_in_the_one_default_folder(tmp_path, no_cache_variables):
    no_cache_variables.setenv("XDG_CACHE_HOME", str(tmp_path))
    optimal.clear_cache()
    target._solutions.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no variable set: the default folder, written without a warning
        assert solution_cache.cache_dir() == tmp_path / "yacht-rl"
        table = target.solve_target(TARGET_RULES).chances
        values = optimal.solve(SHEET_RULES).state_values
    folder = tmp_path / "yacht-rl"
    (target_file,) = folder.glob("target-cache_target-*.npy")
    (sheet_file,) = folder.glob(f"values-*{SHEET_RULES.fingerprint}*.npy")
    assert sorted(path.name for path in tmp_path.rglob("*.np[yz]")) == sorted([target_file.name, sheet_file.name])
    np.testing.assert_array_equal(np.load(target_file, allow_pickle=False), table)
    np.testing.assert_array_equal(np.load(sheet_file, allow_pickle=False), values)


def test_the_one_variable_moves_and_turns_off_every_solver_cache(tmp_path, no_cache_variables):
    no_cache_variables.setenv(solution_cache.CACHE_ENV, str(tmp_path))
    optimal.clear_cache()
    target._solutions.clear()
    target.solve_target(TARGET_RULES)
    optimal.solve(SHEET_RULES)
    assert len(list(tmp_path.glob("target-*.npy"))) == 1 and len(list(tmp_path.glob("values-*.npy"))) == 1
    for path in tmp_path.iterdir():
        path.unlink()
    no_cache_variables.setenv(solution_cache.CACHE_ENV, "")
    no_cache_variables.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # where a default folder would be
    no_cache_variables.setenv("HOME", str(tmp_path / "home"))
    optimal.clear_cache()
    target._solutions.clear()
    target.solve_target(TARGET_RULES)
    optimal.solve(SHEET_RULES)
    assert list(tmp_path.rglob("*")) == []


def solve_both():
    """The two solvers' arrays, solved afresh in this process (the disk cache read as usual)."""
    optimal.clear_cache()
    target._solutions.clear()
    return target.solve_target(TARGET_RULES).chances, optimal.solve(SHEET_RULES).state_values


def test_a_changed_solver_never_reads_a_table_an_older_one_stored(tmp_path, no_cache_variables):
    """The file names hold a digest of the solvers' source: another source, other files, solved again."""
    no_cache_variables.setenv(solution_cache.CACHE_ENV, str(tmp_path))
    table, values = solve_both()
    versions = [solution_cache.source_version(*sources) for sources in (target.SOLVER_SOURCES, optimal.SHEET_SOLVER_SOURCES)]
    (target_file,) = tmp_path.glob(f"target-*-{versions[0]}.npy")
    (sheet_file,) = tmp_path.glob(f"values-*-{versions[1]}.npy")
    # arrays of the right shapes, all wrong, with their checksums: what an older solver left
    write_array(target_file, np.full(table.shape, 0.25))
    write_array(sheet_file, np.full(values.shape, 1e6))
    stale_table, stale_values = solve_both()
    assert (stale_table == 0.25).all() and (stale_values == 1e6).all()  # the same solver reads its files
    no_cache_variables.setattr(target, "SOLVER_SOURCES", ("agents.solvers.target",))  # as if the solvers' source changed
    no_cache_variables.setattr(optimal, "SHEET_SOLVER_SOURCES", ("agents.solvers.sheet_solver",))
    fresh_table, fresh_values = solve_both()
    np.testing.assert_array_equal(fresh_table, table)
    np.testing.assert_array_equal(fresh_values, values)
    assert len(list(tmp_path.glob("*.npy"))) == 4  # the old files stay, unread


def test_a_solver_module_without_a_source_file_is_named():
    with pytest.raises(ValueError, match="solver module 'no_such_module' has no source file"):
        solution_cache.source_version("no_such_module")


def test_the_compiled_sheet_solver_is_kept_on_disk_for_the_next_process(tmp_path, no_cache_variables):
    """Each kernel of the sheet solver is cached by numba, so a new process loads its machine code instead of compiling it."""
    no_cache_variables.setenv(solution_cache.CACHE_ENV, str(tmp_path))
    optimal.clear_cache()
    solution = optimal.solve(SHEET_RULES)  # solved here: the folder holds no table yet
    solution.q_values_batch(np.arange(SHEET_RULES.dice.num_hands), 1, 0b1111, 0, 0)
    kernels = [
        value
        for value in vars(sheet_solver).values()
        if isinstance(value, Dispatcher) and value.py_func.__module__ == sheet_solver.__name__
    ]
    assert {"_solve_layer", "_q_values_rows", "solve_turn"} <= {kernel.__name__ for kernel in kernels}
    compiled_each_time = [kernel.__name__ for kernel in kernels if kernel.stats.cache_path is None]
    assert compiled_each_time == []
    for kernel in kernels:
        index = f"sheet_solver.{kernel.__name__}-"
        assert any(name.startswith(index) and name.endswith(".nbi") for name in os.listdir(kernel.stats.cache_path)), index


def test_a_cache_folder_is_made_with_every_missing_folder_above_it(tmp_path):
    folder = tmp_path / "a" / "b" / "cache"
    solution_cache.check_folder(folder, 0, "it")
    assert folder.is_dir()


@pytest.mark.parametrize("name", ["x" * 300, "a/" + "x" * 300], ids=["too-long-here", "too-long-below-a-new-folder"])
def test_a_folder_the_file_system_cannot_make_is_said_in_one_line_naming_why(tmp_path, name):
    folder = tmp_path / name
    with pytest.raises(solution_cache.CacheFolderError) as refused:
        solution_cache.check_folder(folder, 0, "it")
    assert str(refused.value) == (
        f"cannot store it in {folder}: File name too long (set {solution_cache.CACHE_ENV} to a writable folder with room for it)"
    )


def test_a_folder_with_exactly_the_room_asked_for_takes_it(tmp_path, monkeypatch):
    free = 3 * 2**30
    monkeypatch.setattr(solution_cache.shutil, "disk_usage", lambda path: SimpleNamespace(free=free))
    solution_cache.check_folder(tmp_path, free, "it")
    with pytest.raises(solution_cache.CacheFolderError, match=r"it needs 3.00 GiB, the disk has 3.00 GiB free"):
        solution_cache.check_folder(tmp_path, free + 1, "it")


def test_the_default_folder_is_under_the_home_cache_when_no_variable_names_one(tmp_path, no_cache_variables):
    no_cache_variables.delenv("XDG_CACHE_HOME", raising=False)
    no_cache_variables.setenv("HOME", str(tmp_path))
    assert solution_cache.cache_dir() == tmp_path / ".cache" / "yacht-rl"


def test_an_array_kept_once_is_read_back_without_building_it_again(tmp_path, no_cache_variables):
    no_cache_variables.setenv(solution_cache.CACHE_ENV, str(tmp_path))
    built = []

    def build():
        built.append(1)
        return np.arange(6, dtype=np.float64).reshape(2, 3)

    first = solution_cache.cached_array("kept.npy", (2, 3), build)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = solution_cache.cached_array("kept.npy", (2, 3), build)
    assert built == [1]
    np.testing.assert_array_equal(again, first)


def test_a_damaged_array_is_reported_at_the_line_that_asked_for_it(tmp_path, no_cache_variables):
    no_cache_variables.setenv(solution_cache.CACHE_ENV, str(tmp_path))
    path = solution_cache.cache_path("damaged")
    path.write_bytes(b"not an array")
    with pytest.warns(UserWarning, match="solving it again") as said:
        assert solution_cache.load_values("damaged", (2, 3)) is None
    assert [warning.filename for warning in said] == [__file__]


def test_a_cache_folder_that_cannot_be_written_is_warned_of_and_nothing_is_kept(tmp_path, no_cache_variables):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    no_cache_variables.setenv(solution_cache.CACHE_ENV, str(blocker / "cache"))
    with pytest.warns(UserWarning, match=f"^could not cache solved values in {blocker / 'cache'}: ") as said:
        assert solution_cache.store_values("kept", np.zeros(3)) is None
    assert [warning.filename for warning in said] == [__file__]  # said at the line that asked for it
    assert blocker.read_text() == ""


def test_a_folder_that_cannot_be_written_is_said_in_one_line(tmp_path, monkeypatch):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    if os.geteuid() == 0:  # root may write anywhere: the check is made as it is for anyone else
        monkeypatch.setattr(solution_cache.os, "access", lambda path, mode: not mode & os.W_OK)
    with pytest.raises(solution_cache.CacheFolderError, match=f"^cannot store it in {folder}: the folder is not writable "):
        solution_cache.check_folder(folder, 0, "it")
