"""The suite never reads a solved table that another run stored (tests/conftest.py's fresh cache folder)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")

REPORT_FOLDER = """
import os
from pathlib import Path


def test_{name}():
    folder = os.environ["YACHT_RL_CACHE_DIR"]
    assert Path(folder).is_dir()
    Path(os.environ["REPORT_TO"], "{name}").write_text(folder)
"""


def run_inner_suite(tmp_path: Path, workers: int, **environment: str) -> tuple[Path, list[str]]:
    """Run two tests under this suite's conftest; returns the report folder and each test's cache folder."""
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(CONFTEST, suite / "conftest.py")
    for name in ("first", "second"):
        (suite / f"test_{name}.py").write_text(REPORT_FOLDER.format(name=name))
    reports = tmp_path / "reports"
    reports.mkdir()
    env = {**os.environ, **environment, "REPORT_TO": str(reports)}
    env.pop("PYTEST_XDIST_WORKER", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(suite), str(suite)]
    command += ["-n", str(workers), "--dist", "loadfile"] if workers else ["-p", "no:xdist"]
    done = subprocess.run(command, cwd=suite, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return reports, [(reports / name).read_text() for name in ("first", "second")]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_run_uses_a_fresh_cache_folder_shared_by_its_workers_and_removed_after(tmp_path, workers):
    stale = tmp_path / "stale"
    stale.mkdir()
    _, folders = run_inner_suite(tmp_path, workers, YACHT_RL_CACHE_DIR=str(stale))
    assert folders[0] == folders[1]  # one folder for the run, whichever worker runs the test
    assert Path(folders[0]) != stale
    assert not Path(folders[0]).exists()


def test_a_kept_test_cache_folder_is_used_and_left_in_place(tmp_path):
    kept = tmp_path / "kept"
    kept.mkdir()
    _, folders = run_inner_suite(tmp_path, 0, YACHT_RL_CACHE_DIR=str(tmp_path / "stale"), YACHT_RL_TEST_CACHE_DIR=str(kept))
    assert folders == [str(kept), str(kept)]
    assert kept.is_dir()
