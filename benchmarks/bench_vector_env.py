"""Steps per second of random legal play: YachtVectorEnv at several sizes against the single YachtEnv.

Usage: python benchmarks/bench_vector_env.py [--sizes 1,64,1024,4096] [--seconds 1.0] [--repeats 5]

A step of an N-game vector env counts as N steps. Every action is drawn uniformly from the
legal-action mask inside the timed loop: ``sample_legal_actions`` on ``infos["action_mask"]`` for
the vector env, a pick from ``np.flatnonzero(info["action_mask"])`` for the single env (which
resets by hand when a game ends; the vector env resets itself). Each env first plays untimed
steps, so that the numba kernels are compiled and the games no longer all end on the same step.
Figures are medians over the repeats, each repeat playing for ``--seconds``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from yacht_env import YachtEnv
from yacht_env.option_values import decimal_number, whole_number, whole_numbers
from yacht_env.vector_env import YachtVectorEnv, sample_legal_actions

# Untimed steps before measuring: a few games, so that episode ends are spread over steps.
WARMUP_STEPS = 300


def timed_rates(play_one_call, steps_per_call: int, seconds: float, repeats: int) -> list[float]:
    """Steps per second of ``play_one_call()``: an untimed warm-up, then ``repeats`` runs of ``seconds``."""
    rates = []
    for repeat in range(repeats + 1):
        limit = WARMUP_STEPS if repeat == 0 else None
        calls = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            play_one_call()
            calls += 1
            if calls == limit or (limit is None and time.perf_counter() >= deadline):
                break
        if repeat:
            rates.append(calls * steps_per_call / (time.perf_counter() - start))
    return rates


def single_env_rates(seconds: float, repeats: int, seed: int) -> list[float]:
    env = YachtEnv()
    rng = np.random.default_rng(seed)
    state = {"info": env.reset(seed=seed)[1]}

    def play_one_step():
        legal = np.flatnonzero(state["info"]["action_mask"])
        obs, reward, terminated, truncated, state["info"] = env.step(int(legal[int(rng.random() * len(legal))]))
        if terminated or truncated:
            state["info"] = env.reset()[1]

    return timed_rates(play_one_step, 1, seconds, repeats)


def vector_env_rates(num_envs: int, seconds: float, repeats: int, seed: int) -> list[float]:
    env = YachtVectorEnv(num_envs)
    rng = np.random.default_rng(seed)
    state = {"masks": env.reset(seed=seed)[1]["action_mask"]}

    def play_one_step():
        infos = env.step(sample_legal_actions(state["masks"], rng))[4]
        state["masks"] = infos["action_mask"]

    return timed_rates(play_one_step, num_envs, seconds, repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes",
        type=whole_numbers(noun="game counts", least=1),
        default=[1, 64, 1024, 4096],
        help="comma-separated game counts (default 1,64,1024,4096)",
    )
    parser.add_argument("--seconds", type=decimal_number(), default=1.0, help="length of one measurement (default %(default)s)")
    parser.add_argument("--repeats", type=whole_number(), default=5, help="measurements per env (default %(default)s)")
    parser.add_argument("--seed", type=whole_number(), default=0)
    parser.add_argument("--one-core", action="store_true", help="pin the process to one core where the OS allows it")
    args = parser.parse_args()
    sizes = args.sizes
    if args.one_core and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    # Load (or compile) every numba kernel, autoreset included, before anything is timed.
    vector_env_rates(2, seconds=0.0, repeats=1, seed=args.seed)

    print(
        f"random legal play, actions drawn from the masks in the timed loop; "
        f"median of {args.repeats} x {args.seconds:g} s (N games per vector step count as N steps)"
    )
    print(f"{'env':<16}{'N':>6}{'median steps/s':>16}{'min':>12}{'max':>12}{'vs single':>11}")
    baseline = None
    for name, n in [("YachtEnv", 1)] + [("YachtVectorEnv", n) for n in sizes]:
        if name == "YachtEnv":
            rates = single_env_rates(args.seconds, args.repeats, args.seed)
        else:
            rates = vector_env_rates(n, args.seconds, args.repeats, args.seed)
        median = statistics.median(rates)
        baseline = baseline or median
        print(f"{name:<16}{n:>6}{median:>16,.0f}{min(rates):>12,.0f}{max(rates):>12,.0f}{median / baseline:>10.1f}x")


if __name__ == "__main__":
    main()
