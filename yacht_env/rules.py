"""The rules of Yacht and its family as data: score rows, a rule set, and the precomputed hand scores.

This module knows nothing about environments. A :class:`RuleSet` bundles the dice, the number of
rolls a turn, the score rows and the rules that tie rows together (the upper bonus, the
extra-Yahtzee bonus, the joker rule); the env, the vector env, the solver and the agents read
everything from it, so a rule variant is a new ``RuleSet`` and nothing else. The default,
:data:`YACHT`, is the project's rule book (``RULES.md``); :data:`RULE_SETS` names the Yahtzee and
Yatzy variants, and :func:`rule_set` looks one up by name.

The score sheet of a game in progress is a :class:`Sheet`: the open rows, the upper subtotal and
what the Yahtzee box holds. :meth:`RuleSet.scoring_options` says which rows a hand may be scored
in and whether at joker values; :meth:`RuleSet.score_on` scores one and returns the points, the
bonuses earned and the sheet after. Both rest on pure numba functions (:func:`placement`,
:func:`upper_bonus`, :func:`extra_yahtzee_bonus`) that the solver calls in its inner loop, so each
rule is written once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import numbers
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Sequence, TypeVar, cast

import numpy as np
from numba import njit

from yacht_env.dice import DiceSpace


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


# A scoring rule sees the sorted dice and the face counts (index f counts face f+1).
ScoreRule = Callable[[tuple[int, ...], tuple[int, ...]], int]


_Function = TypeVar("_Function", bound=Callable[..., Any])


def cached_per_rules(function: _Function) -> _Function:
    """Memoize ``function(rules, *args)`` per rule set: tables are built once, whoever asks."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(function)
    def cached(rules, *args):
        per_rules = cache.setdefault(rules, {})
        if args not in per_rules:
            per_rules[args] = function(rules, *args)
        return per_rules[args]

    return cast(_Function, cached)  # same arguments and result as ``function``


# -- scoring rules, pure helpers ---------------------------------------------------------------


def upper(face: int) -> ScoreRule:
    """The total of the dice showing ``face``."""
    return lambda dice, counts: face * counts[face - 1]


def total(dice: tuple[int, ...], counts: tuple[int, ...]) -> int:
    """The sum of the dice."""
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


def of_a_kind_matching(n: int) -> ScoreRule:
    """``n`` times the highest face that at least ``n`` dice show (only the matching dice count), else 0.

    ``of_a_kind_matching(2)`` is Yatzy's One Pair; ``of_a_kind_matching(4)`` is a Four of a Kind
    that scores the four matching dice.
    """
    return lambda dice, counts: max((n * (f + 1) for f, c in enumerate(counts) if c >= n), default=0)


def two_pairs(dice: tuple[int, ...], counts: tuple[int, ...]) -> int:
    """Two dice each of the two highest *different* faces that show at least twice, else 0.

    Four alike is not two pairs; a full house is (3-3-3-5-5 scores 16).
    """
    pairs = [f + 1 for f, c in enumerate(counts) if c >= 2]
    return 2 * (pairs[-1] + pairs[-2]) if len(pairs) >= 2 else 0


def full_house_fixed(points: int) -> ScoreRule:
    """``points`` for three of one face and two of a *different* face, else 0 (five alike is not one)."""
    return lambda dice, counts: points if sorted(c for c in counts if c) == [2, 3] else 0


def run(length: int, points: int) -> ScoreRule:
    """``points`` when the dice include ``length`` consecutive faces (any others beside them), else 0."""

    def rule(dice, counts):
        streak = 0
        for c in counts:
            streak = streak + 1 if c else 0
            if streak >= length:
                return points
        return 0

    return rule


