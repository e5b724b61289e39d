"""Check the solved two-player game decision by decision in the env's games: what each kind of decision is worth after it.

Both seats play ``exact2``. At every decision the chosen action's chance of winning (the mover's, from the
solution) is set against what the solution says once the action has been played: after a re-roll, the best
action's chance at the mover's next decision; after a row, one minus the other's best chance at its first
decision (or the game's outcome after the last row). Under the solution's own model of the game each
difference has mean zero, so a kind of decision (a seat's re-rolls of ``k`` dice, or its rows) whose mean
leaves zero locates a difference between the solved game and the game the env plays, more finely than
``two_player_drift.py``, which follows player one's value from turn to turn. Prints, per seat and kind, the
decisions, the mean difference, its standard error and z, then each seat's summed change per game.

    python -m benchmarks.two_player_steps [--rows ones,twos,...] [--games 30000] [--seed 1000000]
"""

from __future__ import annotations

import numpy as np

from benchmarks.two_player_drift import exact2_games
from yacht_env.actions import ActionLayout
from yacht_env.table.encoding import policy_observations
from yacht_env.table.outcome import win_shares

SCORING = -1  # the kind of a decision that writes a row; re-rolls are kinds 1 .. dice (the dice re-rolled)


def kinds_of(actions: np.ndarray, first_score: int) -> np.ndarray:
    """Each action's kind: the number of dice its re-roll mask re-rolls, or ``SCORING``."""
    rerolled = np.array([bin(int(action)).count("1") for action in actions], dtype=np.int64)
    return np.where(actions >= first_score, SCORING, rerolled)


def main() -> None:
    args, rules, game, policies, tables = exact2_games(__doc__.splitlines()[0])
    first_score = ActionLayout(rules).first_score_action
    chosen = np.full(args.games, np.nan)  # each table's last decision: its chance, its seat and its kind
    chosen_seat, chosen_kind = np.zeros(args.games, dtype=np.int64), np.zeros(args.games, dtype=np.int64)
    differences: dict[tuple[int, int], list[np.ndarray]] = {}

    def settle(rows: np.ndarray, value_for_seat) -> None:
        """Record, for tables ``rows`` with a decision pending, the value now minus the chosen action's."""
        rows = rows[~np.isnan(chosen[rows])]
        after = value_for_seat(rows, chosen_seat[rows])
        for seat in (0, 1):
            for kind in np.unique(chosen_kind[rows]):
                pick = (chosen_seat[rows] == seat) & (chosen_kind[rows] == kind)
                if pick.any():
                    differences.setdefault((seat, int(kind)), []).append(after[pick] - chosen[rows][pick])

    while not tables.over.all():
        for seat in (0, 1):
            rows = np.flatnonzero(~tables.over & (tables.seat == seat))
            if not rows.size:
                continue
            observations = policy_observations(policies[seat], tables, rows, tables.seat[rows])
            masks = tables.legal_masks(rows)
            chances = np.where(masks != 0, policies[seat].chances(observations), -np.inf)
            best = dict(zip(rows.tolist(), chances.max(axis=1)))
            settle(rows, lambda r, s: np.array([best[t] if s_ == seat else 1 - best[t] for t, s_ in zip(r, s)]))
            actions = np.asarray(policies[seat].act_batch(observations, masks), dtype=np.int64)
            chosen[rows] = chances[np.arange(len(rows)), actions]
            chosen_seat[rows], chosen_kind[rows] = seat, kinds_of(actions, first_score)
            tables.play(actions, rows)
    shares = win_shares(tables.totals)
    settle(np.arange(args.games), lambda r, s: shares[r, s])
    print(f"{rules.name}: {args.games:,} games from seed {args.seed}; player one's exact chance {game.start_value():.5f}")
    print("seat  decision         count      mean       s.e.      z")
    for (seat, kind), parts in sorted(differences.items()):
        v = np.concatenate(parts)
        se = v.std() / np.sqrt(len(v))
        label = "a row" if kind == SCORING else f"re-roll {kind} dice"
        print(f"{seat + 1:4d}  {label:14s} {len(v):8,d} {v.mean():+.6f} {se:.6f} {v.mean() / se if se else 0.0:+6.2f}")
    for seat in (0, 1):
        parts = [np.concatenate(p) for (s, _), p in differences.items() if s == seat]
        total, spread = sum(p.sum() for p in parts), np.sqrt(sum(len(p) * p.var() for p in parts))
        change, error = total / args.games, spread / args.games
        print(f"seat {seat + 1}: its decisions change its own chance by {change:+.6f} a game (s.e. {error:.6f})")


if __name__ == "__main__":
    main()
