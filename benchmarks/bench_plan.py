"""Speed of the planning agent's decisions (``plan:PATH``), on one core.

Usage: python benchmarks/bench_plan.py [--rules yacht yahtzee yatzy] [--decisions 2000] [--repeats 5]

Each decision is one call of ``PlanPolicy.act_batch`` with one observation, as ``yacht play`` and
``yacht serve`` ask: the turn's values of every keep and row are computed from the sheet value
(here a value table of the rule set's shape; the figures do not depend on what it holds) and the
best legal action taken. The positions are those of games played by the optimal policy, so every
kind of decision appears as often as in play. The process is pinned to one core and numba to one
thread. Prints decisions per second, the median (min, max) over ``--repeats`` runs.
"""

from __future__ import annotations

import os

from yacht_env.option_values import whole_number

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core: before numba is imported

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from agents.learned.plan import PlanPolicy, TurnPlanner  # noqa: E402
from agents.learned.plan_files import value_shape  # noqa: E402
from agents.policies.policy import OptimalPolicy  # noqa: E402
from yacht_env.rules import RULE_SETS, rule_set  # noqa: E402
from yacht_env.vector_env import YachtVectorEnv  # noqa: E402


def game_positions(rules, count: int, seed: int = 0):
    """``count`` observations and masks from games the optimal policy plays (flat encoding)."""
    env = YachtVectorEnv(num_envs=64, rules=rules, observation_encoding="flat")
    observations, infos = env.reset(seed=seed)
    policy = OptimalPolicy(rules)
    seen, masks = [], []
    while sum(len(batch) for batch in seen) < count:
        mask = infos["action_mask"]
        seen.append(observations.copy())
        masks.append(mask.copy())
        observations, _, _, _, infos = env.step(policy.act_batch(observations, mask))
    return np.concatenate(seen)[:count], np.concatenate(masks)[:count]


def decisions_per_second(policy: PlanPolicy, observations, masks) -> float:
    start = time.perf_counter()
    for i in range(len(observations)):
        policy.act_batch(observations[i : i + 1], masks[i : i + 1])
    return len(observations) / (time.perf_counter() - start)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", nargs="+", default=["yacht", "yahtzee", "yatzy"], choices=list(RULE_SETS))
    parser.add_argument("--decisions", type=whole_number(), default=2000)
    parser.add_argument("--repeats", type=whole_number(), default=5)
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    for name in args.rules:
        rules = rule_set(name)
        rng = np.random.default_rng(0)
        values = rng.uniform(0, 100, value_shape(rules))
        values[0] = 0.0
        policy = PlanPolicy(TurnPlanner(rules, values), rules=rules)
        observations, masks = game_positions(rules, args.decisions)
        decisions_per_second(policy, observations[:10], masks[:10])  # compiled kernels loaded
        rates = [decisions_per_second(policy, observations, masks) for _ in range(args.repeats)]
        print(f"{name}: {statistics.median(rates):,.0f} decisions/s on one core ({min(rates):,.0f} .. {max(rates):,.0f})")


if __name__ == "__main__":
    main()
