"""Observation encodings shared by the single, vector and multi-player envs.

A game position is ``(hand, rolls_left, open_bits)``: the hand index of the sorted dice, the rolls
left this turn, and a bit set of open categories (bit ``c`` <-> category ``c``). An encoding turns
positions into observations, one at a time or batched, and back again (policies read observations).

=========  =====================================================================================
name       layout (default rules: 5 dice, 6 faces, 12 categories)
=========  =====================================================================================
flat       ``Box(18,)`` float32: sorted dice (1..6) x5, rolls left (0..2), open categories (0/1) x12
counts     ``Box(19,)`` float32: how many dice show each face 1..6, rolls left, open categories x12
onehot     ``Box(45,)`` float32: one-hot face of each sorted die (5x6), one-hot rolls left (3),
           open categories x12
features   ``Box(63,)`` float32, for learning: the onehot dice (30), face counts / 5 (6), one-hot
           rolls left (3), open categories (12), and what the dice would score in each open
           category now, / 50 (12; 0 for filled rows)
dict       ``Dict``: ``dice`` Box(1..6, (5,), int8) sorted, ``rolls_left`` Discrete(3),
           ``open_categories`` MultiBinary(12)
=========  =====================================================================================

The Box encodings are a concatenation of three precomputed parts (hand, rolls left, open set),
so encoding is three table lookups whichever env asks.

Rules that tie rows together (an upper bonus, an extra-Yahtzee bonus; ``rules.has_bonus_or_joker``)
make a decision depend on more of the sheet than its open rows. Their observations end with a
sheet part holding what the rules have, in this order:

- the upper subtotal, capped at the bonus threshold (past it nothing depends on it), and whether
  the bonus is reached (0/1): only with an upper bonus;
- whether the Yahtzee box holds its full points, so that another Yahtzee earns the extra bonus
  (0/1): only with an extra-Yahtzee bonus.

In ``flat`` and ``counts`` the subtotal is the plain number (the Box's high grows to the
threshold); in ``onehot`` and ``features`` it is divided by the threshold; ``dict`` gains the keys
``upper_total``, ``bonus_reached`` and ``yahtzee_box_full``. Whether the Yahtzee box is filled at
all (what a joker rule looks at) is its open-row flag. Rules without sheet state keep the layouts
of the table above.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from typing_extensions import override

from yacht_env.rules import RuleSet, cached_per_rules


def _open_table(rules: RuleSet) -> np.ndarray:
    bits = np.arange(1 << rules.num_rows)[:, None] >> np.arange(rules.num_rows)
    return bits & 1


class Encoding:
    """Base of the encodings; subclasses fill the three part tables.

    A position is ``(hand, rolls_left, open_bits)``, plus, for rules with sheet state, the upper
    subtotal (any value; encodings cap it) and whether the Yahtzee box holds its full points
    (``upper_totals``, ``yahtzee_full``; ignored by rules without sheet state).
    """

    name = ""
    space: spaces.Space[Any]  # the observation space; each subclass sets it in __init__

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.open_part = _open_table(rules).astype(np.int8)
        self.has_upper = rules.bonus_points > 0
        self.has_yahtzee = rules.tracks_yahtzee_box
        self.sheet_width = 2 * self.has_upper + self.has_yahtzee

    def encode(self, hand: int, rolls_left: int, open_bits: int, upper_total: int = 0, yahtzee_full: int = 0):
        """The observation of one position (hand index, rolls left, open-row bit set, sheet state)."""
        raise NotImplementedError

    def encode_batch(self, hands, rolls_left, open_bits, upper_totals=None, yahtzee_full=None, out=None):
        """The observations of N positions, batched along a first axis (each argument of shape (N,))."""
        raise NotImplementedError

    def decode_batch(self, obs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Observations -> (hand indices, rolls left, open bit sets), each shape (N,).

        Dice that are no hand of the rules (which only ``flat`` and ``counts`` can hold) raise ``ValueError``
        naming the observation.
        """
        raise NotImplementedError

    def decode_sheet_batch(self, obs) -> tuple[np.ndarray, np.ndarray]:
        """Observations -> (upper subtotals capped at the threshold, Yahtzee box full 0/1), each (N,) int64.

        Zeros for what the rules do not have.
        """
        raise NotImplementedError

    def decode_positions(self, obs) -> tuple[np.ndarray, ...]:
        """Observations -> (hands, rolls left, open bits, upper subtotals, Yahtzee box full): all a policy may read."""
        return (*self.decode_batch(obs), *self.decode_sheet_batch(obs))

    def sheet_part(self, upper_totals, yahtzee_full, n: int, scale: bool) -> np.ndarray:
        """The sheet part of N observations, (N, sheet_width) float32 (see the module docstring)."""
        part = np.empty((n, self.sheet_width), dtype=np.float32)
        column = 0
        if self.has_upper:
            threshold = self.rules.bonus_threshold
            totals = np.zeros(n, dtype=np.int64) if upper_totals is None else np.asarray(upper_totals)
            upper = np.minimum(totals, threshold)
            part[:, 0] = upper / threshold if scale else upper
            part[:, 1] = totals >= threshold
            column = 2
        if self.has_yahtzee:
            part[:, column] = 0 if yahtzee_full is None else np.asarray(yahtzee_full) > 0
        return part

    def _decode_sheet_part(self, part: np.ndarray, scale: bool) -> tuple[np.ndarray, np.ndarray]:
        n = len(part)
        upper = np.zeros(n, dtype=np.int64)
        full = np.zeros(n, dtype=np.int64)
        if self.has_upper:
            values = part[:, 0] * self.rules.bonus_threshold if scale else part[:, 0]
            upper = np.rint(values).astype(np.int64)
        if self.has_yahtzee:
            full = (part[:, -1] > 0.5).astype(np.int64)
        return upper, full

    def decode(self, obs) -> tuple[int, int, int]:
        """One observation -> ``(hand index, rolls left, open bit set)``."""
        batch = {k: np.asarray(v)[None] for k, v in obs.items()} if isinstance(obs, dict) else np.asarray(obs)[None]
        hands, rolls, open_bits = self.decode_batch(batch)
        return int(hands[0]), int(rolls[0]), int(open_bits[0])

    def _open_bits(self, open_flags: np.ndarray) -> np.ndarray:
        weights = 1 << np.arange(self.rules.num_rows, dtype=np.int64)
        return (np.asarray(open_flags) > 0.5).astype(np.int64) @ weights


