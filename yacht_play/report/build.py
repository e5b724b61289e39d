"""The report's figures, computed from the finished games of a serve database: a typed
:class:`~yacht_play.report.results.Report` (:func:`build_report`) that every output reads.

Over the finished games that pass the :class:`~yacht_play.report.filters.Filters`, under one rule set, with every
decision graded against the exact optimum (:class:`~yacht_play.coach.Grader`): each agent against the people it
sat with, the people's expected points lost per decision (per person, over the population, pooled, by games played),
duplicate games paired on the same dice, the agents graded on the same games, each person's skill
(:mod:`yacht_play.report.skill`), each policy's likeness to the people (:mod:`yacht_play.report.likeness`) and one
rating scale (:mod:`yacht_play.report.ratings`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from yacht_play.records import GameRecord
from yacht_play.report.estimates import MIN_N, estimate
from yacht_play.report.filters import Filters
from yacht_play.report.results import (
    AgentAgainstPeople,
    AgentGraded,
    DuplicatePair,
    GamesPlayedBin,
    Histogram,
    LossByChoice,
    PeopleLoss,
    PeoplePopulation,
    PersonLoss,
    PolicyLikeness,
    PolicyNotMeasured,
    Ratings,
    Report,
    Skill,
    TemperatureFit,
)

SCHEMA = 1  # the JSON's schema
GAMES_PLAYED_BINS = [(1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, None)]
HISTOGRAM_BINS = 12
LOSS = (0.0, math.inf)  # a loss is never negative: the interval is clipped at 0


def people_of(game: GameRecord) -> list[dict]:
    """The people's seats of ``game`` (as its record's header holds them)."""
    return [p for p in game.players if p["kind"] == "human"]


def one_rule_set(games: list[GameRecord], default: str) -> str:
    """The rule set ``games`` share (``default`` when there are none); ``ValueError`` naming them when they mix."""
    names = sorted({g.header["rules"] for g in games})
    if len(names) > 1:
        raise ValueError(
            f"the games were played under {len(names)} rule sets ({', '.join(names)}): "
            "report one at a time (--rules NAME, or ?rules=NAME)"
        )
    return names[0] if names else default


@dataclass(frozen=True)
class DecisionPositions:
    """The positions of decisions as a policy sees them: one (N,) int64 entry per decision in each array."""

    hands: np.ndarray
    rolls_left: np.ndarray
    open_bits: np.ndarray
    upper: np.ndarray
    yahtzee_full: np.ndarray
    actions: np.ndarray  # the action taken

    def where(self, mask: np.ndarray) -> DecisionPositions:
        """The positions of the decisions ``mask`` selects."""
        return DecisionPositions(*(getattr(self, field.name)[mask] for field in dataclasses.fields(self)))


@dataclass
class GradedDecisions:
    """Every decision of the report's games, in game order, with its grade: one entry per decision in each array."""

    records: list[dict]  # the decision records of the games
    loss: np.ndarray  # expected points lost against the optimum
    kind: np.ndarray  # "human" or "agent"
    is_row: np.ndarray  # a row choice (else a re-roll choice)
    player: np.ndarray  # the seat's name
    game_of: np.ndarray  # the game's id
    q: np.ndarray  # (N, num_actions) Q* of every action, -inf where illegal
    positions: DecisionPositions

    @classmethod
    def of(cls, games: list[GameRecord], grader) -> GradedDecisions:
        """The decisions of ``games``, graded by ``grader``."""
        from yacht_play.coach import sheet_states

        records = [d for g in games for d in g.decisions]
        graded = grader.grade(records)
        rules = grader.rules
        upper, yahtzee_full = sheet_states(records, rules)
        as_int = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
        positions = DecisionPositions(
            hands=as_int([rules.hand(d["dice"]) for d in records]),
            rolls_left=as_int([d["rolls_left"] for d in records]),
            open_bits=as_int([grader.open_bits(d["open"]) for d in records]),
            upper=upper,
            yahtzee_full=yahtzee_full,
            actions=as_int([d["action"] for d in records]),
        )
        return cls(
            records,
            graded.loss,
            np.array([d.get("kind", "human") for d in records]),
            np.array([d["points"] is not None for d in records], dtype=bool),
            np.array([d["player"] for d in records], dtype=object),
            np.array([d["game_id"] for d in records], dtype=object),
            graded.q,
            positions,
        )

    @property
    def human(self) -> np.ndarray:
        """Which decisions a person made."""
        return self.kind == "human"


