"""Planning to win at a table of 2 to 5 under any rule set with a learned chance of winning: the ``planN:PATH`` policy.

The state at the start of a turn is every seat's sheet, listed from the mover in play order: its open rows, its
upper subtotal (capped at the bonus threshold), whether its Yahtzee box holds its full points, and its total
(:class:`Tables`). The agent learns ``W(state)``, every seat's share of the win (a first place shared by ``k``
counts ``1/k``; the shares add up to 1), from its own self-play games (:mod:`agents.training.planN_train`). A
network plays every table size it learned at: the table size is one of its inputs, and seats a smaller table lacks
are left out (zero inputs, no share). A planN file holds one network or more, each for its own table sizes
(:mod:`agents.learned.planN_files`); a table is played by the one that learned its size.

At each decision it values every keep and row of the turn exactly through the dice probabilities
(:mod:`agents.learned.planN_turn`): ending the turn with hand ``h`` in row ``c`` leaves a known sheet and total
(bonuses and jokers as the rules give them), hence a known state with the next seat to move, whose learned
shares give the mover's own. It plays the action of highest share (the lowest action index among equals). At a
finished game the shares are the rules' own (the highest totals share the win): nothing is learned there.

The network (:class:`ShareValue`) reads :func:`table_features` and gives ``MAX_PLAYERS`` logits, one per seat;
the shares are their softmax over the table's seats. It is evaluated with numpy here, so playing needs no torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
from typing_extensions import override

from agents.learned.model_files import ModelLoadError, check_trained_rules
from agents.learned.planN_files import (
    PRIOR_EXTRA,
    SEAT_EXTRA,
    TABLE_SIZES,
    LeadPrior,
    PlanNNetwork,
    network_for,
    planN_file_path,
    read_planN_file,
)
from agents.learned.planN_turn import decision_values, outcome_key_count, turn_outcomes
from agents.policies.table_reading import TableReadingPolicy, best_with_fallback
from agents.solvers.sheet_solver import TurnArrays
from agents.solvers.win_chances import kept_per_turn
from yacht_env.actions import ActionLayout
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RuleSet, rule_set
from yacht_env.table.outcome import win_shares

PREFIX = "planN:"
TIE_TOLERANCE = 1e-6  # shares this close count as equal (the network is float32); the lowest action index decides
END_VALUES_KEPT = 5_000  # turns whose end values (rows x hands, float32: 13 KB each) are kept for later decisions


class Tables(NamedTuple):
    """Every seat's sheet at a turn start, seats relative to the mover (mover first, then in play order): (B, n) each."""

    open_bits: np.ndarray
    upper: np.ndarray  # upper subtotal capped at the bonus threshold (0 without an upper bonus)
    yahtzee: np.ndarray  # 1 where the Yahtzee box holds its full points (0 without an extra-Yahtzee bonus)
    totals: np.ndarray

    @classmethod
    def start(cls, rules: RuleSet, games: int, num_players: int) -> Tables:
        """``games`` tables of ``num_players`` before the first turn."""
        shape = (games, num_players)
        zeros = np.zeros(shape, dtype=np.int64)
        return cls(np.full(shape, rules.all_open, dtype=np.int64), zeros, zeros.copy(), zeros.copy())

    def take(self, index) -> Tables:
        """The tables at ``index``."""
        return Tables(*(part[index] for part in self))