class BoxEncoding(Encoding):
    """A flat float32 vector: hand part, rolls-left part, open-categories part (and the sheet part)."""

    scale_sheet = True  # the upper subtotal as a fraction of the threshold (else the plain number)
    space: spaces.Box

    def __init__(self, rules: RuleSet, hand_part: np.ndarray, rolls_part: np.ndarray, high: float):
        super().__init__(rules)
        self.hand_part = hand_part.astype(np.float32)
        self.rolls_part = rolls_part.astype(np.float32)
        self.open_part = self.open_part.astype(np.float32)
        self.hand_width = self.hand_part.shape[1]
        self.rolls_width = self.rolls_part.shape[1]
        size = self.hand_width + self.rolls_width + rules.num_rows + self.sheet_width
        if self.has_upper and not self.scale_sheet:
            high = max(high, float(rules.bonus_threshold))
        self.space = spaces.Box(low=0.0, high=high, shape=(size,), dtype=np.float32)

    @override
    def encode(self, hand, rolls_left, open_bits, upper_total=0, yahtzee_full=0):
        parts = [self.hand_part[hand], self.rolls_part[rolls_left], self.open_part[open_bits]]
        if self.sheet_width:
            parts.append(self.sheet_part([upper_total], [yahtzee_full], 1, self.scale_sheet)[0])
        return np.concatenate(parts)

    @override
    def encode_batch(self, hands, rolls_left, open_bits, upper_totals=None, yahtzee_full=None, out=None):
        # np.take is several times faster than fancy indexing for these row gathers.
        parts = [
            np.take(self.hand_part, hands, axis=0),
            np.take(self.rolls_part, rolls_left, axis=0),
            np.take(self.open_part, open_bits, axis=0),
        ]
        if self.sheet_width:
            parts.append(self.sheet_part(upper_totals, yahtzee_full, len(parts[0]), self.scale_sheet))
        return np.concatenate(parts, axis=1, out=out)

    def split(self, obs: np.ndarray):
        """A batch of observations -> its hand, rolls-left and open-row parts."""
        obs = np.asarray(obs)
        a, b = self.hand_width, self.hand_width + self.rolls_width
        return obs[:, :a], obs[:, a:b], obs[:, b : b + self.rules.num_rows]

    @override
    def decode_sheet_batch(self, obs):
        obs = np.asarray(obs)
        return self._decode_sheet_part(obs[:, obs.shape[1] - self.sheet_width :], self.scale_sheet)


