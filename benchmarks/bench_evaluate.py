"""Wall time of the evaluation harness: N games of a policy graded against the DP optimum.

Usage: python benchmarks/bench_evaluate.py [--policy optimal] [--games 10000] [--repeats 5]

Each repeat plays the games on the vector env and grades every decision with the DP (the solve
is done once, before timing, as a long-lived process would have it cached). Prints the median.
"""

from __future__ import annotations

import argparse
import statistics
import time

from agents.evaluate import play_games
from agents.registry import make_policy
from agents.solvers.optimal import solve
from yacht_env.option_values import whole_number


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policy", default="optimal")
    parser.add_argument("--games", type=whole_number(), default=10_000)
    parser.add_argument("--repeats", type=whole_number(), default=5)
    args = parser.parse_args()

    solve()
    policy = make_policy(args.policy, seed=0)
    play_games(policy, 64)  # compile the vector env's kernels before timing
    seconds = []
    for repeat in range(args.repeats):
        start = time.perf_counter()
        log = play_games(policy, args.games, seed=repeat * args.games)
        seconds.append(time.perf_counter() - start)
    print(f"{args.games:,} games of {args.policy!r}, graded against the optimum, {args.repeats} repeats")
    print(
        f"median {statistics.median(seconds):.2f} s (min {min(seconds):.2f}, max {max(seconds):.2f}); "
        f"last mean score {log.scores.mean():.2f}"
    )


if __name__ == "__main__":
    main()
