"""Speed of the two-player planner's decisions (``plan2:PATH``), on one core.

Usage: python benchmarks/bench_plan2.py [--model plan2:yacht] [--decisions 2000] [--repeats 5]

The positions are the planner's own table observations in games against ``optimal`` at a table of two, so
every kind of decision appears as often as in play. Two figures, each the median (min, max) of ``--repeats`` runs:
decisions one at a time (one ``act_batch`` call per observation, as ``yacht play`` and ``yacht serve`` ask),
and in batches of 4,096 (as ``agents.evaluate --table`` asks). Each run starts from an empty store of turns,
so a turn's end values are computed once for its decisions, as in a game. The process is pinned to one core
and numba and BLAS to one thread.
"""

from __future__ import annotations

import os

from yacht_env.option_values import whole_number

for variable in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(variable, "1")  # one core: before numba and numpy are imported

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from agents.evaluation.tournament import play_table  # noqa: E402
from agents.policies.policy import Policy  # noqa: E402
from agents.registry import make_table_policy  # noqa: E402


class Recorder(Policy):
    """Plays as ``inner`` and keeps every observation and mask it was shown."""

    def __init__(self, inner: Policy):
        super().__init__(inner.rules, inner.encoding.name)
        self.inner, self.name, self.seen = inner, inner.name, []

    def act_batch(self, observations, action_masks):
        """The inner policy's actions, the observations and masks kept."""
        self.seen.append(({key: np.array(value) for key, value in observations.items()}, np.array(action_masks)))
        return self.inner.act_batch(observations, action_masks)


def table_positions(count: int, model: str):
    """``count`` (observation, mask) pairs the planner is shown in games against optimal at a table of two."""
    recorder = Recorder(make_table_policy(model, 2))
    recorder.table_encoding = recorder.inner.table_encoding
    play_table([recorder, make_table_policy("optimal", 2)], max(2, count // 15), seed=7, rules=recorder.rules)
    batches = recorder.seen
    observations = {key: np.concatenate([b[0][key] for b in batches])[:count] for key in batches[0][0]}
    masks = np.concatenate([b[1] for b in batches])[:count]
    return observations, masks


def time_run(model: str, observations, masks, batch: int) -> float:
    """Decisions per second of a fresh planner over the positions, ``batch`` at a time."""
    policy = make_table_policy(model, 2)
    n = len(masks)
    started = time.perf_counter()
    for first in range(0, n, batch):
        part = slice(first, first + batch)
        policy.act_batch({key: value[part] for key, value in observations.items()}, masks[part])
    return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="plan2:yacht", help="the plan2 file to time (default: the shipped plan2:yacht)")
    parser.add_argument("--decisions", type=whole_number(), default=2000)
    parser.add_argument("--repeats", type=whole_number(), default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    observations, masks = table_positions(args.decisions, args.model)
    time_run(args.model, observations, masks, 1)  # compile
    for label, batch in (("one at a time", 1), ("batches of 4,096", 4096)):
        rates = [time_run(args.model, observations, masks, batch) for _ in range(args.repeats)]
        print(
            f"{args.model}, {label}: {statistics.median(rates):,.0f} decisions/s "
            f"(min {min(rates):,.0f}, max {max(rates):,.0f}; {len(masks):,} decisions x {args.repeats} runs, one core)"
        )


if __name__ == "__main__":
    main()
