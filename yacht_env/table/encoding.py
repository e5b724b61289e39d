"""What a player at a Yacht table observes: their own position, plus the table as they see it.

A table observation extends one of the solitaire encodings of :mod:`yacht_env.encoding` (the
*own part*) with what every player sees on the shared score sheet: the totals and which rows
are still open. Seats are listed relative to the observer: the observer first, then the other
players in the order they play after the observer (``(observer + 1) % n``, ...).

For a Box encoding (``flat``, ``counts``, ``onehot``, ``features``) the observation is one float32
vector, of fixed size for a given number of players ``n``:

==============================  ==============================================================
part                            content
==============================  ==============================================================
own part                        the solitaire encoding of the observer's dice, rolls left and
                                open rows (18 values for ``flat``)
observer's total                points so far / ``TOTAL_SCALE`` (100)
each other player (n - 1 x 13)  their total / ``TOTAL_SCALE``, then their 12 open-row flags
                                (1 = open), in play order after the observer
==============================  ==============================================================

so ``flat`` at a two-player table is ``Box(32,)``: 18 + 1 + 13. Totals are scaled so that they
sit in the same range as the rest of the vector (a Yacht total is at most 303, i.e. 3.03).

For ``dict`` the own keys (``dice``, ``rolls_left``, ``open_categories``) are joined by ``total``
(the observer's raw points) and, when ``n > 1``, ``other_totals`` (raw points, shape (n - 1,))
and ``other_open_categories`` (MultiBinary (n - 1, 12)), in the same seat order.

Under rules with sheet state (an upper bonus, an extra-Yahtzee bonus: Yahtzee, Yatzy), what the other
players can still score depends on their sheet state too, so every player's is shown. The own part
ends with the observer's sheet part (:mod:`yacht_env.encoding`), and each other player's block
(total, open-row flags) is followed by that player's sheet part, laid out and scaled as the own one
(``Box`` encodings: 13 + sheet width values per other player). ``dict`` gains, per other player in
the same seat order, ``other_upper_totals`` (capped at the bonus threshold) and ``other_bonus_reached``
with an upper bonus, and ``other_yahtzee_box_full`` with an extra-Yahtzee bonus. Rules without sheet
state (Yacht) keep the layouts above.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from gymnasium import spaces

from yacht_env.encoding import BoxEncoding, Encoding, make_encoding
from yacht_env.rules import RuleSet, cached_per_rules
from yacht_env.table.outcome import GameBatch, check_num_players

TOTAL_SCALE = 100.0


def max_total(rules: RuleSet) -> int:
    """A bound on the total a score sheet can reach: the best score of every row (jokers included),
    the upper bonus, and an extra-Yahtzee bonus on every turn after the first.
    """
    best_rows = np.maximum(rules.hand_scores.max(axis=0), rules.joker_hand_scores.max(axis=0))
    return int(best_rows.sum()) + rules.bonus_points + rules.yahtzee_bonus * (rules.num_turns - 1)


class TableEncoding:
    """Observations of a table of ``num_players`` for one solitaire encoding of the own position."""

    def __init__(self, rules: RuleSet, own_encoding: str, num_players: int):
        self.rules = rules
        self.own: Encoding = make_encoding(own_encoding, rules)
        self.name = own_encoding
        self.num_players = check_num_players(num_players)
        self.is_box = isinstance(self.own, BoxEncoding)
        self._open_flags = self.own.open_part if not self.is_box else self.own.open_part.astype(np.float32)
        others, categories, top = num_players - 1, rules.num_rows, max_total(rules)
        self.space: spaces.Box | spaces.Dict
        if isinstance(self.own, BoxEncoding):
            self.own_width = self.own.space.shape[0]
            size = self.own_width + 1 + others * (1 + categories + self.own.sheet_width)
            high = max(float(np.max(self.own.space.high)), top / TOTAL_SCALE)
            self.space = spaces.Box(low=0.0, high=high, shape=(size,), dtype=np.float32)
        else:
            parts = dict(self._own_dict_space().spaces)
            parts["total"] = spaces.Box(low=0, high=top, shape=(), dtype=np.int64)
            if others:
                parts["other_totals"] = spaces.Box(low=0, high=top, shape=(others,), dtype=np.int64)
                parts["other_open_categories"] = spaces.MultiBinary((others, categories))
                if self.own.has_upper:
                    threshold = rules.bonus_threshold
                    parts["other_upper_totals"] = spaces.Box(low=0, high=threshold, shape=(others,), dtype=np.int64)
                    parts["other_bonus_reached"] = spaces.MultiBinary(others)
                if self.own.has_yahtzee:
                    parts["other_yahtzee_box_full"] = spaces.MultiBinary(others)
            self.space = spaces.Dict(parts)

    def encode_batch(self, hands, rolls_left, open_bits, totals, table_open_bits, upper_totals=None, yahtzee_full=None):
        """Observations of N observers.

        ``hands``, ``rolls_left``, ``open_bits``: the observers' positions, (N,). ``totals`` and
        ``table_open_bits``: (N, num_players), seats relative to each observer (observer first).
        ``upper_totals``, ``yahtzee_full``: the sheet state of every seat, (N, num_players) in the same
        order, for rules with bonuses (see :mod:`yacht_env.encoding`); given as (N,), the observers'
        alone, the others' read 0.
        """
        totals = np.asarray(totals)
        table_open_bits = np.asarray(table_open_bits)
        upper, full = (self._per_seat(part, len(totals)) for part in (upper_totals, yahtzee_full))
        own = self.own.encode_batch(hands, rolls_left, open_bits, upper[:, 0], full[:, 0])
        others = self.num_players - 1
        if not self.is_box:
            own["total"] = totals[:, 0].astype(np.int64)
            if others:
                own["other_totals"] = totals[:, 1:].astype(np.int64)
                own["other_open_categories"] = self._open_flags[table_open_bits[:, 1:]]
                sheets = self.own.sheet_part(upper[:, 1:].reshape(-1), full[:, 1:].reshape(-1), len(totals) * others, False)
                sheets = sheets.astype(np.int64).reshape(len(totals), others, -1)
                if self.own.has_upper:
                    own["other_upper_totals"], own["other_bonus_reached"] = sheets[:, :, 0], sheets[:, :, 1].astype(np.int8)
                if self.own.has_yahtzee:
                    own["other_yahtzee_box_full"] = sheets[:, :, -1].astype(np.int8)
            return own
        scaled = (totals / TOTAL_SCALE).astype(np.float32)
        blocks = [scaled[:, 1:, None], self._open_flags[table_open_bits[:, 1:]]]
        if self.own.sheet_width and others:
            scale = getattr(self.own, "scale_sheet", True)
            sheets = self.own.sheet_part(upper[:, 1:].reshape(-1), full[:, 1:].reshape(-1), len(totals) * others, scale)
            blocks.append(sheets.reshape(len(totals), others, -1))
        other_part = np.concatenate(blocks, axis=2)
        return np.concatenate((own, scaled[:, :1], other_part.reshape(len(own), -1)), axis=1)

    def _per_seat(self, part, n: int) -> np.ndarray:
        """A sheet-state argument as (N, num_players): zeros when absent, the observers' alone padded with zeros."""
        if part is None:
            return np.zeros((n, self.num_players), dtype=np.int64)
        part = np.asarray(part, dtype=np.int64)
        if part.ndim == 1:
            return np.concatenate((part[:, None], np.zeros((len(part), self.num_players - 1), dtype=np.int64)), axis=1)
        return part

    def encode(self, hand, rolls_left, open_bits, totals, table_open_bits):
        """One observer's observation; ``totals`` and ``table_open_bits`` have shape (num_players,)."""
        batch = self.encode_batch([hand], [rolls_left], [open_bits], np.asarray(totals)[None], np.asarray(table_open_bits)[None])
        return _first(batch, self.space)

    def of_tables(self, tables: GameBatch, rows, observers):
        """Observations of seat ``observers[i]`` at table ``rows[i]`` of ``tables``, batched."""
        rows = np.asarray(rows, dtype=np.int64)
        observers = np.asarray(observers, dtype=np.int64)
        relative = (observers[:, None] + np.arange(self.num_players)) % self.num_players
        hands, rolls_left, open_bits = tables.position(rows, observers)
        return self.encode_batch(
            hands,
            rolls_left,
            open_bits,
            tables.totals[rows[:, None], relative],
            tables.open_bits[rows[:, None], relative],
            *tables.sheet_state(rows[:, None], relative),
        )

    def of_seat(self, tables: GameBatch, row: int, observer: int):
        """The observation of seat ``observer`` at table ``row``."""
        return _first(self.of_tables(tables, [row], [observer]), self.space)

    def decode_batch(self, observations) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The observers' own positions ``(hands, rolls_left, open_bits)``."""
        if self.is_box:
            return self.own.decode_batch(np.asarray(observations)[:, : self.own_width])
        return self.own.decode_batch({key: observations[key] for key in self._own_dict_space().spaces})

    def decode_sheet_batch(self, observations) -> tuple[np.ndarray, np.ndarray]:
        """The observers' sheet state ``(upper subtotals capped at the threshold, Yahtzee box full)``."""
        if self.is_box:
            return self.own.decode_sheet_batch(np.asarray(observations)[:, : self.own_width])
        return self.own.decode_sheet_batch({key: observations[key] for key in self._own_dict_space().spaces})

    def decode_positions(self, observations) -> tuple[np.ndarray, ...]:
        """The observers' own positions and sheet state, as :meth:`Encoding.decode_positions`."""
        return (*self.decode_batch(observations), *self.decode_sheet_batch(observations))

    def _own_dict_space(self) -> spaces.Dict:
        # the one encoding that is not a Box is ``dict``
        return cast(spaces.Dict, self.own.space)