class NumberEncoding(BoxEncoding):
    """A box whose hand part holds plain numbers and whose rolls left is one plain number (not one-hot).

    The box's ``high`` is the largest of them; the sheet part keeps the plain upper subtotal too.
    """

    scale_sheet = False

    def __init__(self, rules: RuleSet, hand_part: np.ndarray):
        rolls = np.arange(rules.rolls_per_turn, dtype=np.float32)[:, None]
        super().__init__(rules, hand_part, rolls, high=float(max(hand_part.max(), rules.rolls_per_turn - 1)))

    def split_numbers(self, obs: np.ndarray):
        """A batch of observations -> its hand part, rolls left as int64 and open bit sets."""
        hand, rolls, open_flags = self.split(obs)
        return hand, np.rint(rolls[:, 0]).astype(np.int64), self._open_bits(open_flags)


class Flat(NumberEncoding):
    """The sorted dice (1..faces), rolls left, and one 0/1 flag per row (1 = open)."""

    name = "flat"

    def __init__(self, rules):
        super().__init__(rules, rules.dice.hands)

    @override
    def decode_batch(self, obs):
        dice, rolls_left, open_bits = self.split_numbers(obs)
        faces = np.rint(dice).astype(np.int64)
        bad = ((faces < 1) | (faces > self.rules.num_faces)).any(axis=1)
        if bad.any():  # a face out of range would index another hand, or past the table
            first, rules = int(bad.argmax()), self.rules
            allowed = f"{rules.num_dice} faces of 1..{rules.num_faces}"
            raise ValueError(f"observation {first}: dice {faces[first].tolist()} are not {allowed}")
        return self.rules.dice.hand_of_code[(faces - 1) @ self.rules.dice.place_values], rolls_left, open_bits


class Counts(NumberEncoding):
    """How many dice show each face, rolls left, and the open-row flags."""

    name = "counts"

    def __init__(self, rules):
        super().__init__(rules, rules.dice.hand_counts)
        base = rules.num_dice + 1
        self._count_weights = base ** np.arange(rules.num_faces, dtype=np.int64)
        lookup = np.full(base**rules.num_faces, -1, dtype=np.int16)
        lookup[rules.dice.hand_counts.astype(np.int64) @ self._count_weights] = np.arange(rules.dice.num_hands)
        self._hand_of_counts = lookup

    @override
    def decode_batch(self, obs):
        counts, rolls_left, open_bits = self.split_numbers(obs)
        counts = np.rint(counts).astype(np.int64)
        num_dice = self.rules.num_dice
        bad = (counts < 0).any(axis=1) | (counts.sum(axis=1) != num_dice)
        if bad.any():  # other counts would index another hand, or past the table
            first = int(bad.argmax())
            raise ValueError(f"observation {first}: face counts {counts[first].tolist()} are not a hand of {num_dice} dice")
        return self._hand_of_counts[counts @ self._count_weights], rolls_left, open_bits


class OneHot(BoxEncoding):
    """Each die one-hot over the faces, rolls left one-hot, and the open-row flags."""

    name = "onehot"

    def __init__(self, rules):
        faces = np.eye(rules.num_faces, dtype=np.float32)[rules.dice.hands.astype(np.int64) - 1]
        super().__init__(rules, faces.reshape(rules.dice.num_hands, -1), np.eye(rules.rolls_per_turn), high=1.0)

    @override
    def decode_batch(self, obs):
        faces, rolls, open_flags = self.split(obs)
        dice = faces.reshape(len(faces), self.rules.num_dice, self.rules.num_faces).argmax(axis=2)
        hands = self.rules.dice.hand_of_code[dice @ self.rules.dice.place_values]
        return hands, rolls.argmax(axis=1), self._open_bits(open_flags)


