"""Steps per second of random legal play on the single-player env, raw and through gymnasium.make.

Usage: python benchmarks/bench_env.py [--steps 200000] [--repeats 5]

Actions are drawn uniformly from the legal-action mask inside the timed loop (with pre-drawn
random numbers, so the figure is dominated by the env). The process is pinned to one core where
the OS allows it. Figures are medians over the repeats.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium as gym
import numpy as np

import yacht_env
from yacht_env.option_values import whole_number


def steps_per_second(env, steps: int, seed: int) -> float:
    randoms = np.random.default_rng(seed).integers(0, 1 << 30, size=steps).tolist()
    obs, info = env.reset(seed=seed)
    flatnonzero = np.flatnonzero
    start = time.perf_counter()
    for r in randoms:
        legal = flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[r % len(legal)]))
        if terminated or truncated:
            obs, info = env.reset()
    return steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=whole_number(), default=200_000)
    parser.add_argument("--repeats", type=whole_number(), default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    variants = {
        "raw YachtEnv": lambda: yacht_env.YachtEnv(),
        'gymnasium.make("Yacht-v0")': lambda: gym.make("Yacht-v0"),
    }
    print(f"random legal play, {args.steps:,} steps x {args.repeats} repeats, one core")
    print(f"{'env':<30}{'median steps/s':>16}{'min':>12}{'max':>12}")
    for name, make in variants.items():
        rates = [steps_per_second(make(), args.steps, seed) for seed in range(args.repeats)]
        print(f"{name:<30}{statistics.median(rates):>16,.0f}{min(rates):>12,.0f}{max(rates):>12,.0f}")


if __name__ == "__main__":
    main()
