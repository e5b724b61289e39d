"""The wheel stands alone: built, checked, installed outside the repository, it plays the shipped models.

Slow (a fresh virtual environment with torch: about two minutes on a loaded 2-core machine), so kept
out of CI: ``python -m pytest -m slow tests/test_wheel.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from yacht_play.serve.local_server import free_port

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"  # the CPU build kept on the project's machines: an unpinned torch pulls a CUDA build


def run(command: list[str], cwd: Path, timeout: float = 900) -> str:
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment)
    assert result.returncode == 0, f"{' '.join(command)}: {result.stderr[-3000:]}"
    return result.stdout


@pytest.mark.slow
def test_the_wheel_installed_outside_the_repository_plays_the_shipped_models_by_name(tmp_path):
    pytest.importorskip("build", reason='building the wheel needs the docs extra: pip install -e ".[docs]"')
    pytest.importorskip("twine", reason='checking the wheel needs the docs extra: pip install -e ".[docs]"')
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir", str(dist), str(ROOT)], tmp_path)
    (wheel,) = dist.glob("*.whl")
    run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())], tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    assert sorted(name for name in names if name.startswith("agents/models/")) == [
        "agents/models/plan/yacht.safetensors",
        "agents/models/plan/yahtzee.safetensors",
        "agents/models/plan/yatzy.safetensors",
        "agents/models/plan2/yacht.safetensors",
        "agents/models/planN/yacht.safetensors",
        "agents/models/planN/yahtzee.safetensors",
        "agents/models/planN/yatzy.safetensors",
        "agents/models/yacht.safetensors",
        "agents/models/yahtzee.safetensors",
        "agents/models/yatzy.safetensors",
    ]
    assert not [name for name in names if name.endswith((".zip", ".pkl"))]  # pickles are never loaded to play

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    run([str(python), "-m", "pip", "install", "--quiet", TORCH], tmp_path)
    run([str(python), "-m", "pip", "install", "--quiet", f"{wheel}[train,serve]"], tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = run([str(python), "-c", "import agents; print(agents.__file__)"], elsewhere)
    assert where.startswith(str(venv))  # the installed copy, not the repository's

    assert "usage: yacht play" in run([str(bin_dir / "yacht"), "play", "--help"], elsewhere)
    evaluation = elsewhere / "eval.json"
    evaluate = [str(python), "-m", "agents.evaluate", "--policy", "ppo:yacht", "--policy", "plan:yacht", "--games", "100"]
    run([*evaluate, "--no-progress", "--json", str(evaluation)], elsewhere)
    played = {row["policy"]: row for row in json.loads(evaluation.read_text())["policies"]}
    assert played["ppo:yacht"]["percent_of_optimal"] > 90 and played["plan:yacht"]["percent_of_optimal"] > 95
    table = run(
        [str(python), "-m", "agents.evaluate", "--table", "plan2:yacht,greedy", "--games", "20", "--no-progress"], elsewhere
    )
    assert "plan2:yacht" in table

    port = free_port()
    server = subprocess.Popen(
        [str(bin_dir / "yacht"), "serve", "--port", str(port), "--db", "study.db", "--agents", "greedy,ppo:yacht"],
        cwd=elsewhere,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as answer:
                    assert answer.status == 200 and "<html" in answer.read().decode().lower()
                    break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "yacht serve did not answer on / in 180 s"
                time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/agents", timeout=30) as answer:
            offered = {agent["policy"] for agent in json.loads(answer.read())["agents"]}
        assert "ppo:yacht" in offered
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert (elsewhere / "study.db").is_file()