class SheetFeatures:
    """What :func:`table_features` needs of a rule set (and of a lead prior's points to come), computed once."""

    def __init__(self, rules: RuleSet, points_to_come: np.ndarray | None = None):
        self.rules = rules
        self.points_to_come = None if points_to_come is None else np.asarray(points_to_come, dtype=np.float64)
        self.seat_width = rules.num_rows + SEAT_EXTRA + (0 if points_to_come is None else PRIOR_EXTRA)
        self.num_rows = rules.num_rows
        self.shifts = np.arange(rules.num_rows)
        self.cap = max(1, rules.upper_cap)
        best = np.maximum(rules.hand_scores.max(axis=0), rules.joker_hand_scores.max(axis=0)).astype(np.int64)
        upper = np.array([(rules.upper_bits >> c) & 1 for c in range(self.num_rows)], dtype=np.int64)
        self.upper_best = best * upper  # the most each upper row can still add to the subtotal

    def seat(self, open_bits, upper, yahtzee, totals, lead_scale) -> np.ndarray:
        """One seat's inputs, (B, num_rows + SEAT_EXTRA): present, open rows, sheet, its total against the mover's."""
        rows = (open_bits[:, None] >> self.shifts) & 1
        has_upper = self.rules.upper_cap > 0
        to_come = rows @ self.upper_best
        reached = (upper >= self.rules.upper_cap) & has_upper
        out_of_reach = has_upper & ~reached & (upper + to_come < self.rules.upper_cap)
        sheet = np.stack(
            [
                np.ones(len(rows)),
                upper / self.cap,
                reached,
                out_of_reach,
                yahtzee,
                totals / 100.0,
                totals * lead_scale,
                rows.sum(axis=1) / self.num_rows,
            ],
            axis=1,
        )
        return np.concatenate([sheet[:, :1], rows, sheet[:, 1:]], axis=1)

    def prior_inputs(self, points: np.ndarray, expected_lead: np.ndarray, lead_scale: np.ndarray) -> np.ndarray:
        """One seat's inputs from the lead prior, (B, PRIOR_EXTRA): its points to come and its expected lead over the
        mover, as is and scaled by the rows open (the last: the input the prior's logit reads).
        """
        return np.stack([points / 100.0, expected_lead / 100.0, expected_lead * lead_scale], axis=1)


def table_features(sheets: SheetFeatures, tables: Tables) -> np.ndarray:
    """The network's input of each table, (B, num_features) float32: ``MAX_PLAYERS`` seat blocks from the mover
    (a seat's total given as its lead over the mover's, also scaled by ``10 sqrt(1 + rows open at the table)``; with a
    lead prior, then its points to come and its expected final total's lead over the mover's, as is and so scaled;
    a seat the table lacks is all zeros), then the table size one-hot (2 .. ``MAX_PLAYERS``) and the share of rows open.
    """
    count, n = tables.open_bits.shape
    rows_open = sum(((tables.open_bits >> c) & 1).sum(axis=1) for c in range(sheets.num_rows))
    lead_scale = 1.0 / (10.0 * np.sqrt(1.0 + rows_open))
    leads = tables.totals - tables.totals[:, :1]
    blocks = [
        sheets.seat(tables.open_bits[:, j], tables.upper[:, j], tables.yahtzee[:, j], leads[:, j], lead_scale) for j in range(n)
    ]
    if sheets.points_to_come is not None:
        points = sheets.points_to_come[tables.open_bits, tables.upper, tables.yahtzee]
        expected_leads = leads + points - points[:, :1]
        blocks = [
            np.concatenate([block, sheets.prior_inputs(points[:, j], expected_leads[:, j], lead_scale)], axis=1)
            for j, block in enumerate(blocks)
        ]
    blocks += [np.zeros((count, sheets.seat_width))] * (MAX_PLAYERS - n)
    size = np.zeros((count, MAX_PLAYERS - 1))
    size[:, n - 2] = 1.0
    share_open = rows_open / (n * sheets.num_rows)
    return np.concatenate([*blocks, size, share_open[:, None]], axis=1).astype(np.float32)


def prior_lead_columns(sheets: SheetFeatures) -> np.ndarray:
    """The input each seat's logit adds under a lead prior: the last of its block (its scaled expected lead)."""
    return np.arange(MAX_PLAYERS) * sheets.seat_width + sheets.seat_width - 1


def softmax_shares(logits: np.ndarray, n: int) -> np.ndarray:
    """The softmax of the first ``n`` logits of each row: the seats' shares, (B, n) float64."""
    logits = np.asarray(logits[:, :n], dtype=np.float64)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


