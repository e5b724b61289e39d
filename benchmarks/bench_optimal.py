"""Speed of the exact optimal strategy: the full solve and Q-value look-ups.

Usage: python benchmarks/bench_optimal.py [--repeats 7] [--calls 2000] [--rows 10000] [--one-core]

- solve: a fresh ``solve()`` of the default rules, the cache cleared before each run (the dice
  and score arrays of the rule set stay built, as they are shared with the env). The very first
  solve of the process, which also builds those arrays, is printed once.
- q_values: one position per call (dice as a list, open categories as names), averaged over
  ``--calls`` random positions.
- q_values_batch / best_actions_batch: ``--rows`` random positions given as hand indices.

Figures are medians (min, max) over ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from agents.solvers import optimal
from yacht_env import CATEGORIES, YACHT
from yacht_env.option_values import whole_number


def random_positions(rng: np.random.Generator, count: int):
    hands = rng.integers(0, YACHT.dice.num_hands, size=count)
    rolls_left = rng.integers(0, YACHT.rolls_per_turn, size=count)
    open_bits = rng.integers(1, YACHT.all_open + 1, size=count)
    return hands, rolls_left, open_bits


def time_fresh_solve() -> float:
    optimal.clear_cache()
    start = time.perf_counter()
    optimal.solve()
    return time.perf_counter() - start


def time_q_values(rng: np.random.Generator, calls: int) -> float:
    hands, rolls_left, open_bits = random_positions(rng, calls)
    dice = [[int(d) for d in YACHT.dice.hands[h]] for h in hands]
    names = [[name for c, name in enumerate(CATEGORIES) if bits >> c & 1] for bits in open_bits]
    rolls = [int(r) for r in rolls_left]
    q_values = optimal.q_values
    start = time.perf_counter()
    for d, r, n in zip(dice, rolls, names):
        q_values(d, r, n)
    return (time.perf_counter() - start) / calls


def time_batch(method, rng: np.random.Generator, rows: int) -> float:
    hands, rolls_left, open_bits = random_positions(rng, rows)
    start = time.perf_counter()
    method(hands, rolls_left, open_bits)
    return time.perf_counter() - start


def summary(seconds: list[float], unit: float, unit_name: str) -> str:
    scaled = [s / unit for s in seconds]
    return f"{statistics.median(scaled):10.3f} {unit_name}  (min {min(scaled):.3f}, max {max(scaled):.3f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=whole_number(), default=7)
    parser.add_argument("--calls", type=whole_number(), default=2000, help="q_values calls per repeat")
    parser.add_argument("--rows", type=whole_number(), default=10_000, help="rows per batch call")
    parser.add_argument("--one-core", action="store_true", help="pin the process to one core first")
    args = parser.parse_args()
    if args.one_core and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rng = np.random.default_rng(0)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    start = time.perf_counter()
    solution = optimal.solve()
    first = time.perf_counter() - start
    print(f"optimal strategy, default rules, {args.repeats} repeats, {cores} core(s)")
    print(f"expected_score() = {optimal.expected_score():.10f}")
    print(f"{'first solve (builds the dice arrays)':<44}{first * 1e3:10.3f} ms")

    solves = [time_fresh_solve() for _ in range(args.repeats)]
    print(f"{'solve, fresh (cache cleared)':<44}{summary(solves, 1e-3, 'ms')}")

    solution = optimal.solve()
    optimal.q_values([1, 2, 3, 4, 5], 2, CATEGORIES)  # first call outside the timing
    singles = [time_q_values(rng, args.calls) for _ in range(args.repeats)]
    print(f"{'q_values, per call':<44}{summary(singles, 1e-6, 'us')}")

    for name in ("q_values_batch", "best_actions_batch"):
        method = getattr(solution, name)
        batches = [time_batch(method, rng, args.rows) for _ in range(args.repeats)]
        print(f"{f'{name}, per {args.rows:,} rows':<44}{summary(batches, 1e-3, 'ms')}")


if __name__ == "__main__":
    main()