class Features(OneHot):
    """One-hot dice plus derived features: face counts and what each open row would score now.

    The score-now part depends on both the hand and the open set, so it is the one part that is
    not a plain table lookup: the hand's score row times the open flags.
    """

    name = "features"

    def __init__(self, rules):
        super().__init__(rules)
        counts = rules.dice.hand_counts.astype(np.float32) / rules.num_dice
        self.hand_part = np.concatenate((self.hand_part, counts), axis=1)
        self.hand_width = self.hand_part.shape[1]
        scale = max(1, int(rules.hand_scores.max()), int(rules.joker_hand_scores.max()))
        self.scores = rules.hand_scores.astype(np.float32) / scale
        self.joker_scores = rules.joker_hand_scores.astype(np.float32) / scale
        self.has_joker = rules.joker != "none"
        size = self.hand_width + self.rolls_width + 2 * rules.num_rows + self.sheet_width
        self.space = spaces.Box(low=0.0, high=1.0, shape=(size,), dtype=np.float32)

    @override
    def encode(self, hand, rolls_left, open_bits, upper_total=0, yahtzee_full=0):
        if self.sheet_width or self.has_joker:
            batch = self.encode_batch(
                np.array([hand]), np.array([rolls_left]), np.array([open_bits]), [upper_total], [yahtzee_full]
            )
            return batch[0]
        open_flags = self.open_part[open_bits]
        return np.concatenate((self.hand_part[hand], self.rolls_part[rolls_left], open_flags, self.scores[hand] * open_flags))

    @override
    def encode_batch(self, hands, rolls_left, open_bits, upper_totals=None, yahtzee_full=None, out=None):
        open_flags = self.open_part[open_bits]
        scores = self.scores[hands]
        if self.has_joker:  # a joker scores its joker values in the rows it may go in
            jokers = self.rules.joker_now(hands, open_bits)
            scores = np.where(jokers[:, None], self.joker_scores[hands], scores)
        parts = [self.hand_part[hands], self.rolls_part[rolls_left], open_flags, scores * open_flags]
        if self.sheet_width:
            parts.append(self.sheet_part(upper_totals, yahtzee_full, len(open_flags), True))
        return np.concatenate(parts, axis=1, out=out)

    @override
    def split(self, obs):
        obs = np.asarray(obs)
        dice_width = self.rules.num_dice * self.rules.num_faces
        a, b = self.hand_width, self.hand_width + self.rolls_width
        return obs[:, :dice_width], obs[:, a:b], obs[:, b : b + self.rules.num_rows]


class DictEncoding(Encoding):
    """A ``Dict`` of ``dice``, ``rolls_left`` and ``open_categories``, for ``MultiInputPolicy``."""

    name = "dict"
    space: spaces.Dict

    def __init__(self, rules):
        super().__init__(rules)
        n, c = rules.num_dice, rules.num_rows
        keys = {
            "dice": spaces.Box(low=1, high=rules.num_faces, shape=(n,), dtype=np.int8),
            "rolls_left": spaces.Discrete(rules.rolls_per_turn),
            "open_categories": spaces.MultiBinary(c),
        }
        if self.has_upper:
            keys["upper_total"] = spaces.Discrete(rules.bonus_threshold + 1)
            keys["bonus_reached"] = spaces.Discrete(2)
        if self.has_yahtzee:
            keys["yahtzee_box_full"] = spaces.Discrete(2)
        self.space = spaces.Dict(keys)

    @override
    def encode(self, hand, rolls_left, open_bits, upper_total=0, yahtzee_full=0):
        batch = self.encode_batch(np.array([hand]), np.array([rolls_left]), np.array([open_bits]), [upper_total], [yahtzee_full])
        return {key: value[0] if key in ("dice", "open_categories") else np.int64(value[0]) for key, value in batch.items()}

    @override
    def encode_batch(self, hands, rolls_left, open_bits, upper_totals=None, yahtzee_full=None, out=None):
        batch = {
            "dice": self.rules.dice.hands[hands],
            "rolls_left": np.asarray(rolls_left, dtype=np.int64).copy(),
            "open_categories": self.open_part[open_bits],
        }
        if self.sheet_width:
            part = self.sheet_part(upper_totals, yahtzee_full, len(batch["rolls_left"]), False).astype(np.int64)
            if self.has_upper:
                batch["upper_total"], batch["bonus_reached"] = part[:, 0], part[:, 1]
            if self.has_yahtzee:
                batch["yahtzee_box_full"] = part[:, -1]
        return batch

    @override
    def decode_sheet_batch(self, obs):
        zeros = np.zeros(len(np.asarray(obs["rolls_left"]).reshape(-1)), dtype=np.int64)
        upper = np.asarray(obs["upper_total"], dtype=np.int64).reshape(-1) if self.has_upper else zeros
        full = np.asarray(obs["yahtzee_box_full"], dtype=np.int64).reshape(-1) if self.has_yahtzee else zeros.copy()
        return upper, full

    @override
    def decode_batch(self, obs):
        codes = (np.asarray(obs["dice"]).astype(np.int64) - 1) @ self.rules.dice.place_values
        hands = self.rules.dice.hand_of_code[codes]
        return hands, np.asarray(obs["rolls_left"]).astype(np.int64), self._open_bits(obs["open_categories"])


ENCODINGS = {cls.name: cls for cls in (Flat, Counts, OneHot, Features, DictEncoding)}


def make_encoding(name: str, rules: RuleSet) -> Encoding:
    """The encoding called ``name`` for ``rules`` (shared: encodings are immutable tables)."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown observation encoding {name!r}; expected one of {', '.join(ENCODINGS)}")
    return _build_encoding(rules, name)


@cached_per_rules
def _build_encoding(rules: RuleSet, name: str) -> Encoding:
    return ENCODINGS[name](rules)
