"""Where each turn-start value of the two-player game lives: pairs of open-row sets, layers, leads.

A turn-start state is ``(A, B, d)``: the mover's open rows ``A``, the other player's open rows ``B`` and
``d``, the mover's score minus the other's. Player one moves when both have as many rows open; player
two when it has one more open than player one. So every state with ``n = |A| + |B|`` open rows in all has
``|A| = ceil(n / 2)`` and ``|B| = floor(n / 2)``: a *layer* is one such block of pairs, and layer ``n``
reads only layer ``n - 1`` (layer 0 is the end of the game).

The lead of a pair is stored over ``lo .. hi`` only:

- by what each has scored: the mover's points so far are at most the best the filled rows pay, ``F(A)``,
  and the other's at most ``F(B)``, so ``-F(B) <= d <= F(A)``;
- by what is still to come: when the mover is ahead by more than the other can still score,
  ``d > M(B)``, the mover has won (value 1); when ``d < -M(A)`` it has lost (value 0).

So ``lo = max(-M(A), -F(B))`` and ``hi = min(M(B), F(A))``; a lead below ``lo`` of a state that a
game reaches is a sure loss (0) and above ``hi`` a sure win (1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from yacht_env.rules import RuleSet


def open_row_counts(num_rows: int) -> np.ndarray:
    """How many rows each open bit set of ``num_rows`` rows has open, shape (2**num_rows,)."""
    sets = np.arange(1 << num_rows, dtype=np.int64)
    return sum(((sets >> c) & 1 for c in range(num_rows)), np.zeros_like(sets))


def layer_sizes(num_open: int) -> tuple[int, int]:
    """``(|A|, |B|)``, the mover's and the other's open-row counts, of the layer with ``num_open`` rows open in all."""
    return (num_open + 1) // 2, num_open // 2


@dataclass(frozen=True, eq=False)
class Layer:
    """One layer's pairs (mover's set major, the other's minor) and the stored range of ``d`` of each."""

    num_open: int
    mover_sets: np.ndarray  # (nA,) open bit sets of |A| rows, increasing
    other_sets: np.ndarray  # (nB,) open bit sets of |B| rows, increasing
    lo: np.ndarray  # (nA * nB,) int64: the smallest stored d of each pair
    width: np.ndarray  # (nA * nB,) int64: how many d are stored (hi - lo + 1)
    offset: np.ndarray  # (nA * nB + 1,) int64: where each pair's values start in the layer's flat array

    @property
    def num_pairs(self) -> int:
        """How many pairs of open-row sets the layer holds."""
        return len(self.lo)

    @property
    def num_values(self) -> int:
        """How many values the layer stores."""
        return int(self.offset[-1])


class PairLayout:
    """The layers of one rule set's two-player game: which pairs, which ``d``, at which offset."""

    def __init__(self, rules: RuleSet):
        self.num_rows = rules.num_rows
        self.row_max = rules.hand_scores.max(axis=0).astype(np.int64)
        sets = np.arange(1 << self.num_rows, dtype=np.int64)
        self.open_counts = open_row_counts(self.num_rows)
        # M(S): the most the open rows of S can still pay; F(S): the most its filled rows can hold.
        self.most_to_come = sum((((sets >> c) & 1) * self.row_max[c] for c in range(self.num_rows)), np.zeros_like(sets))
        self.most_scored = int(self.row_max.sum()) - self.most_to_come
        self.sets_by_size = [sets[self.open_counts == m] for m in range(self.num_rows + 1)]
        # rank[S]: the position of S among the sets of its size.
        self.rank = np.zeros(1 << self.num_rows, dtype=np.int64)
        for group in self.sets_by_size:
            self.rank[group] = np.arange(len(group))

    @property
    def num_layers(self) -> int:
        """Layers 0 (the game over) .. ``2 * num_rows`` (the first turn)."""
        return 2 * self.num_rows + 1

    @cached_property
    def layers(self) -> tuple[Layer, ...]:
        """Every layer, by how many rows are open in all."""
        return tuple(self._layer(n) for n in range(self.num_layers))

    def _layer(self, num_open: int) -> Layer:
        a, b = layer_sizes(num_open)
        mover, other = self.sets_by_size[a], self.sets_by_size[b]
        to_come_a, to_come_b = self.most_to_come[mover][:, None], self.most_to_come[other][None, :]
        scored_a, scored_b = self.most_scored[mover][:, None], self.most_scored[other][None, :]
        lo = np.maximum(-to_come_a, -scored_b).reshape(-1)
        hi = np.minimum(to_come_b, scored_a).reshape(-1)
        width = hi - lo + 1
        offset = np.zeros(len(lo) + 1, dtype=np.int64)
        np.cumsum(width, out=offset[1:])
        return Layer(num_open, mover, other, lo.astype(np.int64), width.astype(np.int64), offset)

    def pair_index(self, mover_open: int, other_open: int) -> int:
        """The index of the pair ``(A, B)`` in its layer (``ValueError`` if the turn order never gives it)."""
        a, b = int(self.open_counts[mover_open]), int(self.open_counts[other_open])
        if layer_sizes(a + b) != (a, b):
            raise ValueError(
                f"no turn starts with the mover holding {a} open rows and the other {b}: "
                f"the mover has as many open as the other (player one) or one more (player two)"
            )
        return int(self.rank[mover_open] * len(self.sets_by_size[b]) + self.rank[other_open])

    @property
    def total_values(self) -> int:
        """How many values the whole solution stores."""
        return sum(layer.num_values for layer in self.layers)