class ShareValue:
    """``W(tables)``: every seat's learned share of the win (an MLP's logits over :func:`table_features`), exact at the end.

    ``layers``: the network's ``(weight, bias)`` pairs, weight ``(out, in)``; ReLU between them, ``MAX_PLAYERS`` logits
    out. ``table_sizes``: the table sizes it plays (those it learned at). ``prior``: a :class:`LeadPrior` (None: none),
    whose inputs the network reads and whose weight times each seat's scaled expected lead is added to its logit.
    """

    def __init__(
        self,
        rules: RuleSet | str,
        layers: list[tuple[np.ndarray, np.ndarray]],
        table_sizes=TABLE_SIZES,
        prior: LeadPrior | None = None,
    ):
        self.rules = rule_set(rules)
        self.layers = [(np.ascontiguousarray(w, dtype=np.float32).T.copy(), np.asarray(b, dtype=np.float32)) for w, b in layers]
        self.table_sizes = tuple(table_sizes)
        self.prior = prior
        self.sheets = SheetFeatures(self.rules, None if prior is None else prior.points_to_come)
        self.lead_columns = prior_lead_columns(self.sheets)

    def logits(self, features: np.ndarray) -> np.ndarray:
        """The network's output for (B, num_features) inputs, (B, MAX_PLAYERS) float32."""
        h = features
        for i, (weight, bias) in enumerate(self.layers):
            h = h @ weight + bias
            if i < len(self.layers) - 1:
                np.maximum(h, 0.0, out=h)
        if self.prior is not None:
            h = h + np.float32(self.prior.weight) * features[:, self.lead_columns]
        return h

    def __call__(self, tables: Tables) -> np.ndarray:
        """Each seat's share of the win at each table, (B, n) float64, seats as ``tables`` lists them."""
        count, n = tables.open_bits.shape
        shares = np.empty((count, n))
        over = (tables.open_bits == 0).all(axis=1)
        shares[over] = win_shares(tables.totals[over])
        live = np.flatnonzero(~over)
        if live.size:
            shares[live] = softmax_shares(self.logits(table_features(self.sheets, tables.take(live))), n)
        return shares


class TurnEnds:
    """What each turn of a batch can lead to, and every seat's share at each of its ends, under a :class:`ShareValue`."""

    def __init__(self, value: ShareValue):
        self.value = value
        self.kernel = TurnArrays(value.rules).kernel
        self.alike = value.rules.alike_hands.astype(np.bool_)
        self.key_space = int(outcome_key_count(self.kernel))

    def outcomes(self, tables: Tables):
        """``(out_index (B, C, H), counts (B,), rows, gains, uppers, yahtzees (B, M))`` of the movers' turns."""
        count = len(tables.open_bits)
        rules = self.value.rules
        out_index = np.empty((count, rules.num_rows, rules.dice.num_hands), dtype=np.int64)
        rows, gains, uppers, yahtzees = parts = [np.zeros((count, self.key_space), dtype=np.int64) for _ in range(4)]
        open_bits, upper, yahtzee = (np.ascontiguousarray(part[:, 0]) for part in tables[:3])  # the mover's sheet
        counts = turn_outcomes(self.kernel, self.alike, open_bits, upper, yahtzee, out_index, rows, gains, uppers, yahtzees)
        width = int(counts.max()) if count else 0
        return out_index, counts, *(np.ascontiguousarray(part[:, :width]) for part in parts)

    def __call__(self, tables: Tables):
        """``(out_index, ends (B, M, n), outcomes)``: ``ends[i, m]`` is every seat's share (the mover's first) after
        turn ``i`` ends in its outcome ``m``; ``outcomes`` is :meth:`outcomes`' tuple.
        """
        outcomes = self.outcomes(tables)
        out_index, counts, rows, gains, uppers, yahtzees = outcomes
        count, n = tables.open_bits.shape
        game, m = np.nonzero(np.arange(rows.shape[1])[None, :] < counts[:, None])
        after = advance(tables.take(game), rows[game, m], gains[game, m], uppers[game, m], yahtzees[game, m])
        ends = np.zeros((count, rows.shape[1], n))
        ends[game, m] = np.roll(self.value(after), 1, axis=1)  # the next frame lists the mover last
        return out_index, ends, outcomes


