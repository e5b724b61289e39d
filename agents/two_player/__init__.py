"""The two-player game solved exactly: both players play to win (a tie counts 1/2), or one against a fixed policy.

For a rule set whose rows score on their own (no bonus, no joker: ``yacht``, ``yacht_exercism``, a user's
own ``RuleSet``), the state at the start of a turn is the two open-row sets and the lead
(:mod:`agents.two_player.layout`); :mod:`agents.two_player.kernel` values one turn exactly through the
dice probabilities, and :mod:`agents.two_player.solve` runs the turns layer by layer from the end of the
game, resumable, into the cache folder. It may import ``yacht_env`` and :mod:`agents.solvers` only; the
policies that play the solution (``exact2``, ``br:``) are :mod:`agents.policies.exact2`.

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

from agents.two_player.kernel import FixedMover
from agents.two_player.layout import PairLayout
from agents.two_player.opponents import OPPONENTS, fixed_policy
from agents.two_player.solution import TwoPlayerSolution
from agents.two_player.solve import Report, solution_folder, solve_all_layers, stored_layers
from yacht_env.rules import RULE_SETS, RuleSet, rule_set

__all__ = [
    "SolutionNotComputed",
    "TwoPlayerSolution",
    "check_rules",
    "load_two_player",
    "maximizing_policy",
    "solution_label",
    "solve_two_player",
]

# Values per second of a solve on this project's 2-core reference machine with both cores free (measured on the
# full Yacht solve, ``python -m agents.two_player --rules yacht``): how long a missing solution is said to take.
SOLVE_VALUES_PER_SECOND = 3.4e6

_solutions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_rules(rules: RuleSet | str | None) -> RuleSet:
    """The rule set, or ``ValueError`` when a bonus or a joker ties its rows together (its turns are not solved here)."""
    rules = rule_set(rules)
    if rules.has_bonus_or_joker:
        raise ValueError(
            f"rule set {rules.name!r} has an upper bonus, an extra-Yahtzee bonus or a joker rule: "
            f"the two-player solve needs rows that score on their own (yacht, yacht_exercism)"
        )
    return rules


def maximizing_policy() -> FixedMover:
    """The decision rule of a mover who plays to win: no fixed choices."""
    return FixedMover(False, np.zeros((1, 1), dtype=np.int64), np.zeros((1, 1, 1), dtype=np.int64))


STRATEGIES = ("best", "exact2")


def solve_two_player(
    rules: RuleSet | str | None = "yacht",
    opponent: str | None = None,
    seat: int = 0,
    report: Report | None = None,
    strategy: str = "best",
) -> TwoPlayerSolution:
    """The exact two-player solution of ``rules``: loaded from the cache folder, else solved (and stored layer by layer).

    ``opponent=None``: both play to win, the game's value. ``opponent="optimal"`` or ``"greedy"``: the
    best response of the player in ``seat`` (0: player one, 1: player two) to that solitaire policy in
    the other seat; with ``strategy="exact2"``, instead, the exact chances of the player in ``seat``
    playing the game's decisions (``exact2``) against that policy (the game is solved first). ``report(layer,
    values done, seconds)`` is called as the solve goes (the command line draws a progress bar with it).
    """
    rules = check_rules(rules)
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 (player one) or 1 (player two), got {seat!r}")
    label = solution_label(opponent, seat, strategy)
    cached = _solutions.setdefault(rules, {})
    if label not in cached:
        layout = PairLayout(rules)
        guide = None
        if opponent is None:
            policies = (maximizing_policy(), maximizing_policy())
        else:
            fixed = fixed_policy(rules, opponent)
            policies = (maximizing_policy(), fixed) if seat == 0 else (fixed, maximizing_policy())
            if strategy == "exact2":
                guide = solve_two_player(rules, report=report).layers
        layers = solve_all_layers(rules, layout, policies, solution_folder(rules, label), report, guide)
        cached[label] = TwoPlayerSolution(rules, layout, layers, policies, label, decides=guide is None)
    return cached[label]


class SolutionNotComputed(ValueError):
    """A two-player solution is not in the cache folder; the message names the command that computes it and its time."""


def solve_command(rules: RuleSet, opponent: str | None, seat: int, strategy: str = "best") -> str:
    """The command that computes the solution of ``rules`` for ``opponent`` and ``seat`` (a call, for rules of one's own)."""
    if RULE_SETS.get(rules.name) != rules:
        arguments = "" if opponent is None else f", opponent={opponent!r}" + (", seat=1" if seat == 1 else "")
        arguments += "" if strategy == "best" else f", strategy={strategy!r}"
        return f"agents.two_player.solve_two_player(rules{arguments})"
    command = f"python -m agents.two_player --rules {rules.name}"
    if opponent is not None:
        command += f" --opponent {opponent}" + (" --seat 2" if seat == 1 else "")
        command += "" if strategy == "best" else f" --strategy {strategy}"
    return command


def load_two_player(
    rules: RuleSet | str | None = "yacht", opponent: str | None = None, seat: int = 0, strategy: str = "best"
) -> TwoPlayerSolution:
    """The solution :func:`solve_two_player` computes, read from the cache folder only: never a solve.

    ``SolutionNotComputed`` (one line) when a layer is missing, saying which command computes it and about
    how long it takes: what the policies and the grading call, so that nothing starts a long solve by surprise.
    """
    rules = check_rules(rules)
    label = solution_label(opponent, seat, strategy)
    cached = _solutions.get(rules, {})
    if label in cached:
        return cached[label]
    layout = PairLayout(rules)
    layers = stored_layers(solution_folder(rules, label), layout)
    if layers is None:
        what = (
            "both play to win"
            if opponent is None
            else f"player {seat + 1}'s {'best response' if strategy == 'best' else 'exact2 chances'} against {opponent}"
        )
        minutes = max(1, round(layout.total_values / SOLVE_VALUES_PER_SECOND / 60))
        raise SolutionNotComputed(
            f"the two-player solution of {rules.name} ({what}) is not computed yet: "
            f"`{solve_command(rules, opponent, seat, strategy)}` computes it (about {minutes} min on 2 free cores, "
            f"{layout.total_values * 2 / 2**30:.1f} GiB on disk)"
        )
    return solve_two_player(rules, opponent, seat, strategy=strategy)


def solution_label(opponent: str | None, seat: int = 0, strategy: str = "best") -> str:
    """The name of a solution in the cache folder: ``game``, ``br-OPPONENT-pN`` for player N's best response, or
    ``exact2-OPPONENT-pN`` for player N's chances playing the game's decisions against that policy.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    if opponent is None:
        if strategy != "best":
            raise ValueError(f"strategy {strategy!r} is played against an opponent: name one of {', '.join(OPPONENTS)}")
        return "game"
    if opponent not in OPPONENTS:
        raise ValueError(f"unknown opponent {opponent!r}; expected one of {', '.join(OPPONENTS)} (or None: both play to win)")
    return f"{'br' if strategy == 'best' else strategy}-{opponent}-p{seat + 1}"
