"""Exact optimum of every named rule set: expected score against the published figure, solve time, memory.

Usage: python benchmarks/bench_rule_sets.py [--repeats 5] [--rules yahtzee yatzy ...] [--threads N]

- optimum: ``expected_score(rules)`` beside ``agents.solvers.optimal.PUBLISHED_OPTIMA``, with the difference.
- solve: a fresh solve, the disk cache bypassed (``solve_tables`` for rule sets whose rows score
  independently, ``sheet_solver.solve_sheet_values`` for the others); the compiled kernels and the
  rule set's arrays are loaded before anything is timed. Median (min, max) over ``--repeats``.
  Beside it the median CPU time of the process (all threads), less sensitive to a loaded machine.
- load: reading the solution back from the disk cache (rule sets with a sheet state only).
- memory: the bytes of the solution's arrays (``state_values``, plus ``keep_values`` where kept).

``--threads`` caps numba's threads (the sheet solver runs each layer of states in parallel).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numba

from agents.solvers import optimal, sheet_solver, solution_cache
from yacht_env.option_values import whole_number
from yacht_env.rules import RULE_SETS


def fresh_solve(rules):
    if rules.has_bonus_or_joker:
        return sheet_solver.solve_sheet_values(rules)
    return optimal.solve_tables(rules)


def summary(seconds: list[float]) -> str:
    return f"{statistics.median(seconds):8.3f} s (min {min(seconds):.3f}, max {max(seconds):.3f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=whole_number(), default=5)
    parser.add_argument("--rules", nargs="+", default=list(RULE_SETS), choices=list(RULE_SETS))
    parser.add_argument("--threads", type=whole_number(), default=None, help="numba threads (default: all cores)")
    args = parser.parse_args()
    if args.threads:
        numba.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="bench-rule-sets-") as cache:
        os.environ[solution_cache.CACHE_ENV] = cache  # timed loads read what this run wrote
        run(args)


def run(args):
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"exact optimum per rule set, {args.repeats} repeats, {numba.get_num_threads()} numba thread(s), {cores} core(s)")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{'rule set':<22}{'optimum':>14}{'published':>14}{'difference':>12}  "
        f"{'solve, median (min, max)':<34}{'load':>9}{'memory':>10}"
    )
    for name in args.rules:
        rules = RULE_SETS[name]
        start = time.perf_counter()
        solution = optimal.solve(rules)  # builds arrays, compiles or loads kernels, writes the disk cache
        first = time.perf_counter() - start
        solves, cpu = [], []
        for _ in range(args.repeats):
            start, start_cpu = time.perf_counter(), time.process_time()
            fresh_solve(rules)
            solves.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        load = "-"
        if rules.has_bonus_or_joker:
            optimal.clear_cache()
            start = time.perf_counter()
            solution = optimal.solve(rules)
            load = f"{time.perf_counter() - start:7.3f} s"
        arrays = [solution.state_values] + ([solution.keep_values] if hasattr(solution, "keep_values") else [])
        memory = sum(a.nbytes for a in arrays) / 2**20
        score = solution.expected_score
        published = optimal.PUBLISHED_OPTIMA[name]
        print(
            f"{name:<22}{score:14.7f}{published:14.7f}{score - published:12.1e}  {summary(solves):<34}{load:>9}"
            f"{memory:8.1f} MiB  (cpu {statistics.median(cpu):.3f} s, first solve {first:.2f} s)"
        )


if __name__ == "__main__":
    main()