def advance(tables: Tables, rows, gains, uppers, yahtzees) -> Tables:
    """The tables after each mover ends its turn in ``rows`` with ``gains`` points, listed from the next seat."""
    open_bits = tables.open_bits.copy()
    open_bits[:, 0] &= ~(np.int64(1) << rows)
    upper, yahtzee, totals = tables.upper.copy(), tables.yahtzee.copy(), tables.totals.copy()
    upper[:, 0], yahtzee[:, 0], totals[:, 0] = uppers, yahtzees, totals[:, 0] + gains
    return Tables(*(np.roll(part, -1, axis=1) for part in (open_bits, upper, yahtzee, totals)))


class PlanNPlanner:
    """Each action's planned share of the win at a turn's decisions, under a :class:`ShareValue`."""

    def __init__(self, value: ShareValue):
        self.value = value
        self.rules = value.rules
        self.ends = TurnEnds(value)
        layout = ActionLayout(self.rules)
        self.first_score, self.num_actions = layout.first_score_action, layout.num_actions
        self.keep_after_reroll = self.rules.dice.keep_after_reroll.astype(np.int64)
        self.shape = (self.rules.num_rows, self.rules.dice.num_hands)
        self._kept: dict[tuple, np.ndarray] = {}

    def end_values(self, tables: Tables) -> np.ndarray:
        """(B, C, H) float32: the mover's share after scoring hand ``h`` in row ``c``, ``-inf`` where not allowed."""
        out_index, ends, _ = self.ends(tables)
        mine = np.take_along_axis(ends[:, :, 0], np.maximum(out_index, 0).reshape(len(ends), -1), axis=1)
        return np.where(out_index >= 0, mine.reshape(out_index.shape), -np.inf).astype(np.float32)

    def action_values(self, tables: Tables, hands, rolls_left) -> np.ndarray:
        """(B, num_actions) float64: the mover's planned share after each action, ``-inf`` where illegal."""
        if np.any(tables.open_bits[:, 0] <= 0) or np.any(tables.open_bits >= 1 << self.rules.num_rows):
            raise ValueError("a decision needs at least one open row of the mover's, within the rule set's rows")
        keys = [tuple(row) for row in np.concatenate(tables, axis=1).tolist()]
        compute = lambda index: self.end_values(tables.take(index))
        end = kept_per_turn(self._kept, keys, compute, self.shape, END_VALUES_KEPT, np.float32)
        count = len(end)
        flat = np.arange(self.shape[0] * self.shape[1], dtype=np.int64).reshape(self.shape)
        out_index = np.where(np.isfinite(end), flat[None], -1)
        out = np.full((count, self.num_actions), -np.inf)
        hands, rolls_left = (np.ascontiguousarray(part, dtype=np.int64).reshape(-1) for part in (hands, rolls_left))
        ends = end.reshape(count, -1, 1).astype(np.float64)
        decision_values(
            self.ends.kernel, out_index, ends, np.arange(count), hands, rolls_left, self.keep_after_reroll, self.first_score, out
        )
        return out


