"""The benchmark's tracks: a rule set and a table, a training budget, training seeds and unseen evaluation deals.

A track's name says all of it: ``yacht-solo-1m`` is Yacht alone at a budget of 1,000,000 environment steps,
``yacht-duel-1m`` Yacht at a table of two against ``optimal`` at the same budget. Every track is trained from the
seeds :data:`TRAINING_SEEDS` and evaluated on the same deals, whatever the method:

- solitaire: :data:`SOLO_GAMES` games, game ``g`` dealt from seed ``EVAL_SEED + g`` (``agents.evaluate``'s common
  random numbers), every decision graded by the exact optimum. The figure is the *normalized regret*: the mean
  regret per game (the exact expected points the game's decisions gave away) over the optimum's expected score.
  Its expectation is exactly ``1 - E[score] / optimum``, and its variance is far below the score's, since the
  dice that follow a decision no longer count;
- duel: :data:`DUEL_GAMES` games against ``optimal`` at a table of two, each deal played in both seatings, scored
  in share of wins (ties shared); the normalized regret is ``1 - win share / best``, with ``best`` the exact
  chance of winning of the best response to ``optimal`` (:data:`BEST_RESPONSE_TO_OPTIMAL`).

``EVAL_SEED`` is above every seed training uses (training seeds are 32-bit), so no evaluation deal is dealt in
training. The optimum enters only the evaluation, never a training run.
"""

from __future__ import annotations

from dataclasses import dataclass

from yacht_env.echo import echoed
from yacht_env.rules import rule_set

TRAINING_SEEDS = (0, 1, 2, 3, 4)
EVAL_SEED = 10_000_000_000
SOLO_GAMES = 10_000
DUEL_GAMES = 20_000
# The exact chance of winning of the best response to `optimal` at a table of two (ties shared), seat one and seat
# two, from the solved game (`python -m agents.two_player --rules yacht --opponent optimal`, docs/playing-to-win.md).
BEST_RESPONSE_TO_OPTIMAL = (0.516114, 0.522202)
BUDGETS = {"1m": 1_000_000, "10m": 10_000_000}
# The smoke tracks: a pipeline checked end to end in minutes (tests, a new method's first try); never ranked.
SMOKE_BUDGETS = {"20k": 20_000}
SMOKE_GAMES = 1_000
SOLO_RULES = ("yacht", "yahtzee", "yatzy")
DUEL_RULES = ("yacht",)


@dataclass(frozen=True)
class Track:
    """One track: the rules, the seats (1: solitaire; 2: against ``optimal``), the budget in env steps."""

    name: str
    rules: str
    seats: int
    budget: int
    games: int  # the evaluation games
    ranked: bool = True  # False: a smoke track, for checking a setup

    @property
    def eval_seed(self) -> int:
        """The seed of the first evaluation deal."""
        return EVAL_SEED

    @property
    def metric(self) -> str:
        """What a game scores: points alone, the share of the win at a table."""
        return "score" if self.seats == 1 else "win_share"

    @property
    def budget_name(self) -> str:
        """The budget's part of the name (``1m``)."""
        return self.name.rsplit("-", 1)[1]

    def optimum(self) -> float:
        """The best expected figure any policy reaches: the optimal expected score, or the best response's win chance."""
        if self.seats == 1:
            from agents.solvers.optimal import expected_score

            return expected_score(self.rules)
        return sum(BEST_RESPONSE_TO_OPTIMAL) / len(BEST_RESPONSE_TO_OPTIMAL)

    def max_steps_per_game(self) -> int:
        """The most env steps one player takes in a game: one per roll of each turn (re-rolls, then the row)."""
        rules = rule_set(self.rules)
        return rules.num_turns * rules.rolls_per_turn


def _tracks() -> dict[str, Track]:
    found = {}
    for suffix, budget in {**BUDGETS, **SMOKE_BUDGETS}.items():
        ranked = suffix in BUDGETS
        for rules in SOLO_RULES:
            games = SOLO_GAMES if ranked else SMOKE_GAMES
            found[f"{rules}-solo-{suffix}"] = Track(f"{rules}-solo-{suffix}", rules, 1, budget, games, ranked)
        for rules in DUEL_RULES:
            games = DUEL_GAMES if ranked else SMOKE_GAMES
            found[f"{rules}-duel-{suffix}"] = Track(f"{rules}-duel-{suffix}", rules, 2, budget, games, ranked)
    return found


TRACKS = _tracks()


def track(name: str) -> Track:
    """The track called ``name``; ``ValueError`` naming the tracks there are."""
    if not isinstance(name, str) or name not in TRACKS:
        shown = echoed(name) if isinstance(name, str) else type(name).__name__
        raise ValueError(f"unknown track {shown}: one of {', '.join(TRACKS)}")
    return TRACKS[name]
