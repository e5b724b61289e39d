"""The two-player figures: each matchup's chance of winning, exact from the solved game and simulated.

For each pair of policies at a table of two, the exact chance of the first one winning (a tie counts 1/2) in
each seat and on average over the two seats, where a solution gives it: ``exact2`` against itself (the
game's value: the first player's advantage), ``exact2`` against ``optimal`` (the game's decisions valued
against that policy: ``--strategy exact2``) and ``br:optimal`` against ``optimal`` (the best response).
Beside it, the same figure simulated over ``--games`` games (every deal played in both seatings, as
``agents.evaluate --table`` does) with its 95% interval, and whether the exact value lies inside it.
Policies whose decisions read the table (``win``, a PPO model) have no exact figure: only the simulation.

Each matchup's figures are written to ``--out`` (JSON) as soon as it is done, and a rerun skips the
matchups already there for the same games and seed, so a long run resumes.

    python benchmarks/two_player_figures.py [--games 200000] [--seed 1000000] [--out runs/two_player_figures.json]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from agents.evaluation.stats import mean_ci
from agents.evaluation.tournament import run_table
from agents.registry import make_table_policy
from agents.two_player import SolutionNotComputed, load_two_player
from yacht_env.atomic_files import write_atomically
from yacht_env.option_values import whole_number, whole_numbers
from yacht_env.seeding import seat_seed
from yacht_env.table.outcome import win_shares

MATCHUPS = (
    ("exact2", "exact2"),
    ("exact2", "optimal"),
    ("br:optimal", "optimal"),
    ("exact2", "win"),
    ("exact2", "ppo:models/ppo.safetensors"),
    ("win", "optimal"),
)


def exact_chances(first: str, second: str) -> tuple[float, float] | None:
    """The first policy's exact chance of winning from seat one and from seat two, where a solution gives it."""
    try:
        if first == "exact2" and second == "exact2":
            start = load_two_player("yacht").start_value()
            return start, 1 - start
        if second == "optimal" and first in ("exact2", "br:optimal"):
            strategy = "exact2" if first == "exact2" else "best"
            one = load_two_player("yacht", "optimal", 0, strategy).start_value()
            two = load_two_player("yacht", "optimal", 1, strategy).start_value()
            return one, 1 - two
    except SolutionNotComputed as missing:
        print(f"  no exact figure: {missing}")
    return None


def seat_rates(totals: np.ndarray) -> list[tuple[float, float, float]]:
    """The first policy's win share (mean and 95% interval) in seat one and in seat two.

    Game ``g`` is played in seating ``g % 2``: the first policy sits in seat one in seating 0, in seat two in seating 1.
    """
    shares = win_shares(totals)[:, 0]
    return [mean_ci(shares[seating::2], clip=(0.0, 1.0)) for seating in (0, 1)]


def run_matchup(first: str, second: str, games: int, seed: int) -> dict:
    """One matchup's exact and simulated figures."""
    started = time.perf_counter()
    policies = [make_table_policy(name, 2, seed=seat_seed(seed, i)) for i, name in enumerate((first, second))]
    result, log = run_table(policies, [first, second], games, seed)
    standing = result.standings[0]
    seats = seat_rates(log.totals)
    figures = {
        "first": first,
        "second": second,
        "games": result.games,
        "seed": seed,
        "simulated": standing.win_rate,
        "simulated_ci95": list(standing.win_rate_ci95),
        "simulated_by_seat": [list(seat) for seat in seats],
        "mean_scores": [s.mean_score for s in result.standings],
        "seconds": time.perf_counter() - started,
    }
    return with_exact(figures)


def with_exact(figures: dict) -> dict:
    """``figures`` with the exact chances beside the simulated ones, when the solutions give them."""
    exact = exact_chances(figures["first"], figures["second"])
    if exact is not None:
        low, high = figures["simulated_ci95"]
        figures["exact_by_seat"] = list(exact)
        figures["exact"] = sum(exact) / 2
        figures["exact_inside_ci95"] = low <= figures["exact"] <= high
        seats = figures["simulated_by_seat"]
        inside = [low <= value <= high for value, (_, low, high) in zip(exact, seats)]
        figures["exact_by_seat_inside_ci95"] = inside
    return figures


def percent(value: float) -> str:
    return f"{100 * value:.2f}%"


def print_table(results: list[dict]) -> None:
    """The figures as a Markdown table."""
    print("| matchup | exact | simulated [95% CI] | seat one: exact / simulated | seat two: exact / simulated | games |")
    print("|---|---|---|---|---|---|")
    for r in results:
        low, high = r["simulated_ci95"]
        seats = []
        for index, (mean, seat_low, seat_high) in enumerate(r["simulated_by_seat"]):
            exact = percent(r["exact_by_seat"][index]) if "exact_by_seat" in r else "–"
            seats.append(f"{exact} / {percent(mean)} [{100 * seat_low:.2f}, {100 * seat_high:.2f}]")
        exact = percent(r["exact"]) if "exact" in r else "–"
        print(
            f"| {r['first']} vs {r['second']} | {exact} | {percent(r['simulated'])} [{100 * low:.2f}, {100 * high:.2f}] "
            f"| {seats[0]} | {seats[1]} | {r['games']:,} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=whole_number(), default=200_000, help="games per matchup (default 200000)")
    parser.add_argument("--seed", type=whole_number(), default=1_000_000, help="seed of the first deal (default 1000000)")
    parser.add_argument("--out", type=Path, default=Path("runs/two_player_figures.json"), help="the figures, as JSON")
    parser.add_argument(
        "--only",
        type=whole_numbers(noun="indices of MATCHUPS", most=len(MATCHUPS) - 1),
        help="comma-separated indices of MATCHUPS to run (default all)",
    )
    args = parser.parse_args()
    results = json.loads(args.out.read_text()) if args.out.is_file() else []
    chosen = MATCHUPS if not args.only else [MATCHUPS[i] for i in args.only]
    games = 2 * math.ceil(args.games / 2)
    for first, second in chosen:
        done = [r for r in results if (r["first"], r["second"], r["games"], r["seed"]) == (first, second, games, args.seed)]
        if done:
            figures = done[0] if "exact" in done[0] else with_exact(done[0])
        else:
            print(f"{first} vs {second}: {args.games:,} games ...", flush=True)
            try:
                figures = run_matchup(first, second, args.games, args.seed)
            except ValueError as error:
                print(f"  skipped: {error}")
                continue
            print(f"  done in {figures['seconds']:.0f} s", flush=True)
        results = [r for r in results if (r["first"], r["second"]) != (first, second)] + [figures]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(results, indent=2) + "\n"
        write_atomically(args.out, lambda handle: handle.write(text.encode()))
    print_table(results)


if __name__ == "__main__":
    main()