def build_report(
    games: list[GameRecord], filters: Filters | None = None, grader=None, policies=None, extra_policies=()
) -> Report:
    """Every figure of the report over the finished games that pass ``filters``.

    One rule set at a time: ``filters.rules``, else the one the games share (``ValueError`` when
    they mix), graded under it (``grader`` is used when it is for those rules). ``policies``: the
    ``(label, policy name)`` whose likeness to the people is measured (see :func:`skill_likeness_and_ratings`), and
    ``extra_policies`` names more (``yacht report --policy``).
    """
    from yacht_env.rules import rule_set
    from yacht_play.coach import Grader

    filters = filters or Filters()
    passing = [g for g in games if g.end is not None and filters.keep_played(g)]
    games = [g for g in passing if filters.keep(g)]
    rules = rule_set(filters.rules or one_rule_set(games, grader.rules.name if grader else "yacht"))
    games = [g for g in games if g.header["rules"] == rules.name]
    left_out = 0 if filters.include_imported else sum(g.imported and g.header["rules"] == rules.name for g in passing)
    grader = grader if grader is not None and grader.rules is rules else Grader(rules)
    games.sort(key=lambda g: (g.header.get("time") or "", g.game_id))
    decisions = GradedDecisions.of(games, grader)
    skill, likeness, ratings = skill_likeness_and_ratings(games, decisions, rules, policies, extra_policies)
    return Report(
        schema=SCHEMA,
        filters=filters,
        games=len(games),
        imported_games=sum(g.imported for g in games),
        imported_games_left_out=left_out,
        decisions=len(decisions.records),
        optimal_expected_score=grader.solution.expected_score,
        min_n=MIN_N,
        agents_vs_people=agents_against_people(games),
        people=people_on_the_dp_scale(decisions, loss_by_games_played(games, decisions)),
        duplicate=duplicate_pairs(games),
        agents_graded=agents_graded(games, decisions),
        rules=rules.name,
        skill=skill,
        likeness=likeness,
        ratings=ratings,
    )


def temperature_of_people(games: list[GameRecord], names, grader) -> TemperatureFit:
    """The temperature fitted to every decision the people ``names`` made in ``games`` together (a group's skill)."""
    from yacht_play.report import skill

    decisions = GradedDecisions.of(games, grader)
    mine = decisions.human & np.isin(decisions.player, list(names))
    hands, actions = decisions.positions.hands[mine], decisions.positions.actions[mine]
    return skill.fit_temperature(*skill.choice_gaps(decisions.q[mine], hands, actions, grader.rules), MIN_N)


def skill_likeness_and_ratings(
    games: list[GameRecord], decisions: GradedDecisions, rules, policies, extra=()
) -> tuple[Skill, tuple[PolicyLikeness | PolicyNotMeasured, ...], Ratings]:
    """The people's fitted temperatures, each policy's likeness to them, and the rating of every person and agent.

    ``policies``: ``(label, policy name)`` to measure the likeness of; None: ``random``, ``greedy``, ``optimal`` and
    the agents of the games; ``softmax:fit`` always comes last.
    """
    from yacht_play.report import likeness, ratings, skill

    human = decisions.human
    mine = decisions.positions.where(human)  # the people's positions
    x, chosen = skill.choice_gaps(decisions.q[human], mine.hands, mine.actions, rules)
    people = skill.skill_of_people(x, chosen, decisions.player[human], decisions.game_of[human], MIN_N)
    band_of_person = {p.name: p.band for p in people.players}
    band_people = {b.band: b.people for b in people.population.bands}
    if policies is None:
        agents = sorted({p["policy"] for g in games for p in g.players if p["kind"] == "agent"})
        policies = [(name, name) for name in dict.fromkeys([*likeness.DEFAULT_POLICIES, *agents])]
    positions = likeness.Positions(
        decisions.q[human],
        mine.hands,
        mine.rolls_left,
        mine.open_bits,
        mine.upper,
        mine.yahtzee_full,
        mine.actions,
        players=people.population.people,
        people=decisions.player[human],
    )
    bands = np.array([band_of_person[name] for name in decisions.player[human]], dtype=object)
    names = list(dict.fromkeys([*policies, *((name, name) for name in extra), (likeness.FIT, likeness.FIT)]))
    table = likeness.likeness_table(names, positions, bands, band_people, rules, people.population.median)
    return people, table, ratings.rate(games)


