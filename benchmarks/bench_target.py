"""Speed and memory of the target-score DP, the exact score distributions and the win policy's decisions.

Usage: python benchmarks/bench_target.py [--repeats 3] [--rows 4096]

- target table: a fresh ``solve_target_table`` of the default rules (no disk cache), ``tie`` 1;
  the first run also compiles the numba kernel unless numba's own cache has it.
- distributions: a fresh ``ScoreDistributions`` (turn outcomes and points-to-come of all 4,096
  open sets), the expected-score solution already built.
- win decisions: ``--rows`` random two-player decisions (own and opponent's positions at random)
  in one ``WinChances.q_values`` call, with nothing kept from earlier calls.
- cached load: ``solve_target`` from the disk cache in a fresh process state.

Figures are medians (min, max) over ``--repeats`` runs; the peak resident memory of the process
and the size of each table are printed at the end.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time

import numpy as np

from agents.solvers import solution_cache
from agents.solvers.distribution import ScoreDistributions
from agents.solvers.optimal import solve
from agents.solvers.target import _solutions, solve_target, solve_target_table
from agents.solvers.win_chances import WinChances
from yacht_env import YACHT
from yacht_env.option_values import whole_number


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def report(name: str, times: list[float], unit: str = "s") -> None:
    print(
        f"{name:<34} median {statistics.median(times):8.3f} {unit}  "
        f"(min {min(times):.3f}, max {max(times):.3f}, {len(times)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=whole_number(), default=3)
    parser.add_argument("--rows", type=whole_number(), default=4096)
    args = parser.parse_args()
    solve(YACHT)
    arrays = []
    report(
        "target table (solve_target_table)",
        [timed(lambda: arrays.append(solve_target_table(YACHT))) for _ in range(args.repeats)],
    )
    distributions = []
    report(
        "distributions (ScoreDistributions)",
        [timed(lambda: distributions.append(ScoreDistributions(YACHT))) for _ in range(args.repeats)],
    )
    with tempfile.TemporaryDirectory() as folder:
        os.environ[solution_cache.CACHE_ENV] = folder
        solve_target(YACHT)  # writes the cache
        loads = []
        for _ in range(args.repeats):
            _solutions.clear()
            loads.append(timed(lambda: solve_target(YACHT)))
        report("target table from the disk cache", loads)
    win = WinChances(YACHT)
    rng = np.random.default_rng(0)
    n = args.rows
    positions = (
        rng.integers(0, 252, n),
        rng.integers(0, 3, n),
        rng.integers(1, 4096, n),
        rng.integers(0, 150, n),
        rng.integers(0, 150, (n, 1)),
        rng.integers(0, 4096, (n, 1)),
    )
    win.q_values(*(p[:8] for p in positions))  # compile
    times = []
    for _ in range(args.repeats):
        win._kept.clear()
        times.append(timed(lambda: win.q_values(*positions)))
    report(f"win decisions ({n} at once), per decision", [1e6 * t / n for t in times], "µs")
    table = arrays[-1]
    d = distributions[-1]
    print(
        f"target table {table.shape} {table.dtype}: {table.nbytes / 2**20:.1f} MiB; "
        f"turn outcomes {d.turn.shape}: {d.turn.nbytes / 2**20:.1f} MiB; "
        f"points to come {d.to_come.shape}: {d.to_come.nbytes / 2**20:.1f} MiB"
    )
    print(f"peak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
