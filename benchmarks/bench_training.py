"""End-to-end MaskablePPO training throughput (env steps per second) for a config.

Usage: python benchmarks/bench_training.py [--config configs/quick.yaml] [--steps 100000] [--repeats 3] [key=value ...]

Trains the config's model for ``--steps`` steps (no evaluation, no checkpoints) once with separate
``Yacht-v0`` envs (``env.vectorized=false``) and once with the in-process vector env
(``env.vectorized=true``), and prints the median steps per second of each and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # train.py lives at the repository root

from agents.training.config import load_config  # noqa: E402
from agents.training.envs import make_training_env  # noqa: E402
from train import new_model  # noqa: E402


def steps_per_second(config, steps: int) -> float:
    torch.set_num_threads(config.run.torch_threads)
    env = make_training_env(config.env, seed=config.seed)
    with tempfile.TemporaryDirectory() as folder:
        model = new_model(config, env, Path(folder))
        start = time.perf_counter()
        model.learn(total_timesteps=steps)
        seconds = time.perf_counter() - start
    env.close()
    return model.num_timesteps / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/quick.yaml")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides, e.g. ppo.policy=mlp")
    args = parser.parse_args()

    rates = {}
    for vectorized in (False, True):
        config = load_config(args.config, [*args.overrides, f"env.vectorized={vectorized}"])
        steps_per_second(config, 2 * config.env.num_envs * config.ppo.n_steps)  # warm up kernels and torch
        rates[vectorized] = [steps_per_second(config, args.steps) for _ in range(args.repeats)]
    overrides = " ".join(args.overrides)
    print(f"MaskablePPO training throughput, {args.config} {overrides}, {args.steps:,} steps x {args.repeats} repeats")
    print(f"{'envs':<36}{'median steps/s':>16}{'min':>10}{'max':>10}")
    for vectorized, label in ((False, "separate Yacht-v0 envs (DummyVecEnv)"), (True, "YachtVectorEnv (in-process)")):
        values = rates[vectorized]
        print(f"{label:<36}{statistics.median(values):>16,.0f}{min(values):>10,.0f}{max(values):>10,.0f}")
    print(f"speed-up of the vector env: {statistics.median(rates[True]) / statistics.median(rates[False]):.2f}x")


if __name__ == "__main__":
    main()