def _first(batch, space):
    """The first observation of a batch (for ``dict``, scalars for the ``Discrete`` keys such as
    ``rolls_left`` and ``upper_total``, as ``Yacht-v0`` gives them).
    """
    if isinstance(batch, dict):
        return {
            key: np.int64(value[0]) if isinstance(space[key], spaces.Discrete) else np.asarray(value[0])
            for key, value in batch.items()
        }
    return batch[0]


@cached_per_rules
def _table_encoding(rules: RuleSet, own_encoding: str, num_players: int) -> TableEncoding:
    """The (shared, immutable) table encoding; ``ValueError`` for an unknown encoding or table size."""
    return TableEncoding(rules, own_encoding, num_players)


def make_table_encoding(own_encoding: str, num_players: int, rules: RuleSet) -> TableEncoding:
    """The table encoding of ``num_players`` on top of the solitaire encoding ``own_encoding``."""
    make_encoding(own_encoding, rules)  # a ValueError naming the allowed encodings
    return _table_encoding(rules, own_encoding, check_num_players(num_players))


def policy_observations(policy, tables: GameBatch, rows, observers):
    """What ``policy`` is fed for seat ``observers[i]`` at table ``rows[i]``.

    A policy that reads the table (one with a ``table_encoding`` attribute, e.g. a model trained
    at a table) gets table observations in that encoding; any other policy gets its solitaire
    encoding (``policy.encoding``) of the seat's own position, as in ``Yacht-v0``.
    """
    seen_table = getattr(policy, "table_encoding", None)
    if seen_table is not None:
        if seen_table.num_players != tables.num_players:
            raise ValueError(
                f"policy {getattr(policy, 'name', policy)!r} was built for tables of {seen_table.num_players} players, "
                f"not {tables.num_players}"
            )
        return seen_table.of_tables(tables, rows, observers)
    rows, observers = np.asarray(rows), np.asarray(observers)
    sheet = tables.sheet_state(rows, observers) if policy.encoding.sheet_width else ()
    return policy.encoding.encode_batch(*tables.position(rows, observers), *sheet)
