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
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from typing_extensions import override

from yacht_env.rules import RuleSet, cached_per_rules


def _open_table(rules: RuleSet) -> np.ndarray:
    bits = np.arange(1 << rules.num_categories)[:, None] >> np.arange(rules.num_categories)
    return bits & 1


class Encoding:
    """Base of the encodings; subclasses fill the three part tables."""

    name = ""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.open_part = _open_table(rules).astype(np.int8)

    def encode(self, hand: int, rolls_left: int, open_bits: int):
        """The observation of one position (hand index, rolls left, open-row bit set)."""
        raise NotImplementedError

    def encode_batch(self, hands: np.ndarray, rolls_left: np.ndarray, open_bits: np.ndarray):
        """The observations of N positions, batched along a first axis (each argument of shape (N,))."""
        raise NotImplementedError

    def decode_batch(self, obs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Observations -> (hand indices, rolls left, open bit sets), each shape (N,)."""
        raise NotImplementedError

    def decode(self, obs) -> tuple[int, int, int]:
        """One observation -> ``(hand index, rolls left, open bit set)``."""
        batch = {k: np.asarray(v)[None] for k, v in obs.items()} if isinstance(obs, dict) else np.asarray(obs)[None]
        hands, rolls, open_bits = self.decode_batch(batch)
        return int(hands[0]), int(rolls[0]), int(open_bits[0])

    def _open_bits(self, open_flags: np.ndarray) -> np.ndarray:
        weights = 1 << np.arange(self.rules.num_categories, dtype=np.int64)
        return (np.asarray(open_flags) > 0.5).astype(np.int64) @ weights


class BoxEncoding(Encoding):
    """A flat float32 vector: hand part, rolls-left part, open-categories part."""

    def __init__(self, rules: RuleSet, hand_part: np.ndarray, rolls_part: np.ndarray, high: float):
        super().__init__(rules)
        self.hand_part = hand_part.astype(np.float32)
        self.rolls_part = rolls_part.astype(np.float32)
        self.open_part = self.open_part.astype(np.float32)
        self.hand_width = self.hand_part.shape[1]
        self.rolls_width = self.rolls_part.shape[1]
        size = self.hand_width + self.rolls_width + rules.num_categories
        self.space = spaces.Box(low=0.0, high=high, shape=(size,), dtype=np.float32)

    @override
    def encode(self, hand, rolls_left, open_bits):
        return np.concatenate((self.hand_part[hand], self.rolls_part[rolls_left], self.open_part[open_bits]))

    @override
    def encode_batch(self, hands, rolls_left, open_bits, out=None):
        # np.take is several times faster than fancy indexing for these row gathers.
        parts = (
            np.take(self.hand_part, hands, axis=0),
            np.take(self.rolls_part, rolls_left, axis=0),
            np.take(self.open_part, open_bits, axis=0),
        )
        return np.concatenate(parts, axis=1, out=out)

    def split(self, obs: np.ndarray):
        """A batch of observations -> its hand, rolls-left and open-row parts."""
        obs = np.asarray(obs)
        a, b = self.hand_width, self.hand_width + self.rolls_width
        return obs[:, :a], obs[:, a:b], obs[:, b:]


class Flat(BoxEncoding):
    """The sorted dice (1..faces), rolls left, and one 0/1 flag per row (1 = open)."""

    name = "flat"

    def __init__(self, rules):
        rolls = np.arange(rules.rolls_per_turn, dtype=np.float32)[:, None]
        super().__init__(rules, rules.dice.hands, rolls, high=float(max(rules.num_faces, rules.rolls_per_turn - 1)))

    @override
    def decode_batch(self, obs):
        dice, rolls, open_flags = self.split(obs)
        codes = (np.rint(dice).astype(np.int64) - 1) @ self.rules.dice.place_values
        return self.rules.dice.hand_of_code[codes], np.rint(rolls[:, 0]).astype(np.int64), self._open_bits(open_flags)


class Counts(BoxEncoding):
    """How many dice show each face, rolls left, and the open-row flags."""

    name = "counts"

    def __init__(self, rules):
        rolls = np.arange(rules.rolls_per_turn, dtype=np.float32)[:, None]
        super().__init__(rules, rules.dice.hand_counts, rolls, high=float(max(rules.num_dice, rules.rolls_per_turn - 1)))
        base = rules.num_dice + 1
        self._count_weights = base ** np.arange(rules.num_faces, dtype=np.int64)
        lookup = np.full(base**rules.num_faces, -1, dtype=np.int16)
        lookup[rules.dice.hand_counts.astype(np.int64) @ self._count_weights] = np.arange(rules.dice.num_hands)
        self._hand_of_counts = lookup

    @override
    def decode_batch(self, obs):
        counts, rolls, open_flags = self.split(obs)
        hands = self._hand_of_counts[np.rint(counts).astype(np.int64) @ self._count_weights]
        return hands, np.rint(rolls[:, 0]).astype(np.int64), self._open_bits(open_flags)


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
        self.scores = rules.score_table.astype(np.float32) / max(1, int(rules.score_table.max()))
        size = self.hand_width + self.rolls_width + 2 * rules.num_categories
        self.space = spaces.Box(low=0.0, high=1.0, shape=(size,), dtype=np.float32)

    @override
    def encode(self, hand, rolls_left, open_bits):
        open_flags = self.open_part[open_bits]
        return np.concatenate((self.hand_part[hand], self.rolls_part[rolls_left], open_flags, self.scores[hand] * open_flags))

    @override
    def encode_batch(self, hands, rolls_left, open_bits, out=None):
        open_flags = self.open_part[open_bits]
        parts = (self.hand_part[hands], self.rolls_part[rolls_left], open_flags, self.scores[hands] * open_flags)
        return np.concatenate(parts, axis=1, out=out)

    @override
    def split(self, obs):
        obs = np.asarray(obs)
        dice_width = self.rules.num_dice * self.rules.num_faces
        a, b = self.hand_width, self.hand_width + self.rolls_width
        return obs[:, :dice_width], obs[:, a:b], obs[:, b : b + self.rules.num_categories]


class DictEncoding(Encoding):
    """A ``Dict`` of ``dice``, ``rolls_left`` and ``open_categories``, for ``MultiInputPolicy``."""

    name = "dict"

    def __init__(self, rules):
        super().__init__(rules)
        n, c = rules.num_dice, rules.num_categories
        self.space = spaces.Dict(
            {
                "dice": spaces.Box(low=1, high=rules.num_faces, shape=(n,), dtype=np.int8),
                "rolls_left": spaces.Discrete(rules.rolls_per_turn),
                "open_categories": spaces.MultiBinary(c),
            }
        )

    @override
    def encode(self, hand, rolls_left, open_bits):
        return {
            "dice": self.rules.dice.hands[hand].copy(),
            "rolls_left": np.int64(rolls_left),
            "open_categories": self.open_part[open_bits].copy(),
        }

    @override
    def encode_batch(self, hands, rolls_left, open_bits, out=None):
        return {
            "dice": self.rules.dice.hands[hands],
            "rolls_left": np.asarray(rolls_left, dtype=np.int64).copy(),
            "open_categories": self.open_part[open_bits],
        }

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
