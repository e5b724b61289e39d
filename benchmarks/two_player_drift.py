"""Follow the solved two-player value through simulated games: under both players' optimal play it must not drift.

Both seats play ``exact2``. At each of player one's turn starts the script reads player one's exact chance of
winning from the solution; under the solution's own model of the game the mean of that value over games is the
start value at every turn (a martingale), so a turn where the mean leaves its 95% interval locates a difference
between the solved game and the game the env plays. Prints, per turn, the games, the mean and its interval.

    python benchmarks/two_player_drift.py [--rows ones,twos,...] [--games 30000] [--seed 1000000]
"""

from __future__ import annotations

import argparse

import numpy as np

from agents.evaluation.tournament import deal_dice
from agents.registry import make_table_policy
from agents.two_player import load_two_player, solve_two_player
from agents.two_player.__main__ import sub_game
from yacht_env.game import GameBatch
from yacht_env.option_values import whole_number
from yacht_env.rules import rule_set
from yacht_env.table.encoding import policy_observations
from yacht_env.table.outcome import win_shares


def exact2_games(description: str, games: int = 30_000):
    """The command line both checks take, and ``(args, rules, solution, policies, tables)``: ``--games`` tables dealt
    from ``--seed``, where both seats play ``exact2`` on full Yacht (read from the cache) or on ``--rows`` (solved here).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rows", default="", help="Yacht on these rows only (solved here); default all, read from the cache")
    parser.add_argument("--games", type=whole_number(), default=games)
    parser.add_argument("--seed", type=whole_number(), default=1_000_000)
    args = parser.parse_args()
    rules = sub_game(rule_set("yacht"), args.rows) if args.rows else rule_set("yacht")
    game = solve_two_player(rules) if args.rows else load_two_player(rules)
    policies = [make_table_policy("exact2", 2, rules=rules, seed=seat) for seat in (0, 1)]
    tables = GameBatch(rules, 2, args.games)
    tables.start(deal_dice(args.seed, args.games, 2, rules))
    return args, rules, game, policies, tables


def main() -> None:
    args, rules, game, policies, tables = exact2_games(__doc__.splitlines()[0])
    values: dict[int, list[float]] = {}
    while not tables.over.all():
        for seat in (0, 1):
            rows = np.flatnonzero(~tables.over & (tables.seat == seat))
            if not rows.size:
                continue
            if seat == 0:
                for row in rows[tables.rolls_left[rows, 0] == rules.rolls_per_turn - 1]:
                    mover, other = int(tables.open_bits[row, 0]), int(tables.open_bits[row, 1])
                    turn = rules.num_rows - bin(mover).count("1")
                    values.setdefault(turn, []).append(
                        game.value(mover, other, int(tables.totals[row, 0] - tables.totals[row, 1]))
                    )
            observations = policy_observations(policies[seat], tables, rows, tables.seat[rows])
            tables.play(np.asarray(policies[seat].act_batch(observations, tables.legal_masks(rows)), dtype=np.int64), rows)
    print(f"{rules.name}: player one's exact chance {game.start_value():.5f}; {args.games:,} games from seed {args.seed}")
    print("turn  games   mean of player one's value [95% CI]")
    for turn, seen in sorted(values.items()):
        v = np.asarray(seen)
        half = 1.96 * v.std() / np.sqrt(len(v))
        print(f"{turn + 1:4d}  {len(v):6d}  {v.mean():.5f} [{v.mean() - half:.5f}, {v.mean() + half:.5f}]")
    final = win_shares(tables.totals)[:, 0]
    half = 1.96 * final.std() / np.sqrt(len(final))
    print(f" end  {len(final):6d}  {final.mean():.5f} [{final.mean() - half:.5f}, {final.mean() + half:.5f}]")


if __name__ == "__main__":
    main()
