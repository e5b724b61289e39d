"""The shipped models by name: ``ppo:yacht``, ``ppo:yahtzee``, ``ppo:yatzy`` play from any folder.

The package data (``agents/models/``) is the same bytes as the clone's ``models/`` paths, a name with
no folder and no suffix is a shipped model, an unknown name is refused in one line listing the
shipped ones, and a path still names a file of one's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="ppo models need the train extra")

from agents.learned.model_files import ModelLoadError, read_model_file  # noqa: E402
from agents.learned.ppo import model_file_path, shipped_model_names  # noqa: E402
from agents.registry import make_policy  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CLONE_PATHS = {"yacht": "models/ppo.safetensors", "yahtzee": "models/yahtzee.safetensors", "yatzy": "models/yatzy.safetensors"}


def test_the_shipped_names_are_the_models_of_the_clone_byte_for_byte():
    assert shipped_model_names() == sorted(CLONE_PATHS)
    for name, clone_path in CLONE_PATHS.items():
        assert model_file_path(name).read_bytes() == (ROOT / clone_path).read_bytes()


@pytest.mark.parametrize("name", sorted(CLONE_PATHS))
def test_a_shipped_name_plays_its_rules_from_another_folder(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    policy = make_policy(f"ppo:{name}", rules=name)
    assert policy.name == f"ppo:{name}"
    assert read_model_file(model_file_path(name))[0]["rules"] == name


def test_a_file_of_ones_own_is_still_named_by_its_path(tmp_path, monkeypatch):
    shutil.copy(ROOT / "models" / "ppo.safetensors", tmp_path / "mine.safetensors")
    monkeypatch.chdir(tmp_path)
    for name in ("ppo:./mine.safetensors", "ppo:mine.safetensors", "ppo:./mine", f"ppo:{tmp_path / 'mine'}"):
        assert make_policy(name).name == name
    with pytest.raises(ModelLoadError, match="no shipped model named 'mine'"):
        make_policy("ppo:mine")  # a bare name is a shipped model, never a file that happens to be here


def test_an_unknown_name_is_refused_in_one_line_listing_the_shipped_names(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", "--policy", "ppo:yahtzy", "--games", "10", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "error: no shipped model named 'yahtzy': the shipped models are ppo:yacht, ppo:yahtzee, ppo:yatzy; "
        "a file of your own is named by its path, e.g. ppo:./yahtzy.safetensors"
    ]
