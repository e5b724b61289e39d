"""The reference ceiling: a player who knows the opponent's final score, against the optimum.

``python -m agents.evaluation.ceiling --games 100000`` plays it at a table of two, deals and seatings as in
:mod:`agents.evaluation.tournament`: how much any player could gain over the expected-score optimum by
knowing what the opponent will score, an upper bound for :class:`agents.policies.win.WinPolicy`.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from agents.evaluation.tournament import TableLog, deal_dice, print_tournament, save_tournament_json, summarize_table
from agents.policies.table_reading import best_with_fallback
from agents.solvers.optimal import solve
from agents.solvers.target import solve_target
from yacht_env.actions import legal_masks
from yacht_env.game import GameBatch
from yacht_env.option_values import whole_number
from yacht_env.rules import YACHT, RuleSet


def _play_solitaire(rules: RuleSet, faces: np.ndarray, choose) -> np.ndarray:
    """Final totals of games played alone on ``faces`` (games, turns, rolls, dice).

    ``choose(hands, rolls, open, totals, rows)`` picks the actions.
    """
    tables = GameBatch(rules, 1, len(faces))
    tables.start(faces[:, None])
    seats = np.zeros(len(faces), dtype=np.int64)
    while not tables.over.all():
        rows = np.flatnonzero(~tables.over)
        hands, rolls_left, open_bits = tables.position(rows, seats[rows])
        tables.play(choose(hands, rolls_left, open_bits, tables.totals[rows, 0], rows), rows)
    return tables.totals[:, 0].copy()


def ceiling_match(games: int, seed: int = 0, rules: RuleSet | None = None, batch_size: int = 4096):
    """``knows-final`` against ``optimal`` at a table of two, deals and seatings as in :mod:`agents.evaluation.tournament`.

    ``knows-final`` is told the optimum's final score ``y`` before it starts and maximizes its exact
    share of the win, ``max E[1{F > y - x} + 1{F = y - x} / 2]`` (:func:`agents.solvers.target.solve_target`
    with ``tie=0.5``). The opponent never reacts to anyone, so each seat's total depends on its own
    dice only and the games can be played as solitaires. Returns ``(TournamentResult, TableLog)``.
    """
    rules = rules or YACHT
    optimal = solve(rules)
    beat = solve_target(rules, tie=0.5)
    masks = legal_masks(rules)  # [rolls left > 0, open set]
    deals = math.ceil(games / 2)
    totals = np.zeros((deals * 2, 2), dtype=np.int64)
    per_batch = max(1, batch_size // 2)
    for first in range(0, deals, per_batch):
        count = min(per_batch, deals - first)
        faces = deal_dice(seed + first, count, 2, rules).reshape(
            (count * 2,) + (rules.num_turns, rules.rolls_per_turn, rules.num_dice)
        )
        optimum = _play_solitaire(rules, faces, lambda h, r, o, t, rows: optimal.best_actions_batch(h, r, o))
        opponent_final = optimum.reshape(count, 2)[:, ::-1].reshape(-1)  # game on dice k faces the optimum on dice 1 - k

        def knowing(h, r, o, t, rows, opponent_final=opponent_final):
            q = beat.q_values_batch(h, r, o, opponent_final[rows] - t)
            return best_with_fallback(
                q,
                masks[(r > 0).astype(np.intp), o],
                lambda tied: optimal.q_values_batch(h[tied], r[tied], o[tied]),
            )

        knows = _play_solitaire(rules, faces, knowing)
        # seating r puts knows-final in seat r on dice r and the optimum in seat 1 - r on dice 1 - r
        totals[first * 2 : (first + count) * 2, 0] = knows
        totals[first * 2 : (first + count) * 2, 1] = opponent_final
    log = TableLog(["knows-final", "optimal"], totals, deals, rules.name)
    return summarize_table(log, seed), log


def argument_parser() -> argparse.ArgumentParser:
    """The command line's options."""
    parser = argparse.ArgumentParser(
        prog="python -m agents.evaluation.ceiling",
        description="The reference ceiling: a player who knows the "
        "optimum's final score in advance, against the optimum at a table of two.",
    )
    parser.add_argument(
        "--games",
        type=whole_number(),
        default=20_000,
        help="games (every deal in both seatings; default 20000)",
    )
    parser.add_argument("--seed", type=whole_number(), default=0, help="seed of deal 0 (default 0)")
    parser.add_argument("--json", help="write the figures to this JSON file")
    return parser


def main(argv=None) -> None:
    """Run the command line: parse ``argv`` and print (or write) the ceiling figures."""
    parser = argument_parser()
    args = parser.parse_args(argv)
    if args.games < 4:
        parser.error(f"--games must be at least 4 (two deals, for a confidence interval), got {args.games}")
    from yacht_env.atomic_files import OutputError, check_outputs

    try:
        check_outputs([args.json])  # a folder, FIFO or device: refused before the games, not after
    except OutputError as error:
        parser.exit(2, f"error: {error}\n")
    result, _ = ceiling_match(args.games, args.seed)
    print_tournament(result)
    if args.json:
        try:
            save_tournament_json(args.json, result)
        except OutputError as error:  # what changed since the check, or a full disk: still one line
            parser.exit(2, f"error: {error}\n")


if __name__ == "__main__":
    main()