def agents_against_people(games: list[GameRecord]) -> tuple[AgentAgainstPeople, ...]:
    """Per policy: its win rate against the people it sat with and the mean score difference (agent - person)."""
    wins: dict[str, list[float]] = {}  # policy -> each game's share of wins against its people
    diffs: dict[str, list[float]] = {}  # policy -> each game's mean difference, agent - person
    met: dict[str, set[str]] = {}  # policy -> the people it sat with
    for game in games:
        totals = game.end["totals"]
        humans = people_of(game)
        if not humans:
            continue
        for seat in game.players:
            if seat["kind"] != "agent":
                continue
            policy, mine = seat["policy"], totals[seat["seat"]]
            shares = [1.0 if mine > totals[h["seat"]] else 0.5 if mine == totals[h["seat"]] else 0.0 for h in humans]
            wins.setdefault(policy, []).append(float(np.mean(shares)))
            diffs.setdefault(policy, []).append(float(np.mean([mine - totals[h["seat"]] for h in humans])))
            met.setdefault(policy, set()).update(h["name"] for h in humans)
    return tuple(
        AgentAgainstPeople(
            policy,
            len(wins[policy]),
            len(met[policy]),
            estimate(wins[policy], "games", len(met[policy]), clip=(0.0, 1.0)),
            estimate(diffs[policy], "games", len(met[policy])),
        )
        for policy in sorted(wins)
    )


def loss_by_choice(loss: np.ndarray, is_row: np.ndarray, mine: np.ndarray, players: int | None = None) -> LossByChoice:
    """The loss per decision of the decisions ``mine``: all of them, the re-roll choices, the row choices."""
    return LossByChoice(
        estimate(loss[mine], "decisions", players, clip=LOSS),
        estimate(loss[mine & ~is_row], "decisions", players, clip=LOSS),
        estimate(loss[mine & is_row], "decisions", players, clip=LOSS),
    )


def people_on_the_dp_scale(decisions: GradedDecisions, by_games_played: tuple[GamesPlayedBin, ...] = ()) -> PeopleLoss:
    """The people's loss per decision: each person's, the population's (over people and pooled), and a histogram;
    ``by_games_played``: the loss by games played (:func:`loss_by_games_played`), carried along.
    """
    loss, is_row, player, game_of, human = decisions.loss, decisions.is_row, decisions.player, decisions.game_of, decisions.human
    names = list(dict.fromkeys(player[human].tolist()))
    per_player = []
    for name in names:
        mine = human & (player == name)
        split = loss_by_choice(loss, is_row, mine)
        per_player.append(PersonLoss(name, len(set(game_of[mine].tolist())), split.all, split.reroll, split.row))
    means = [[e.mean for e in (p.all, p.reroll, p.row)] for p in per_player]
    person_means = [[m[k] for m in means if m[k] is not None] for k in range(3)]  # all, re-roll, row
    over_people = [estimate(v, "people", len(v), clip=LOSS) for v in person_means]
    population = PeoplePopulation(
        people=len(names),
        games=len({g for g, h in zip(game_of.tolist(), human) if h}),
        over_people=LossByChoice(*over_people),
        pooled=loss_by_choice(loss, is_row, human, len(names)),
    )
    return PeopleLoss(population, tuple(per_player), histogram_of(np.array(person_means[0])), by_games_played)


