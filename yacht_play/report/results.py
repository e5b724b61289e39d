"""The report's results as typed, immutable values: the :class:`Report` and each of its sections, down to each figure
(:class:`Estimate`), as :mod:`yacht_play.report.build` computes them and every output reads them.

Each class's fields, in order, are the keys of its object in the report's JSON (:mod:`yacht_play.report.json_document`),
and its tuples are the JSON's arrays. A field marked with :data:`OMITTED_WHEN_NONE` is left out of the JSON when it is
None, so that the JSON keeps the shape it has had since its first schema (a figure names its ``players`` only where it
counts them; only ``softmax:fit`` names its ``temperature``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from yacht_play.report.filters import Filters

OMITTED_WHEN_NONE = {"json": "omitted when None"}  # a field's metadata: no JSON key while the value is None


@dataclass(frozen=True)
class Estimate:
    """A figure: a mean with its 95% interval over ``n`` values of ``unit`` (games, decisions, people).

    ``low`` and ``high`` are None when there is no interval (too few values or people), and ``note`` says why; the
    mean is None when there are no values. ``players``: how many people the values stand on, where that matters.
    """

    mean: float | None
    low: float | None
    high: float | None
    n: int
    unit: str
    note: str | None = None
    players: int | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@dataclass(frozen=True)
class TemperatureFit(Estimate):
    """A fitted temperature T (points) with its 95% profile-likelihood interval over ``n`` decisions (``high`` None:
    the interval has no upper end; ``mean`` None: no finite T).
    """

    method: str = "maximum likelihood"


@dataclass(frozen=True)
class Histogram:
    """Counts of people over the bins between consecutive ``edges``; ``n`` people in all."""

    edges: tuple[float, ...]
    counts: tuple[int, ...]
    n: int
    unit: str = "people"


@dataclass(frozen=True)
class AgentAgainstPeople:
    """One policy against the people it sat with: its win rate (a tie counts 1/2) and the score difference."""

    policy: str
    games: int
    people: int
    win_rate: Estimate
    score_difference: Estimate  # agent - person


@dataclass(frozen=True)
class LossByChoice:
    """Expected points lost per decision: over every decision, the re-roll choices, the row choices."""

    all: Estimate
    reroll: Estimate
    row: Estimate


@dataclass(frozen=True)
class PersonLoss:
    """One person's expected points lost per decision, over the person's decisions."""

    name: str
    games: int
    all: Estimate
    reroll: Estimate
    row: Estimate


@dataclass(frozen=True)
class PeoplePopulation:
    """The people's loss per decision over the population: each person one value, and pooled over decisions."""

    people: int
    games: int
    over_people: LossByChoice
    pooled: LossByChoice


@dataclass(frozen=True)
class GamesPlayedBin:
    """The mean of each game's loss per decision over the people's games numbered ``games_played`` among theirs."""

    games_played: str  # "1", "3-4", "17+"
    loss_per_decision: Estimate


@dataclass(frozen=True)
class PeopleLoss:
    """The people on the optimum's scale: the population, each person, a histogram, the loss by games played."""

    population: PeoplePopulation
    players: tuple[PersonLoss, ...]
    histogram: Histogram  # of each person's loss per decision
    by_games_played: tuple[GamesPlayedBin, ...] = ()


@dataclass(frozen=True)
class DuplicatePair:
    """One policy's duplicate games: the person's total minus the agent's, on the same dice."""

    policy: str
    games: int
    people: int
    person_minus_agent: Estimate


@dataclass(frozen=True)
class AgentGraded:
    """One policy graded on its own decisions in the report's games: expected points lost per decision."""

    policy: str
    games: int
    all: Estimate
    reroll: Estimate
    row: Estimate


@dataclass(frozen=True)
class PersonSkill:
    """One person's fitted temperature and the skill band it puts the person in."""

    name: str
    games: int
    temperature: TemperatureFit
    band: str