@dataclass(frozen=True)
class Category:
    """One row of the score sheet.

    ``upper``: the row counts toward the upper bonus (:attr:`RuleSet.bonus_threshold`); under a
    joker rule, the upper row of a face is the upper row that scores five of that face.
    ``joker_points``: what the row pays for a Yahtzee played as a joker (25 for Yahtzee's Full
    House, 30 and 40 for its straights); ``None`` scores the dice as usual.
    """

    name: str
    rule: ScoreRule = field(compare=False, repr=False)
    label: str = ""
    upper: bool = False
    joker_points: int | None = None

    @property
    def title(self) -> str:
        """The category's name as shown: its label, or its name in title case."""
        return self.label or self.name.replace("_", " ").title()


# -- rules that tie rows together, as pure functions the solver's kernels call too --------------

JOKER_MODES: tuple[str, ...] = ("none", "free", "forced")
"""Joker rules, in the order of their codes (``JOKER_MODES.index(mode)``), see :func:`placement`."""
JOKER_NONE, JOKER_FREE, JOKER_FORCED = range(3)


@njit(cache=True)
def placement(open_bits, alike, face_row, yahtzee_row, lower_bits, joker_mode):
    """Rows a hand may be scored in, and whether at joker values: ``(legal_bits, joker)``.

    ``alike``: every die shows one face; ``face_row``: index of the upper row of that face (-1 if
    none); ``yahtzee_row``: index of the Yahtzee row (-1 if none); ``lower_bits``: the rows that
    are not upper rows. Only a Yahtzee rolled once the Yahtzee box is filled (with any score) is
    a joker; every other hand may go in any open row at its usual points. A joker:

    - ``free`` (Verhoeff's rule): any open row; joker values once the upper row of its face is
      filled too, usual points while that row is open.
    - ``forced`` (the official rule): the upper row of its face if open (usual points); else any
      open lower row at joker values; else any open upper row (usual points, that is 0).
    - ``none``: any open row at its usual points.
    """
    if not alike or yahtzee_row < 0 or joker_mode == 0 or (open_bits >> yahtzee_row) & 1:
        return open_bits, False
    face_open = face_row >= 0 and (open_bits >> face_row) & 1 == 1
    if joker_mode == 1:
        return open_bits, not face_open
    if face_open:
        return 1 << face_row, False
    lower_open = open_bits & lower_bits
    if lower_open:
        return lower_open, True
    return open_bits, False


@njit(cache=True)
def upper_bonus(upper_before, points, threshold, bonus_points):
    """The upper bonus earned by writing ``points`` in an upper row on a subtotal of ``upper_before``.

    ``bonus_points`` when the subtotal reaches ``threshold`` with this score, else 0. The subtotal
    may be given capped at ``threshold`` (all the solver keeps); the answer is the same.
    """
    if bonus_points > 0 and upper_before < threshold <= upper_before + points:
        return bonus_points
    return 0


@njit(cache=True)
def extra_yahtzee_bonus(alike, yahtzee_box_full, bonus):
    """The extra-Yahtzee bonus of scoring a hand: ``bonus`` for a Yahtzee (``alike``), else 0.

    Paid while the Yahtzee box holds its full points (``yahtzee_box_full``, 50 in Yahtzee),
    wherever the hand is scored; a Yahtzee box filled with 0 earns no bonus.
    """
    return bonus if alike and yahtzee_box_full else 0


@njit(cache=True)
def _jokers(hands, open_bits, alike_hands, face_rows, yahtzee_row, lower_bits, joker_mode, out):
    """``out[i]``: whether ``hands[i]`` scores at joker values with ``open_bits[i]`` open (see :func:`placement`)."""
    for i in range(hands.shape[0]):
        hand = hands[i]
        _, out[i] = placement(open_bits[i], alike_hands[hand], face_rows[hand], yahtzee_row, lower_bits, joker_mode)


@dataclass(frozen=True)
class Sheet:
    """What of a score sheet the rules look at: the open rows, the upper subtotal, the Yahtzee box.

    ``open_bits``: bit ``c`` set while row ``c`` is open. ``upper_total``: the points written in
    upper rows so far (not capped; the solver caps it at the bonus threshold, beyond which nothing
    depends on it). ``yahtzee_box``: the points written in the Yahtzee row (50 or 0), ``None``
    while it is open or when the rules have no Yahtzee row.
    """

    open_bits: int
    upper_total: int = 0
    yahtzee_box: int | None = None


