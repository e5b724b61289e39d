"""The two-player game solved exactly: both players play to win (a tie counts 1/2), or one against a fixed policy.

For a rule set whose rows score on their own (no bonus, no joker: ``yacht``, ``yacht_exercism``, a user's
own ``RuleSet``), the state at the start of a turn is the two open-row sets and the score difference
(:mod:`agents.two_player.layout`); :mod:`agents.two_player.kernel` values one turn exactly through the
dice probabilities, and :mod:`agents.two_player.solve` runs the turns layer by layer from the end of the
game, resumable, into the cache folder.

Typical use::

    from agents.two_player import solve_two_player
    solution = solve_two_player("yacht")            # hours the first time, then loaded from the cache
    solution.start_value()                          # player one's chance of winning
    solution.action_values(["sixes", "yacht"], ["choice", "yacht"], 12, [6, 6, 2, 6, 1], 2)

The command line: ``python -m agents.two_player --rules yacht``.
"""

from __future__ import annotations

import weakref

import numpy as np

from agents.two_player.kernel import Policy
from agents.two_player.layout import PairLayout
from agents.two_player.opponents import OPPONENTS, fixed_policy
from agents.two_player.solution import TwoPlayerSolution
from agents.two_player.solve import Report, solution_folder, solve_all_layers
from yacht_env.rules import RuleSet, rule_set

__all__ = ["TwoPlayerSolution", "solve_two_player", "solution_label", "check_rules", "maximizing_policy"]

_solutions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_rules(rules: RuleSet | str | None) -> RuleSet:
    """The rule set, or ``ValueError`` when a bonus or a joker ties its rows together (its turns are not solved here)."""
    rules = rule_set(rules)
    if rules.has_sheet_state:
        raise ValueError(
            f"rule set {rules.name!r} has an upper bonus, an extra-Yahtzee bonus or a joker rule: "
            f"the two-player solve needs rows that score on their own (yacht, yacht_exercism)"
        )
    return rules


def maximizing_policy() -> Policy:
    """The decision rule of a mover who plays to win: no fixed choices."""
    return Policy(False, np.zeros((1, 1), dtype=np.int64), np.zeros((1, 1, 1), dtype=np.int64))


def solve_two_player(
    rules: RuleSet | str | None = "yacht", opponent: str | None = None, seat: int = 0, report: Report | None = None
) -> TwoPlayerSolution:
    """The exact two-player solution of ``rules``: loaded from the cache folder, else solved (and stored layer by layer).

    ``opponent=None``: both play to win, the game's value. ``opponent="optimal"`` or ``"greedy"``: the
    best response of the player in ``seat`` (0: player one, 1: player two) to that solitaire policy in
    the other seat. ``report(layer, values done, seconds)`` is called as the solve goes (the command
    line draws a progress bar with it).
    """
    rules = check_rules(rules)
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 (player one) or 1 (player two), got {seat!r}")
    label = solution_label(opponent, seat)
    cached = _solutions.setdefault(rules, {})
    if label not in cached:
        layout = PairLayout(rules)
        if opponent is None:
            policies = (maximizing_policy(), maximizing_policy())
        else:
            fixed = fixed_policy(rules, opponent)
            policies = (maximizing_policy(), fixed) if seat == 0 else (fixed, maximizing_policy())
        layers = solve_all_layers(rules, layout, policies, solution_folder(rules, label), report)
        cached[label] = TwoPlayerSolution(rules, layout, layers, policies, label)
    return cached[label]


def solution_label(opponent: str | None, seat: int = 0) -> str:
    """The name of a solution in the cache folder: ``game``, or ``br-OPPONENT-pN`` for player N's best response."""
    if opponent is None:
        return "game"
    if opponent not in OPPONENTS:
        raise ValueError(f"unknown opponent {opponent!r}; expected one of {', '.join(OPPONENTS)} (or None: both play to win)")
    return f"br-{opponent}-p{seat + 1}"