@dataclass(frozen=True)
class SkillBand:
    """A skill band's label and how many people it holds."""

    band: str
    people: int


@dataclass(frozen=True)
class SkillPopulation:
    """The population's skill: the median person's T, the fit pooled over every decision, the bands, a histogram."""

    people: int
    median: float | None  # None: no person with a finite T
    pooled: TemperatureFit
    no_finite_temperature: int  # people
    bands: tuple[SkillBand, ...]
    histogram: Histogram  # of the finite fitted temperatures


@dataclass(frozen=True)
class Skill:
    """Each person's fitted temperature (in order of first decision) and the population's."""

    players: tuple[PersonSkill, ...]
    population: SkillPopulation


@dataclass(frozen=True)
class BandLikeness:
    """A policy's likeness to the people of one skill band."""

    band: str
    people: int
    top1: Estimate
    log_likelihood: Estimate | None  # None: the policy gives no probabilities


@dataclass(frozen=True)
class PolicyLikeness:
    """A policy measured on the people's decisions: top-1 agreement and mean log-likelihood, overall and per band."""

    policy: str  # its label
    decisions: int
    top1: Estimate
    log_likelihood: Estimate | None  # None: the policy gives no probabilities
    by_band: tuple[BandLikeness, ...]
    temperature: float | None = field(default=None, metadata=OMITTED_WHEN_NONE)  # softmax:fit's, the median T

    def label(self) -> str:
        """The policy's label, with its temperature where it has one (``softmax:fit (T=1.23)``)."""
        return self.policy + ("" if self.temperature is None else f" (T={self.temperature:.3g})")


@dataclass(frozen=True)
class PolicyNotMeasured:
    """A policy that cannot play the people's positions (one that plays only at a table, a model that does not
    load): ``note`` says why.
    """

    policy: str
    decisions: int
    note: str


@dataclass(frozen=True)
class RatedPlayer:
    """A person's or an agent's rating (``kind`` ``"human"`` or ``"agent"``) with its bootstrap interval over games."""

    name: str
    kind: str
    rating: Estimate


@dataclass(frozen=True)
class Anchor:
    """What the rating scale is anchored on: ``policy`` rated ``rating`` (None: the ratings average ``rating``)."""

    policy: str | None
    rating: float


@dataclass(frozen=True)
class AgentPrediction:
    """One agent's mean score against people over ``pairs`` results: as the ratings predict it and as observed."""

    policy: str
    pairs: int
    predicted: float
    observed: float


@dataclass(frozen=True)
class GamesOfMode:
    """How many of the rated games were played in one mode (``table`` or ``duplicate``)."""

    mode: str
    games: int


@dataclass(frozen=True)
class Ratings:
    """One rating scale for people and agents, best first; ``agents_vs_people`` is None when no game had a table.

    ``games_by_mode``: the rated games of each mode, pooled in the one fit (:mod:`yacht_play.report.ratings`).
    """

    method: str
    scale: str
    anchor: Anchor
    games: int
    pairs: int
    bootstrap: int
    players: tuple[RatedPlayer, ...]
    games_by_mode: tuple[GamesOfMode, ...] = ()
    agents_vs_people: tuple[AgentPrediction, ...] | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@dataclass(frozen=True)
class Report:
    """Every figure of the population report over the finished games that passed ``filters``, under ``rules``."""

    schema: int
    filters: Filters
    games: int
    imported_games: int  # counted in (with include_imported)
    imported_games_left_out: int  # finished, passing the other filters, under these rules
    decisions: int
    optimal_expected_score: float
    min_n: int
    agents_vs_people: tuple[AgentAgainstPeople, ...]
    people: PeopleLoss
    duplicate: tuple[DuplicatePair, ...]
    agents_graded: tuple[AgentGraded, ...]
    rules: str
    skill: Skill
    likeness: tuple[PolicyLikeness | PolicyNotMeasured, ...]
    ratings: Ratings
