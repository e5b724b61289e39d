"""A two-player solve killed in the middle of a layer continues from the last layer written, to the same bytes;
the time left it reports while it runs."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.two_player.solve import MIN_TIMED_SECONDS, LayerReport, estimate_seconds_left

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


def test_the_time_left_is_the_values_left_at_the_rate_so_far_and_none_on_too_little_solving():
    assert estimate_seconds_left(values_left=6_000_000, timed_values=2_000_000, timed_seconds=4.0) == pytest.approx(12.0)
    assert estimate_seconds_left(0, 2_000_000, 4.0) == 0.0
    assert estimate_seconds_left(-5, 2_000_000, 4.0) == 0.0  # a report fed more than it was told of
    assert estimate_seconds_left(6_000_000, 7_416, MIN_TIMED_SECONDS / 2) is None  # a hundredth of the work: no rate yet
    assert estimate_seconds_left(6_000_000, 0, 10.0) is None


def test_the_layer_report_leaves_out_the_first_layer_whose_time_is_the_kernels_compile():
    """Yacht's first layers, as a cold start solved them: layer 1's 315 values took 13.2 s, nearly all of it the
    kernels' compile, and the report said 903,290.8 minutes were left."""
    sizes = [1, 315, 7_416, 60_786, 444_312, 1_847_670, 1_290_486_196]  # the last: the rest of the game, as one layer
    layout = SimpleNamespace(layers=[SimpleNamespace(num_values=n) for n in sizes], num_layers=len(sizes))
    stream = io.StringIO()
    report = LayerReport(layout, start_layer=1, stream=stream)
    for num_open, seconds in ((1, 13.2), (2, 0.01), (3, 0.08), (4, 0.6)):
        report(num_open, sizes[num_open] // 2, seconds / 2)  # a batch: nothing printed yet
        report(num_open, sizes[num_open], seconds)
    assert report.seconds_left() is None  # 0.69 s of solving after the compile: no estimate, none printed
    assert len(stream.getvalue().splitlines()) == 4 and "time left" not in stream.getvalue()
    report(5, sizes[5], 2.2)
    timed_values, timed_seconds = sum(sizes[2:6]), 0.01 + 0.08 + 0.6 + 2.2
    expected = sizes[6] * timed_seconds / timed_values  # about 26 minutes, as the solve then took
    assert report.seconds_left() == pytest.approx(expected)
    assert stream.getvalue().splitlines()[-1].endswith(f"; estimated time left {expected / 60:.1f} min")
    report(6, sizes[6] // 4, 300.0)  # a quarter of the last layer: its own rate counts, and its values are done
    expected = (sizes[6] - sizes[6] // 4) * (timed_seconds + 300.0) / (timed_values + sizes[6] // 4)
    assert report.seconds_left() == pytest.approx(expected)