def histogram_of(values: np.ndarray) -> Histogram:
    """``HISTOGRAM_BINS`` bins from 0 to the largest of ``values`` (each a person's loss per decision)."""
    if not len(values):
        return Histogram((), (), 0)
    top = max(float(values.max()), 1e-9)
    counts, edges = np.histogram(values, bins=HISTOGRAM_BINS, range=(0.0, top))
    return Histogram(tuple(edges.tolist()), tuple(counts.tolist()), len(values))


def loss_by_games_played(games: list[GameRecord], decisions: GradedDecisions) -> tuple[GamesPlayedBin, ...]:
    """The mean of each game's loss per decision, by how many games the person had played by then (``GAMES_PLAYED_BINS``)."""
    game_loss: dict[tuple[str, str], list[float]] = {}  # (game, person) -> the loss of each of the person's decisions
    order_of: dict[tuple[str, str], int] = {}  # (game, person) -> the game's number among the person's games
    seen: dict[str, int] = {}
    for game in games:
        for person in people_of(game):
            seen[person["name"]] = seen.get(person["name"], 0) + 1
            order_of[(game.game_id, person["name"])] = seen[person["name"]]
    for i in np.flatnonzero(decisions.human):
        game_loss.setdefault((decisions.game_of[i], decisions.player[i]), []).append(float(decisions.loss[i]))
    by_games_played = []
    for low, high in GAMES_PLAYED_BINS:
        means = [
            float(np.mean(v)) for key, v in game_loss.items() if order_of[key] >= low and (high is None or order_of[key] <= high)
        ]
        people = len({key[1] for key in game_loss if order_of[key] >= low and (high is None or order_of[key] <= high)})
        label = f"{low}" if low == high else f"{low}+" if high is None else f"{low}-{high}"
        by_games_played.append(GamesPlayedBin(label, estimate(means, "games", people, clip=LOSS)))
    return tuple(by_games_played)


def duplicate_pairs(games: list[GameRecord]) -> tuple[DuplicatePair, ...]:
    """Per policy, over its duplicate games: the person's total minus the agent's, on the same dice."""
    diffs: dict[str, list[float]] = {}  # policy -> each pairing's person - agent
    met: dict[str, set[str]] = {}  # policy -> the people it was paired with
    for game in games:
        if game.header["mode"] != "duplicate":
            continue
        totals = game.end["totals"]
        for person in people_of(game):
            for seat in game.players:
                if seat["kind"] == "agent":
                    diffs.setdefault(seat["policy"], []).append(totals[person["seat"]] - totals[seat["seat"]])
                    met.setdefault(seat["policy"], set()).add(person["name"])
    return tuple(
        DuplicatePair(policy, len(diffs[policy]), len(met[policy]), estimate(diffs[policy], "games", len(met[policy])))
        for policy in sorted(diffs)
    )


def agents_graded(games: list[GameRecord], decisions: GradedDecisions) -> tuple[AgentGraded, ...]:
    """Per policy: the agents' loss per decision on their own decisions in the same games."""
    policy_of = {(g.game_id, p["seat"]): p["policy"] for g in games for p in g.players if p["kind"] == "agent"}
    decisions_of: dict[str, list[int]] = {}  # policy -> the indices of its decisions
    for i, d in enumerate(decisions.records):
        if decisions.kind[i] == "agent":
            decisions_of.setdefault(policy_of[(d["game_id"], d["seat"])], []).append(i)
    graded = []
    for policy, indices in sorted(decisions_of.items()):
        mine = np.zeros(len(decisions.loss), dtype=bool)
        mine[indices] = True
        split = loss_by_choice(decisions.loss, decisions.is_row, mine)
        graded.append(AgentGraded(policy, len(set(decisions.game_of[mine].tolist())), split.all, split.reroll, split.row))
    return tuple(graded)
