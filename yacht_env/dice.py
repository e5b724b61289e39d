"""Combinatorics of a handful of dice: hands, kept sub-hands, re-rolls and their probabilities.

A *hand* is the multiset of faces showing on all dice (252 of them for five six-sided dice); a
*keep* is the multiset of dice set aside before a re-roll (462 of them, from none to all five).
Everything here is pure and depends only on the number of dice and faces, so rule variants with
other dice reuse it unchanged. Tables are built once per ``DiceSpace`` and are read-only.
"""

from __future__ import annotations

import itertools
import math
from functools import cached_property

import numpy as np


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


class DiceSpace:
    """The hands and keeps of ``num_dice`` dice with faces ``1..num_faces``.

    Dice positions refer to the *sorted* hand; a re-roll is a bit mask over those positions
    (bit ``i`` set re-rolls die ``i``).
    """

    def __init__(self, num_dice: int = 5, num_faces: int = 6):
        if num_dice < 1 or num_faces < 2:
            raise ValueError(f"need at least 1 die and 2 faces, got {num_dice} dice and {num_faces} faces")
        self.num_dice = num_dice
        self.num_faces = num_faces
        self.num_rerolls = 1 << num_dice

    # -- hands ---------------------------------------------------------------------------------

    @cached_property
    def hands(self) -> np.ndarray:
        """All hands as sorted dice, shape (num_hands, num_dice), in lexicographic order."""
        faces = range(1, self.num_faces + 1)
        return _read_only(np.array(list(itertools.combinations_with_replacement(faces, self.num_dice)), dtype=np.int8))

    @property
    def num_hands(self) -> int:
        """How many distinct hands there are (252 for five six-sided dice)."""
        return len(self.hands)

    @cached_property
    def hand_counts(self) -> np.ndarray:
        """Face counts of each hand, shape (num_hands, num_faces): column f counts face f+1."""
        return _read_only(self._counts(self.hands))

    @cached_property
    def hand_index(self) -> dict[tuple[int, ...], int]:
        """Sorted dice tuple -> hand index."""
        return {tuple(int(d) for d in hand): i for i, hand in enumerate(self.hands)}

    @cached_property
    def place_values(self) -> np.ndarray:
        """Weights that turn dice in positional order into a code in ``0..num_faces**num_dice - 1``."""
        return _read_only(self.num_faces ** np.arange(self.num_dice, dtype=np.int64))

    @cached_property
    def hand_of_code(self) -> np.ndarray:
        """Code of dice in *any* order -> hand index, so no sort is needed to find a hand."""
        table = np.empty(self.num_faces**self.num_dice, dtype=np.int16)
        for dice in itertools.product(range(1, self.num_faces + 1), repeat=self.num_dice):
            table[self.code(dice)] = self.hand_index[tuple(sorted(dice))]
        return _read_only(table)

    def code(self, dice) -> int:
        """The code of dice in positional order: a base-``num_faces`` number, one digit per die."""
        return int(sum((d - 1) * self.num_faces**i for i, d in enumerate(dice)))

    @cached_property
    def hand_probabilities(self) -> np.ndarray:
        """Probability of each hand when all dice are rolled, shape (num_hands,)."""
        return self.keep_to_hand[self.keep_index[()]]

    # -- keeps ---------------------------------------------------------------------------------

    @cached_property
    def keeps(self) -> tuple[tuple[int, ...], ...]:
        """All sorted sub-hands of 0..num_dice dice, shortest first."""
        faces = range(1, self.num_faces + 1)
        return tuple(keep for size in range(self.num_dice + 1) for keep in itertools.combinations_with_replacement(faces, size))

    @property
    def num_keeps(self) -> int:
        """How many distinct keeps there are (462 for five six-sided dice)."""
        return len(self.keeps)

    @cached_property
    def keep_index(self) -> dict[tuple[int, ...], int]:
        """Sorted kept dice -> keep index."""
        return {keep: i for i, keep in enumerate(self.keeps)}

    @cached_property
    def keep_sizes(self) -> np.ndarray:
        """How many dice each keep holds, shape (num_keeps,)."""
        return _read_only(np.array([len(k) for k in self.keeps], dtype=np.int8))

    @cached_property
    def keep_to_hand(self) -> np.ndarray:
        """P(hand | keep): probability that re-rolling the other dice gives each hand.

        Shape (num_keeps, num_hands); each row sums to 1 and is zero off the hands that contain
        the keep. Built from multinomial counts, not by enumerating ordered rolls.
        """
        table = np.zeros((self.num_keeps, self.num_hands), dtype=np.float64)
        for k, keep in enumerate(self.keeps):
            rolled = self.num_dice - len(keep)
            for outcome in itertools.combinations_with_replacement(range(1, self.num_faces + 1), rolled):
                counts = np.bincount(outcome, minlength=self.num_faces + 1)[1:]
                ways = math.factorial(rolled) // math.prod(math.factorial(int(c)) for c in counts)
                hand = self.hand_index[tuple(sorted(keep + outcome))]
                table[k, hand] += ways / self.num_faces**rolled
        return _read_only(table)

    @cached_property
    def keep_after_reroll(self) -> np.ndarray:
        """Index of the keep left when the dice of a re-roll mask are picked up, shape (num_hands, num_rerolls)."""
        table = np.empty((self.num_hands, self.num_rerolls), dtype=np.int16)
        for h, hand in enumerate(self.hands):
            for mask in range(self.num_rerolls):
                kept = tuple(int(d) for i, d in enumerate(hand) if not mask >> i & 1)
                table[h, mask] = self.keep_index[kept]
        return _read_only(table)

    @cached_property
    def keep_parents(self) -> np.ndarray:
        """For each keep, the keeps one die smaller (one per distinct face), padded with the keep itself.

        Shape (num_keeps, num_dice). Every proper sub-keep of a keep is a sub-keep of one of these,
        which lets "best over all sub-keeps" be computed by keep size with a few gathers.
        The empty keep has only itself.
        """
        table = np.empty((self.num_keeps, self.num_dice), dtype=np.int16)
        for k, keep in enumerate(self.keeps):
            parents = [self.keep_index[self._remove(keep, face)] for face in sorted(set(keep))]
            table[k] = parents + [k] * (self.num_dice - len(parents))
        return _read_only(table)

    @cached_property
    def hand_as_keep(self) -> np.ndarray:
        """Keep index of each full hand (all dice kept), shape (num_hands,)."""
        return _read_only(np.array([self.keep_index[tuple(int(d) for d in h)] for h in self.hands], dtype=np.int16))

    # -- re-roll masks -------------------------------------------------------------------------

    @cached_property
    def reroll_positions(self) -> tuple[tuple[int, ...], ...]:
        """Positions (in the sorted hand) picked up by each re-roll mask, in increasing order."""
        return tuple(tuple(i for i in range(self.num_dice) if mask >> i & 1) for mask in range(self.num_rerolls))

    @cached_property
    def reroll_bits(self) -> np.ndarray:
        """Re-roll mask -> which positions are picked up, shape (num_rerolls, num_dice) bool."""
        bits = (np.arange(self.num_rerolls)[:, None] >> np.arange(self.num_dice)[None, :]) & 1
        return _read_only(bits.astype(bool))

    @cached_property
    def reroll_rank(self) -> np.ndarray:
        """For each mask and position, which fresh die (0, 1, ...) lands there; 0 where the die is kept."""
        bits = self.reroll_bits.astype(np.int8)
        return _read_only(np.where(self.reroll_bits, np.cumsum(bits, axis=1) - 1, 0).astype(np.int8))

    @cached_property
    def kept_code(self) -> np.ndarray:
        """Code contribution of the kept dice for each hand and re-roll mask, shape (num_hands, num_rerolls)."""
        place = (self.hands.astype(np.int64) - 1) * self.place_values  # (hands, dice)
        kept = ~self.reroll_bits  # (rerolls, dice)
        return _read_only((place[:, None, :] * kept[None, :, :]).sum(axis=2))

    def reroll(self, hand: int, mask: int, fresh) -> int:
        """Hand index after picking up the dice of ``mask`` and landing them on ``fresh`` faces, in order."""
        code = int(self.kept_code[hand, mask])
        for face, position in zip(fresh, self.reroll_positions[mask]):
            code += (int(face) - 1) * self.num_faces**position
        return int(self.hand_of_code[code])

    # -- helpers -------------------------------------------------------------------------------

    def _counts(self, dice: np.ndarray) -> np.ndarray:
        return np.stack([(dice == f).sum(axis=-1) for f in range(1, self.num_faces + 1)], axis=-1).astype(np.int8)

    @staticmethod
    def _remove(keep: tuple[int, ...], face: int) -> tuple[int, ...]:
        i = keep.index(face)
        return keep[:i] + keep[i + 1 :]