@dataclass(frozen=True)
class ScoreResult:
    """The outcome of scoring one hand in one row (see :meth:`RuleSet.score_on`).

    ``reward`` = ``points + upper_bonus + yahtzee_bonus`` is what the score sheet's total gains.
    """

    points: int
    upper_bonus: int
    yahtzee_bonus: int
    joker: bool
    sheet: Sheet

    @property
    def reward(self) -> int:
        """What the sheet's total gains."""
        return self.points + self.upper_bonus + self.yahtzee_bonus


@dataclass(frozen=True, eq=False)
class RuleSet:
    """A complete rule set: dice, rolls per turn, the score rows (one turn per row) and the bonuses.

    - ``bonus_threshold``, ``bonus_points``: ``bonus_points`` once the rows marked ``upper`` add
      up to ``bonus_threshold`` or more (Yahtzee: 35 at 63; 0 and 0 for no upper bonus).
    - ``yahtzee_row``: the row of five alike whose box the extra-Yahtzee bonus and the joker rule
      look at (``None`` when neither applies).
    - ``yahtzee_bonus``: points for every further Yahtzee rolled while that box holds its full
      points (Yahtzee: 100), wherever the hand is scored.
    - ``joker``: ``"none"``, ``"free"`` or ``"forced"``, see :func:`placement`.
    - ``title``: what people call the rule set (the pages, the reports); its ``name`` when not given.

    Without any of these (as in :data:`YACHT`), rows score independently of each other and the
    state of a sheet is its open rows alone (:attr:`has_bonus_or_joker` is False).
    """

    name: str
    categories: tuple[Category, ...]
    num_dice: int = 5
    num_faces: int = 6
    rolls_per_turn: int = 3
    bonus_threshold: int = 0
    bonus_points: int = 0
    yahtzee_row: str | None = None
    yahtzee_bonus: int = 0
    joker: str = "none"
    title: str = ""

    def __post_init__(self):
        if not isinstance(self.title, str):
            raise ValueError(f"title must be a string, got {self.title!r}")
        if not self.title:
            object.__setattr__(self, "title", self.name)  # frozen: the default title is only known here
        names = [c.name for c in self.categories]
        if len(set(names)) != len(names):
            raise ValueError(f"category names must be unique, got {names}")
        if self.rolls_per_turn < 1:
            raise ValueError(f"rolls_per_turn must be at least 1, got {self.rolls_per_turn}")
        for field_name in ("bonus_threshold", "bonus_points", "yahtzee_bonus"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise ValueError(f"{field_name} must be an integer >= 0, got {value!r}")
        if (self.bonus_points > 0) != (self.bonus_threshold > 0):
            raise ValueError(
                f"an upper bonus needs both bonus_threshold and bonus_points above 0 (or both 0), "
                f"got {self.bonus_threshold} and {self.bonus_points}"
            )
        if self.bonus_points > 0 and not any(c.upper for c in self.categories):
            raise ValueError("an upper bonus needs at least one row with upper=True")
        if self.joker not in JOKER_MODES:
            raise ValueError(f"unknown joker rule {self.joker!r}; expected one of {', '.join(JOKER_MODES)}")
        if self.yahtzee_row is not None and self.yahtzee_row not in names:
            raise ValueError(f"yahtzee_row {self.yahtzee_row!r} is not a row; expected one of {', '.join(names)}")
        if self.yahtzee_row is None and (self.yahtzee_bonus > 0 or self.joker != "none"):
            raise ValueError("an extra-Yahtzee bonus or a joker rule needs yahtzee_row, the row of five alike")

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
        raise TypeError(
            f"rule set {self.name!r} is not built in ({', '.join(BUILT_IN_RULE_SETS)}): its scoring rules cannot be pickled"
        )

    # -- shape of the game ---------------------------------------------------------------------

    @property
    def category_names(self) -> tuple[str, ...]:
        """The names of the categories, in order."""
        return tuple(c.name for c in self.categories)

    @property
    def num_rows(self) -> int:
        """The number of categories."""
        return len(self.categories)

    @property
    def num_turns(self) -> int:
        """The number of turns in a game: one per category."""
        return len(self.categories)

    @property
    def all_open(self) -> int:
        """Open-category bit set with every row open (bit c <-> category c)."""
        return (1 << self.num_rows) - 1

    @cached_property
    def dice(self) -> DiceSpace:
        """The dice space of these rules."""
        return DiceSpace(self.num_dice, self.num_faces)

    @cached_property
    def category_index(self) -> dict[str, int]:
        """The index of each category, by name."""
        return {name: i for i, name in enumerate(self.category_names)}

    # -- scoring -------------------------------------------------------------------------------

    @cached_property
    def hand_scores(self) -> np.ndarray:
        """Points of every hand in every row, shape (num_hands, num_rows), int16."""
        table = np.empty((self.dice.num_hands, self.num_rows), dtype=np.int16)
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
            raise ValueError(
                f"dice must be a sequence of {self.num_dice} integers in 1..{self.num_faces}, "
                f"got an array of shape {dice.shape}: {dice!r}"
            )
        values = list(dice.tolist() if isinstance(dice, np.ndarray) else dice)
        if len(values) != self.num_dice:
            raise ValueError(f"dice must be {self.num_dice} integers in 1..{self.num_faces}, got {len(values)}: {dice!r}")
        for value in values:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= int(value) <= self.num_faces:
                raise ValueError(f"die {value!r} in {dice!r} is not an integer in 1..{self.num_faces}")
        return tuple(sorted(int(v) for v in values))

    def check_category(self, category) -> int:
        """Category given as a name or an index -> index, or ``ValueError`` naming the allowed values."""
        if isinstance(category, str):
            if category in self.category_index:
                return self.category_index[category]
            raise ValueError(f"unknown category {category!r}; expected one of {', '.join(self.category_names)}")
        if isinstance(category, numbers.Integral) and not isinstance(category, bool):
            if 0 <= int(category) < self.num_rows:
                return int(category)
            raise ValueError(f"category index {category!r} is out of range 0..{self.num_rows - 1}")
        raise ValueError(f"category must be a name or an index, got {category!r}")

    def score(self, dice, category) -> int:
        """Points that ``dice`` (any order) score in ``category`` (name or index)."""
        hand = self.dice.hand_index[self.check_dice(dice)]
        return int(self.hand_scores[hand, self.check_category(category)])

    def hand(self, dice) -> int:
        """Hand index of ``dice`` given in any order."""
        return self.dice.hand_index[self.check_dice(dice)]

    # -- rules that tie rows together (bonuses, jokers) ------------------------------------------

    @property
    def has_bonus_or_joker(self) -> bool:
        """True when a score depends on more than the hand and the row (a bonus or a joker rule)."""
        return self.bonus_points > 0 or self.yahtzee_bonus > 0 or self.joker != "none"

    @property
    def upper_cap(self) -> int:
        """Largest upper subtotal the solver tells apart: the threshold (0 without an upper bonus)."""
        return self.bonus_threshold if self.bonus_points > 0 else 0

    @property
    def tracks_yahtzee_box(self) -> bool:
        """True when whether the Yahtzee box holds its full points matters (an extra-Yahtzee bonus)."""
        return self.yahtzee_bonus > 0

    @cached_property
    def upper_bits(self) -> int:
        """Bit set of the rows that count toward the upper bonus."""
        return sum(1 << c for c, category in enumerate(self.categories) if category.upper)

    @property
    def lower_bits(self) -> int:
        """Bit set of the other rows."""
        return self.all_open & ~self.upper_bits

    @property
    def yahtzee_row_index(self) -> int:
        """Index of :attr:`yahtzee_row`, or -1."""
        return -1 if self.yahtzee_row is None else self.category_index[self.yahtzee_row]

    @property
    def joker_mode(self) -> int:
        """:attr:`joker` as its code for :func:`placement`."""
        return JOKER_MODES.index(self.joker)

    @cached_property
    def alike_hands(self) -> np.ndarray:
        """Whether every die of a hand shows one face (a Yahtzee), shape (num_hands,) bool."""
        return _read_only(self.dice.hand_counts.max(axis=1) == self.num_dice)

    @cached_property
    def face_rows(self) -> np.ndarray:
        """For a hand of five alike, the index of the upper row of its face; -1 for other hands.

        The upper row of face ``f`` is the one upper row that scores points for all dice showing
        ``f``; a joker rule refuses a rule set where that is not one row (or none).
        """
        rows = np.full(self.dice.num_hands, -1, dtype=np.int64)
        upper = [c for c, category in enumerate(self.categories) if category.upper]
        for h in np.flatnonzero(self.alike_hands):
            paying = [c for c in upper if self.hand_scores[h, c] > 0]
            if len(paying) > 1 and self.joker != "none":
                names = [self.category_names[c] for c in paying]
                raise ValueError(f"the joker rule needs one upper row per face; {names} all pay for {self.dice.hands[h]}")
            rows[h] = paying[0] if len(paying) == 1 else -1
        return _read_only(rows)

    @cached_property
    def joker_hand_scores(self) -> np.ndarray:
        """Points of every hand in every row when played as a joker, shape (num_hands, num_rows), int16.

        A row's ``joker_points`` for hands of five alike, where the row has them; the usual points
        everywhere else. Which table applies is :meth:`scoring_options`'s ``joker``.
        """
        table = self.hand_scores.copy()
        for c, category in enumerate(self.categories):
            if category.joker_points is not None:
                table[self.alike_hands, c] = category.joker_points
        return _read_only(table)

    def new_sheet(self) -> Sheet:
        """The empty score sheet: every row open."""
        return Sheet(self.all_open, 0, None)

    def scoring_options(self, dice, open_bits: int) -> tuple[int, bool]:
        """Rows that ``dice`` (or a hand index) may be scored in, as a bit set, and whether at joker values.

        ``open_bits`` must have at least one row open. See :func:`placement` for the joker rules.
        """
        hand = self._hand_of(dice)
        if not 0 < open_bits <= self.all_open:
            raise ValueError(f"open_bits {open_bits!r} is out of range 1..{self.all_open}")
        legal, joker = placement(
            int(open_bits),
            bool(self.alike_hands[hand]),
            int(self.face_rows[hand]),
            self.yahtzee_row_index,
            self.lower_bits,
            self.joker_mode,
        )
        return int(legal), bool(joker)

    def scores_now(self, dice, open_bits: int) -> dict[int, int]:
        """What ``dice`` (or a hand index) would write in each row they may go in now, by row index.

        At joker values for a joker; under the forced joker rule only the rows it may go in; empty
        when no row is open. What every "now" column (terminal, picture, browser) shows.
        """
        if not open_bits:
            return {}
        hand = self._hand_of(dice)
        rows, joker = self.scoring_options(hand, open_bits)
        scores = (self.joker_hand_scores if joker else self.hand_scores)[hand]
        return {c: int(scores[c]) for c in range(self.num_rows) if rows >> c & 1}

    def joker_now(self, hands, open_bits) -> np.ndarray:
        """Whether each hand would score at joker values now, given the open rows: (N,) bool.

        The vectorized ``joker`` of :meth:`scoring_options` (all False without a joker rule).
        """
        hands = np.asarray(hands, dtype=np.int64).reshape(-1)
        open_bits = np.asarray(open_bits, dtype=np.int64).reshape(-1)
        jokers = np.zeros(hands.shape, dtype=bool)
        if self.joker != "none":
            _jokers(
                hands,
                open_bits,
                self.alike_hands,
                self.face_rows,
                self.yahtzee_row_index,
                self.lower_bits,
                self.joker_mode,
                jokers,
            )
        return jokers

    def score_on(self, sheet: Sheet, dice, category) -> ScoreResult:
        """Score ``dice`` (or a hand index) in ``category`` on ``sheet``: points, bonuses and the sheet after.

        Raises ``ValueError`` when the row is closed or the joker rule forbids it.
        """
        hand = self._hand_of(dice)
        row = self.check_category(category)
        legal, joker = self.scoring_options(hand, sheet.open_bits)
        if not legal >> row & 1:
            allowed = [self.category_names[c] for c in range(self.num_rows) if legal >> c & 1]
            raise ValueError(f"{self.category_names[row]!r} cannot be scored now; allowed: {', '.join(allowed) or 'none'}")
        points = int((self.joker_hand_scores if joker else self.hand_scores)[hand, row])
        alike = bool(self.alike_hands[hand])
        # The box is full when it holds points: a 0 (or a custom row's penalty) written there earns no bonus,
        # as in the game's transition and the solver.
        box_full = sheet.yahtzee_box is not None and sheet.yahtzee_box > 0
        yahtzee_bonus = int(extra_yahtzee_bonus(alike, box_full, self.yahtzee_bonus))
        bonus = 0
        upper_total = sheet.upper_total
        if self.categories[row].upper:
            bonus = int(upper_bonus(upper_total, points, self.bonus_threshold, self.bonus_points))
            upper_total += points
        yahtzee_box = points if row == self.yahtzee_row_index else sheet.yahtzee_box
        after = Sheet(sheet.open_bits & ~(1 << row), upper_total, yahtzee_box)
        return ScoreResult(points, bonus, yahtzee_bonus, joker, after)

    def _hand_of(self, dice) -> int:
        if isinstance(dice, numbers.Integral) and not isinstance(dice, bool):
            if not 0 <= int(dice) < self.dice.num_hands:
                raise ValueError(f"hand index {dice!r} is out of range 0..{self.dice.num_hands - 1}")
            return int(dice)
        return self.hand(dice)

    @cached_property
    def fingerprint(self) -> str:
        """A stable hash of what the rules *do* (dice, rolls, scores, bonuses, jokers), for on-disk caches.

        Two rule sets that score every hand alike share it, whatever their names or scoring code.
        """
        description = {
            "dice": [self.num_dice, self.num_faces, self.rolls_per_turn],
            "upper": [c.upper for c in self.categories],
            "bonus": [self.bonus_threshold, self.bonus_points, self.yahtzee_row_index, self.yahtzee_bonus, self.joker],
        }
        digest = hashlib.sha256(json.dumps(description, sort_keys=True).encode())
        digest.update(np.ascontiguousarray(self.hand_scores, dtype="<i2").tobytes())
        digest.update(np.ascontiguousarray(self.joker_hand_scores, dtype="<i2").tobytes())
        return digest.hexdigest()[:32]


UPPER_ROWS: tuple[Category, ...] = tuple(
    Category(name, upper(face), upper=True)
    for face, name in enumerate(("ones", "twos", "threes", "fours", "fives", "sixes"), start=1)
)
"""The six rows that score one face each, shared by every rule set of the family."""

YACHT = RuleSet(
    name="yacht",
    title="Yacht",
    categories=(
        *UPPER_ROWS,
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

YACHT_EXERCISM = RuleSet(
    name="yacht_exercism",
    title="Yacht (Exercism: four of a kind scores four dice)",
    categories=tuple(
        Category("four_of_a_kind", of_a_kind_matching(4), "Four of a Kind") if c.name == "four_of_a_kind" else c
        for c in YACHT.categories
    ),
)
"""Exercism's Yacht: as :data:`YACHT`, but Four of a Kind scores only the four matching dice."""

_YAHTZEE_ROWS = (
    *UPPER_ROWS,
    Category("three_of_a_kind", of_a_kind(3), "Three of a Kind"),
    Category("four_of_a_kind", of_a_kind(4), "Four of a Kind"),
    Category("full_house", full_house_fixed(25), joker_points=25),
    Category("small_straight", run(4, 30), joker_points=30),
    Category("large_straight", run(5, 40), joker_points=40),
    Category("yahtzee", all_alike(50)),
    Category("chance", total),
)


def _yahtzee(name: str, title: str, yahtzee_bonus: int, joker: str) -> RuleSet:
    return RuleSet(
        name=name,
        title=title,
        categories=_YAHTZEE_ROWS,
        bonus_threshold=63,
        bonus_points=35,
        yahtzee_row="yahtzee",
        yahtzee_bonus=yahtzee_bonus,
        joker=joker,
    )


YAHTZEE = _yahtzee("yahtzee", "Yahtzee", 100, "free")
"""Yahtzee: 13 rows, 35 bonus at 63, 100 per extra Yahtzee, Verhoeff's free-choice joker."""
YAHTZEE_FORCED_JOKER = _yahtzee("yahtzee_forced_joker", "Yahtzee (official forced joker)", 100, "forced")
"""Yahtzee with the official (forced) joker placement."""
YAHTZEE_NO_JOKER = _yahtzee("yahtzee_no_joker", "Yahtzee (no joker)", 100, "none")
"""Yahtzee with the extra-Yahtzee bonus but no joker."""
YAHTZEE_NO_BONUS = _yahtzee("yahtzee_no_bonus", "Yahtzee (no Yahtzee bonus, no joker)", 0, "none")
"""Yahtzee with neither the extra-Yahtzee bonus nor a joker (the upper bonus stays)."""

YATZY = RuleSet(
    name="yatzy",
    title="Yatzy (Scandinavian)",
    categories=(
        *UPPER_ROWS,
        Category("one_pair", of_a_kind_matching(2)),
        Category("two_pairs", two_pairs),
        Category("three_of_a_kind", of_a_kind_matching(3), "Three of a Kind"),
        Category("four_of_a_kind", of_a_kind_matching(4), "Four of a Kind"),
        Category("small_straight", straight((1, 2, 3, 4, 5), 15)),
        Category("large_straight", straight((2, 3, 4, 5, 6), 20)),
        Category("full_house", full_house),
        Category("chance", total),
        Category("yatzy", all_alike(50)),
    ),
    bonus_threshold=63,
    bonus_points=50,
)
"""Scandinavian Yatzy: 15 rows, n of a kind scores the matching dice, 50 bonus at 63."""

RULE_SETS: dict[str, RuleSet] = {
    rules.name: rules
    for rules in (YACHT, YACHT_EXERCISM, YAHTZEE, YAHTZEE_FORCED_JOKER, YAHTZEE_NO_JOKER, YAHTZEE_NO_BONUS, YATZY)
}
"""The named rule sets, by name: ``rules="yahtzee"`` wherever a rule set is accepted."""


def rule_set(rules: str | RuleSet | None = None) -> RuleSet:
    """A rule set given by name (a key of :data:`RULE_SETS`) or as a ``RuleSet``; ``None`` is :data:`YACHT`."""
    if rules is None:
        return YACHT
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, str) and rules in RULE_SETS:
        return RULE_SETS[rules]
    raise ValueError(f"unknown rule set {rules!r}; expected a RuleSet or one of {', '.join(RULE_SETS)}")


BUILT_IN_RULE_SETS = RULE_SETS


def built_in_rule_set(name: str) -> RuleSet:
    """The built-in rule set called ``name``."""
    return BUILT_IN_RULE_SETS[name]


def score(dice, category, rules: RuleSet | None = None) -> int:
    """Points that ``dice`` (five integers 1..6, any order) score in ``category`` (name or index)."""
    return (rules or YACHT).score(dice, category)