class PlanNPolicy(TableReadingPolicy):
    """Plays the action of highest planned share of the win at a table of 2 to 5 (the lowest action index among equals)."""

    def __init__(self, value: ShareValue, name: str = "planN", num_players: int = 2):
        if num_players not in value.table_sizes:
            sizes = ", ".join(str(size) for size in value.table_sizes)
            raise ValueError(f"{name} plays at tables of {sizes} players (those it learned at), got {num_players!r}")
        super().__init__(value.rules, num_players)
        self.name = name
        self.planner = PlanNPlanner(value)

    @classmethod
    def load(cls, path: str, rules=None, num_players: int = 2) -> PlanNPolicy:
        """The policy of the planN file at ``path`` (or a shipped one by name), for a table of ``num_players`` under ``rules``."""
        rules = rule_set(rules)
        meta, networks = read_planN_file(planN_file_path(path))
        check_trained_rules("planN file", path, meta, rules)
        return cls(share_value(rules, network_at(meta, networks, num_players, path)), f"{PREFIX}{path}", num_players)

    def tables(self, observations) -> tuple[Tables, np.ndarray, np.ndarray]:
        """The table each observation shows (from the observer), with the observers' hands and rolls left."""
        hands, rolls_left, open_bits, totals = self.read(observations)
        count, rules = len(hands), self.rules
        upper, yahtzee = np.zeros((count, self.num_players), np.int64), np.zeros((count, self.num_players), np.int64)
        if rules.has_bonus_or_joker:
            own_upper, own_full = self.table_encoding.decode_sheet_batch(observations)
            upper[:, 0], yahtzee[:, 0] = own_upper, own_full
            if "other_upper_totals" in observations:
                upper[:, 1:] = np.asarray(observations["other_upper_totals"], dtype=np.int64).reshape(count, -1)
            if "other_yahtzee_box_full" in observations:
                yahtzee[:, 1:] = np.asarray(observations["other_yahtzee_box_full"], dtype=np.int64).reshape(count, -1)
        upper = np.minimum(upper, rules.upper_cap)
        yahtzee = yahtzee if rules.tracks_yahtzee_box else np.zeros_like(yahtzee)
        other_flags = np.asarray(observations["other_open_categories"], dtype=np.int64).reshape(count, self.num_players - 1, -1)
        seats_open = np.concatenate([open_bits[:, None], other_flags @ self._open_weights], axis=1)
        other_totals = np.asarray(observations["other_totals"], dtype=np.int64).reshape(count, -1)
        all_totals = np.concatenate([totals[:, None], other_totals], axis=1)
        return Tables(seats_open, upper, yahtzee, all_totals), hands, rolls_left

    def chances(self, observations) -> np.ndarray:
        """Each action's planned share of the win at each table observation, (N, num_actions); ``-inf`` where illegal."""
        tables, hands, rolls_left = self.tables(observations)
        return self.planner.action_values(tables, hands, rolls_left)

    @override
    def act_batch(self, observations, action_masks):
        lowest = lambda tied: np.zeros((len(tied), self.planner.num_actions))  # argmax keeps the lowest index
        return best_with_fallback(self.chances(observations), action_masks, lowest, TIE_TOLERANCE)


def shipped_planner(rules: RuleSet, num_players: int) -> PlanNPlanner | None:
    """The planner of the shipped ``planN:<rules>`` file for a table of ``num_players`` under ``rules``, kept once loaded;
    None where none is shipped for those rules (by name and content) or it did not learn that table size.
    """
    from agents.learned.planN_files import SHIPPED_PLANN

    path = SHIPPED_PLANN / f"{rules.name}.safetensors"
    if not path.is_file():
        return None
    if path not in _shipped:
        meta, networks = read_planN_file(path)
        _shipped[path] = None if meta["rules_fingerprint"] != rules.fingerprint else [share_value(rules, n) for n in networks]
    values = _shipped[path] or []
    k = next((k for k, value in enumerate(values) if num_players in value.table_sizes), None)
    if k is None or values[k].rules.fingerprint != rules.fingerprint:
        return None
    if (path, k) not in _planners:
        _planners[path, k] = PlanNPlanner(values[k])
    return _planners[path, k]


_shipped: dict[Path, list[ShareValue] | None] = {}
_planners: dict[tuple[Path, int], PlanNPlanner] = {}  # by file and network


def share_value(rules: RuleSet | str, network: PlanNNetwork) -> ShareValue:
    """The :class:`ShareValue` of one network of a planN file."""
    return ShareValue(rules, network.layers, network.table_sizes, network.prior)


def planN_rules(path: str) -> str:
    """The rule set a planN file (or a shipped one by name) was trained on, read and checked from the file."""
    return read_planN_file(planN_file_path(path))[0]["rules"]


def load_value(path: str | Path, num_players: int) -> ShareValue:
    """The :class:`ShareValue` of the network of a planN file that plays at a table of ``num_players``."""
    meta, networks = read_planN_file(Path(path))
    return share_value(meta["rules"], network_at(meta, networks, num_players, str(path)))


def network_at(meta: dict, networks: list[PlanNNetwork], num_players: int, path: str) -> PlanNNetwork:
    """The network of the planN file at ``path`` that plays at a table of ``num_players``, else ``ModelLoadError``."""
    network = network_for(networks, num_players)
    if network is None:
        sizes = ", ".join(str(size) for size in meta["table_sizes"])
        raise ModelLoadError(f"planN file {path!r} learned at tables of {sizes} players; this table has {num_players}")
    return network
