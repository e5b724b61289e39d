"""The table planner's figures: its share of the win against ``optimal`` opponents at 2 to 5 seats, paired with ``win``'s.

For each table size ``N`` asked for, two tournaments on the same deals (every deal in every seating, as
``agents.evaluate --table`` plays them): ``PLANNER`` with ``N - 1`` ``optimal`` opponents, and ``win`` with the
same opponents (under rules ``win`` plays: those without bonuses or jokers; elsewhere ``optimal`` itself, whose
share is exactly the fair ``1/N`` on every deal over its seatings, so it is not played). The games are paired deal by
deal, so the difference of the two
shares has a far narrower interval than either share. At a table of two it also plays ``PLANNER`` head to head
against ``win`` (where ``win`` plays) and, under rules the two-player solution covers and where it is computed,
grades every decision of ``PLANNER`` against it (its loss in chance of winning, percentage points per game).

Each table's figures go to ``--out`` (JSON) as soon as they are done; a rerun skips those already there for the
same games and seed, so a long run resumes. ``--ray`` plays each tournament's deals as Ray tasks (every core here,
or the cluster at ``RAY_ADDRESS``); game ``g`` is dealt from ``seed + g`` either way, so a deterministic player (a
planN file, ``win``, ``optimal``, ``br:optimal``) gets the same figures (a random one draws its own choices per slice).

    python benchmarks/planN_figures.py planN:yacht --rules yacht --sizes 2,3,5 --games 2000 --seed 3000000
    python benchmarks/planN_figures.py br:optimal --sizes 2 --games 200000 --ray    # the best response: the ceiling
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from agents.evaluation.distributed import RayMissingError, connect
from agents.evaluation.stats import mean_ci
from agents.evaluation.tournament import run_table
from agents.registry import make_table_policy, policy_spec
from yacht_env.atomic_files import write_atomically
from yacht_env.option_values import whole_number, whole_numbers
from yacht_env.rules import rule_set
from yacht_env.seeding import seat_seed
from yacht_env.table.outcome import win_shares


def first_shares(names: list[str], games: int, seed: int, rules, grade: bool = False, on_ray: bool = False):
    """The first policy's share of each deal (averaged over its seatings) and the tournament's result.

    ``on_ray``: the deals played as Ray tasks, the policies built there by name (Ray connected before).
    """
    n = len(names)
    policies = (
        list(names)
        if on_ray
        else [make_table_policy(name, n, rules=rules, seed=seat_seed(seed, i)) for i, name in enumerate(names)]
    )
    started = time.perf_counter()
    result, log = run_table(policies, names, games, seed, rules, grade=grade, on_ray=on_ray)
    per_deal = win_shares(log.totals)[:, 0].reshape(-1, n).mean(axis=1)
    return per_deal, result, time.perf_counter() - started


def interval(values, share: bool = True) -> list[float]:
    """``[mean, low, high]`` in percent; a share's interval is kept within 0 to 100%."""
    return [100 * part for part in mean_ci(values, clip=(0.0, 1.0) if share else None)]


def table_figures(planner: str, rules, n: int, games: int, seed: int, on_ray: bool = False) -> dict:
    """The figures of one table size (see the module doc); ``on_ray``: every tournament's deals as Ray tasks."""
    reference = "win" if rules.name in policy_spec("win").rule_sets("win") else "optimal"
    grade = n == 2 and not rules.has_bonus_or_joker
    mine, result, seconds = first_shares([planner] + ["optimal"] * (n - 1), games, seed, rules, grade, on_ray)
    if reference == "optimal":
        # N copies of one deterministic policy: each seating of a deal plays the same game, so the seat played by the
        # reference takes each seat's share once over the N seatings, which sum to 1: exactly 1/N per deal, unplayed
        theirs = np.full(len(mine), 1 / n)
    else:
        theirs, _, _ = first_shares([reference] + ["optimal"] * (n - 1), games, seed, rules, on_ray=on_ray)
    figures = {
        "table_size": n,
        "games": int(len(mine) * n),
        "fair_share": 100 / n,
        "planner_share": interval(mine),
        "reference": reference,
        "reference_share": interval(theirs),
        "paired_difference": interval(mine - theirs, share=False),
        "planner_seconds": round(seconds, 1),
    }
    standing = result.standings[0]
    if standing.loss_per_game_pp is not None and standing.loss_per_game_pp_ci95 is not None:
        figures["loss_per_game_pp"] = [standing.loss_per_game_pp, *standing.loss_per_game_pp_ci95]
    if n == 2 and reference == "win":
        head, _, _ = first_shares([planner, "win"], games, seed, rules, on_ray=on_ray)
        figures["head_to_head_vs_win"] = interval(head)
    return figures


def read_done(out: Path) -> dict:
    """The figures an earlier run left in ``out``: a JSON object of figures by key; ``ValueError`` in one line otherwise."""
    if not out.exists():
        return {}
    try:
        done = json.loads(out.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(
            f"--out {str(out)!r} is not a figures file of this script ({type(error).__name__}); move it away"
        ) from None
    if not isinstance(done, dict) or not all(isinstance(figures, dict) for figures in done.values()):
        raise ValueError(f"--out {str(out)!r} is not a figures file of this script (a JSON object of figures); move it away")
    return done


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("planner", help="the planner's policy name, e.g. planN:yacht or planN:runs/x/model.safetensors")
    parser.add_argument("--rules", default="yacht")
    parser.add_argument(
        "--sizes",
        type=whole_numbers(noun="table sizes", least=2, most=5),
        default=[2, 3, 4, 5],
        help="table sizes, comma-separated (default 2,3,4,5)",
    )
    parser.add_argument("--games", type=whole_number(), default=2000, help="games per tournament (default 2000)")
    parser.add_argument("--seed", type=whole_number(), default=3_000_000, help="the first deal's seed (default 3000000)")
    parser.add_argument("--out", default="runs/planN_figures.json")
    parser.add_argument("--ray", action="store_true", help="play the deals as Ray tasks (pip install -e '.[distributed]')")
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:  # a bad rule set, size, model file or figures file: one line, before any game is played
        rules = rule_set(args.rules)
        sizes = args.sizes
        if args.games < 1:
            raise ValueError(f"--games {args.games}: at least 1")
        done = read_done(out)
        for n in sizes:
            make_table_policy(args.planner, n, rules=rules)
        if args.ray:
            connect()
    except (ValueError, RayMissingError) as error:
        print(f"planN_figures: {error}", file=sys.stderr)
        return 2
    for n in sizes:
        key = f"{args.planner}|{rules.name}|{n}|{args.games}|{args.seed}"
        if key not in done:
            done[key] = table_figures(args.planner, rules, n, args.games, args.seed, args.ray)
            write_atomically(out, lambda handle: handle.write(json.dumps(done, indent=1).encode()))
        print(key, json.dumps(done[key]))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
