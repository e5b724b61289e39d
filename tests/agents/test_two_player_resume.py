"""A two-player solve killed in the middle of a layer continues from the last layer written, to the same bytes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROWS = "ones,twos,threes,fours,fives,sixes,choice"  # 7 rows of Yacht: 14 layers, seconds to solve
LAST_LAYER = 14


def command() -> list[str]:
    return [sys.executable, "-m", "agents.two_player", "--rules", "yacht", "--rows", ROWS, "--no-progress"]


def run_env(cache: Path) -> dict[str, str]:
    return {**os.environ, "YACHT_RL_CACHE_DIR": str(cache)}


def layer_files(cache: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(cache.glob("two-player-*/layer-*.npy"))}


def test_a_killed_solve_resumes_to_identical_layers(tmp_path):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    done = subprocess.run(command(), env=run_env(straight), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    # Kill the second solve once layer 6 is written: it is then in the middle of layer 7.
    process = subprocess.Popen(command(), env=run_env(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while not list(killed.glob("two-player-*/layer-06.npy")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait()
    written = layer_files(killed)
    assert "layer-06.npy" in written and f"layer-{LAST_LAYER}.npy" not in written
    resumed = subprocess.run(command(), env=run_env(killed), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert "solving from layer" in resumed.stderr and "solving from layer 1 " not in resumed.stderr
    assert layer_files(killed) == layer_files(straight)
    assert len(layer_files(straight)) == LAST_LAYER
    assert resumed.stdout == done.stdout
    assert not list(killed.glob("two-player-*/.*.partial"))
