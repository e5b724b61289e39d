"""The rules of Yacht as data: score rows, a rule set, and the precomputed score table.

This module knows nothing about environments. A :class:`RuleSet` bundles the dice, the number of
rolls a turn and the score rows; the env, the vector env, the solver and the agents read everything
from it, so a rule variant (other straights, a bonus row, 13 rows, other dice) is a new ``RuleSet``
and nothing else. The default, :data:`YACHT`, is the project's rule book (``RULES.md``).
"""

from __future__ import annotations

import functools
import numbers
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Sequence

import numpy as np

from yacht_env.dice import DiceSpace

# A scoring rule sees the sorted dice and the face counts (index f counts face f+1).
ScoreRule = Callable[[tuple[int, ...], tuple[int, ...]], int]


def cached_per_rules(function):
    """Memoize ``function(rules, *args)`` per rule set: tables are built once, whoever asks."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(function)
    def cached(rules, *args):
        per_rules = cache.setdefault(rules, {})
        if args not in per_rules:
            per_rules[args] = function(rules, *args)
        return per_rules[args]

    return cached


# -- scoring rules, pure helpers ---------------------------------------------------------------


def upper(face: int) -> ScoreRule:
    """The total of the dice showing ``face``."""
    return lambda dice, counts: face * counts[face - 1]


def total(dice: tuple[int, ...], counts: tuple[int, ...]) -> int:
    return sum(dice)


def of_a_kind(n: int) -> ScoreRule:
    """The total of all dice when at least ``n`` show the same face, else 0."""
    return lambda dice, counts: sum(dice) if max(counts) >= n else 0


def full_house(dice: tuple[int, ...], counts: tuple[int, ...]) -> int:
    """The total of all dice for three of one face and two of a *different* face, else 0."""
    return sum(dice) if sorted(c for c in counts if c) == [2, 3] else 0


def straight(faces: Sequence[int], points: int) -> ScoreRule:
    """``points`` when the dice show exactly ``faces`` (in any order), else 0."""
    wanted = tuple(sorted(faces))
    return lambda dice, counts: points if dice == wanted else 0


def all_alike(points: int) -> ScoreRule:
    """``points`` when every die shows the same face, else 0."""
    return lambda dice, counts: points if max(counts) == len(dice) else 0


@dataclass(frozen=True)
class Category:
    """One row of the score sheet."""

    name: str
    rule: ScoreRule = field(compare=False, repr=False)
    label: str = ""

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").title()


@dataclass(frozen=True, eq=False)
class RuleSet:
    """A complete rule set: dice, rolls per turn and the score rows (one turn per row)."""

    name: str
    categories: tuple[Category, ...]
    num_dice: int = 5
    num_faces: int = 6
    rolls_per_turn: int = 3

    def __post_init__(self):
        names = [c.name for c in self.categories]
        if len(set(names)) != len(names):
            raise ValueError(f"category names must be unique, got {names}")
        if self.rolls_per_turn < 1:
            raise ValueError(f"rolls_per_turn must be at least 1, got {self.rolls_per_turn}")

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        # Immutable, and compared by identity: a copy (gymnasium deep-copies env kwargs) is the original.
        return self

    def __reduce__(self):
        # The rows' scoring rules are closures, which pickle cannot copy: a built-in rule set travels
        # by name and arrives as the same object (so envs pickle); another one cannot be pickled.
        if BUILT_IN_RULE_SETS.get(self.name) is self:
            return (built_in_rule_set, (self.name,))
        raise TypeError(f"rule set {self.name!r} is not built in ({', '.join(BUILT_IN_RULE_SETS)}): its scoring rules cannot be pickled")

    # -- shape of the game ---------------------------------------------------------------------

    @property
    def category_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.categories)

    @property
    def num_categories(self) -> int:
        return len(self.categories)

    @property
    def num_turns(self) -> int:
        return len(self.categories)

    @property
    def all_open(self) -> int:
        """Open-category bit set with every row open (bit c <-> category c)."""
        return (1 << self.num_categories) - 1

    @cached_property
    def dice(self) -> DiceSpace:
        return DiceSpace(self.num_dice, self.num_faces)

    @cached_property
    def category_index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.category_names)}

    # -- scoring -------------------------------------------------------------------------------

    @cached_property
    def score_table(self) -> np.ndarray:
        """Points of every hand in every row, shape (num_hands, num_categories), int16."""
        table = np.empty((self.dice.num_hands, self.num_categories), dtype=np.int16)
        for h, (hand, counts) in enumerate(zip(self.dice.hands, self.dice.hand_counts)):
            dice = tuple(int(d) for d in hand)
            counts = tuple(int(c) for c in counts)
            for c, category in enumerate(self.categories):
                table[h, c] = category.rule(dice, counts)
        table.setflags(write=False)
        return table

    def check_dice(self, dice) -> tuple[int, ...]:
        """Validate dice given in any order; return them sorted, or raise ``ValueError`` naming the problem."""
        if isinstance(dice, (str, bytes)) or not isinstance(dice, (Sequence, np.ndarray)):
            raise ValueError(f"dice must be a sequence of {self.num_dice} integers in 1..{self.num_faces}, got {dice!r}")
        if isinstance(dice, np.ndarray) and dice.ndim != 1:
            raise ValueError(f"dice must be a sequence of {self.num_dice} integers in 1..{self.num_faces}, got an array of shape {dice.shape}: {dice!r}")
        values = list(dice.tolist() if isinstance(dice, np.ndarray) else dice)
        if len(values) != self.num_dice:
            raise ValueError(f"dice must be {self.num_dice} integers in 1..{self.num_faces}, got {len(values)}: {dice!r}")
        for value in values:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= self.num_faces:
                raise ValueError(f"die {value!r} in {dice!r} is not an integer in 1..{self.num_faces}")
        return tuple(sorted(int(v) for v in values))

    def check_category(self, category) -> int:
        """Category given as a name or an index -> index, or ``ValueError`` naming the allowed values."""
        if isinstance(category, str):
            if category in self.category_index:
                return self.category_index[category]
            raise ValueError(f"unknown category {category!r}; expected one of {', '.join(self.category_names)}")
        if isinstance(category, numbers.Integral) and not isinstance(category, bool):
            if 0 <= category < self.num_categories:
                return int(category)
            raise ValueError(f"category index {category!r} is out of range 0..{self.num_categories - 1}")
        raise ValueError(f"category must be a name or an index, got {category!r}")

    def score(self, dice, category) -> int:
        """Points that ``dice`` (any order) score in ``category`` (name or index)."""
        hand = self.dice.hand_index[self.check_dice(dice)]
        return int(self.score_table[hand, self.check_category(category)])

    def hand(self, dice) -> int:
        """Hand index of ``dice`` given in any order."""
        return self.dice.hand_index[self.check_dice(dice)]


YACHT = RuleSet(
    name="yacht",
    categories=(
        Category("ones", upper(1)),
        Category("twos", upper(2)),
        Category("threes", upper(3)),
        Category("fours", upper(4)),
        Category("fives", upper(5)),
        Category("sixes", upper(6)),
        Category("choice", total),
        Category("four_of_a_kind", of_a_kind(4), "Four of a Kind"),
        Category("full_house", full_house),
        Category("little_straight", straight((1, 2, 3, 4, 5), 30)),
        Category("big_straight", straight((2, 3, 4, 5, 6), 30)),
        Category("yacht", all_alike(50)),
    ),
)
"""The rules of ``RULES.md``; category order matches OpenSpiel's ``yacht``."""

CATEGORIES: tuple[str, ...] = YACHT.category_names


BUILT_IN_RULE_SETS = {YACHT.name: YACHT}


def built_in_rule_set(name: str) -> RuleSet:
    return BUILT_IN_RULE_SETS[name]


def score(dice, category, rules: RuleSet | None = None) -> int:
    """Points that ``dice`` (five integers 1..6, any order) score in ``category`` (name or index)."""
    return (rules or YACHT).score(dice, category)
