"""End-to-end MaskablePPO training throughput (env steps per second) for a config.

Usage: python benchmarks/bench_training.py [--config configs/quick.yaml] [--steps 100000] [--repeats 3]
                                           [--compare-lookahead] [key=value ...]

Trains the config's model for ``--steps`` steps (no evaluation, no checkpoints) once with separate
``Yacht-v0`` envs (``env.vectorized=false``) and once with the in-process vector env
(``env.vectorized=true``), and prints the median steps per second of each and their ratio.

With ``--compare-lookahead`` (a ``ppo.policy: lookahead`` config) it compares instead, on the config's
own envs, three setups: as training was before (sb3-contrib's plain rollout buffer, so the look-ahead
is computed again whenever PPO reads a sample; torch checking every distribution's parameters), with
the look-ahead kept in the rollout buffer (computed once per sample), and as train.py trains now
(that, and distributions unchecked: ``train.unchecked_distributions``). They alternate, repeat after
repeat, each going first in turn, so that all see the same load.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # train.py lives at the repository root

from agents.training.config import load_config  # noqa: E402
from agents.training.envs import make_training_env  # noqa: E402
from agents.training.lookahead_rollouts import replace_rollout_buffer  # noqa: E402
from train import new_model, unchecked_distributions  # noqa: E402
from yacht_env.option_values import whole_number  # noqa: E402


def steps_per_second(config, steps: int, keep_lookahead: bool = True, unchecked: bool = True) -> float:
    torch.set_num_threads(config.run.torch_threads)
    env = make_training_env(config.env, seed=config.seed)
    with tempfile.TemporaryDirectory() as folder:
        model = new_model(config, env, Path(folder))
        if not keep_lookahead:  # sb3-contrib's own buffer: the extractor computes q at every read of a sample
            replace_rollout_buffer(model, MaskableRolloutBuffer)
        start = time.perf_counter()
        with unchecked_distributions() if unchecked else contextlib.nullcontext():
            model.learn(total_timesteps=steps)
        seconds = time.perf_counter() - start
    env.close()
    return model.num_timesteps / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/quick.yaml")
    parser.add_argument("--steps", type=whole_number(), default=100_000)
    parser.add_argument("--repeats", type=whole_number(), default=3)
    parser.add_argument(
        "--compare-lookahead",
        action="store_true",
        help="compare the look-ahead kept in the rollout buffer against recomputing it (see above)",
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides, e.g. ppo.policy=mlp")
    args = parser.parse_args()
    if args.compare_lookahead:
        return compare_lookahead(args)

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


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (``/proc/loadavg``), or "n/a" where there is none."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def compare_lookahead(args) -> None:
    """Steps per second of the three setups (see the module docstring), alternating.

    "before" is sb3-contrib's plain buffer with this version's policy, which differs from the
    earlier code in one thing only: the policy keeps its last batch's look-ahead, so the last
    observation of a rollout (valued, then acted on) is looked ahead once, not twice.
    """
    config = load_config(args.config, args.overrides)
    if config.ppo.policy != "lookahead":
        sys.exit(f"error: --compare-lookahead needs a ppo.policy: lookahead config; {args.config} trains {config.ppo.policy!r}")
    setups = {  # (look-ahead kept in the buffer, distributions unchecked): what the setup is
        (False, False): "before: q recomputed at every read",
        (True, False): "q kept in the rollout buffer",
        (True, True): "now: q kept, distributions unchecked",
    }
    steps_per_second(config, 2 * config.env.num_envs * config.ppo.n_steps)  # warm up kernels and torch
    loads = [load_average()]
    rates = {setup: [] for setup in setups}
    order = list(setups)
    for repeat in range(args.repeats):
        for keep, unchecked in order[repeat % 3 :] + order[: repeat % 3]:  # each setup goes first in turn
            rates[keep, unchecked].append(steps_per_second(config, args.steps, keep_lookahead=keep, unchecked=unchecked))
        loads.append(load_average())
    overrides = " ".join(args.overrides)
    print(
        f"MaskablePPO training throughput, {args.config} {overrides} (rules {config.env.rules}), "
        f"{args.steps:,} steps x {args.repeats} repeats, alternating"
    )
    print(f"{'setup':<40}{'median steps/s':>16}{'min':>10}{'max':>10}{'vs before':>11}")
    before = statistics.median(rates[False, False])
    for setup, label in setups.items():
        values = rates[setup]
        print(
            f"{label:<40}{statistics.median(values):>16,.0f}{min(values):>10,.0f}{max(values):>10,.0f}"
            f"{statistics.median(values) / before:>10.2f}x"
        )
    print(f"load averages (1, 5, 15 min) at the start and after each repeat: {' | '.join(loads)}")


if __name__ == "__main__":
    main()
