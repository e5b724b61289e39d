"""Two-player planning with a learned chance of winning: the ``plan2:PATH`` policy.

At a table of two, under rules whose rows score on their own (no bonus, no joker: ``yacht``,
``yacht_exercism``, a rule set of one's own), the state at the start of a turn is the one the exact solve
uses (:mod:`agents.two_player`): the mover's open rows, the other's open rows and the mover's lead. The
agent learns ``W(state)``, the mover's chance of winning (a tie counts 1/2), from its own self-play games
(:mod:`agents.training.plan2_train`). At each decision it values every keep and row of the turn exactly
through the dice probabilities, ending the turn in row ``c`` with ``p`` points being worth
``1 - W(other, mover - c, -(lead + p))`` to the mover: the turn of the exact solve's kernel
(:func:`agents.two_player.kernel.turn_from_follow`), fed a learned value instead of a solved layer.

Where the rules alone settle the game, nothing is learned (:meth:`Settlement.settled`): with no row left to either
player the lead decides; a lead above the most the other can still score is a certain win, and a deficit
above the most the mover can still score a certain loss.

The network (:class:`WinValue`) reads :func:`win_features`: one 0/1 per open row of the mover, one per open
row of the other, ``lead / 100``, ``lead / (10 sqrt(1 + rows open))`` and the share of all rows still open;
its output is a logit. It is evaluated with numpy here, so playing needs no torch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typing_extensions import override

from agents.learned.model_files import check_trained_rules
from agents.learned.plan2_files import plan2_file_path, read_plan2_file
from agents.policies.table_reading import TableReadingPolicy, best_with_fallback
from agents.solvers.win_chances import kept_per_turn
from agents.two_player import check_rules, maximizing_policy
from agents.two_player.decide import learned_action_values
from agents.two_player.kernel import kernel_arrays
from agents.two_player.layout import PairLayout
from yacht_env.actions import ActionLayout
from yacht_env.rules import RuleSet, rule_set

PREFIX = "plan2:"
TIE_TOLERANCE = 1e-6  # chances this close count as equal (the value is float32); the lowest action index decides
END_VALUES_KEPT = 20_000  # turns whose end values are kept for the turn's later decisions


def win_features(num_rows: int, movers: np.ndarray, others: np.ndarray, leads: np.ndarray) -> np.ndarray:
    """The network's input of each state, (N, 2 * num_rows + 3) float32 (see the module's docstring)."""
    shifts = np.arange(num_rows)
    mover_rows = (np.asarray(movers)[:, None] >> shifts) & 1
    other_rows = (np.asarray(others)[:, None] >> shifts) & 1
    open_count = mover_rows.sum(axis=1) + other_rows.sum(axis=1)
    leads = np.asarray(leads, dtype=np.float64)
    extra = np.stack([leads / 100.0, leads / (10.0 * np.sqrt(1.0 + open_count)), open_count / (2 * num_rows)], axis=1)
    return np.concatenate([mover_rows, other_rows, extra], axis=1).astype(np.float32)


class Settlement:
    """What the rules alone say of a state: the most each set of open rows can still score."""

    def __init__(self, rules: RuleSet):
        self.most_to_come = PairLayout(rules).most_to_come.astype(np.int64)

    def settled(self, movers, others, leads) -> tuple[np.ndarray, np.ndarray]:
        """``(known, value)``: which states the rules settle, and the mover's chance of winning there (0, 1/2 or 1)."""
        movers, others, leads = (np.asarray(part, dtype=np.int64) for part in (movers, others, leads))
        win = leads > self.most_to_come[others]  # the other cannot catch up even if the mover scores nothing more
        loss = leads + self.most_to_come[movers] < 0
        over = (movers == 0) & (others == 0)
        value = np.where(win, 1.0, np.where(loss, 0.0, 0.5))
        return win | loss | over, value


def sigmoid(logits: np.ndarray) -> np.ndarray:
    """The logistic function, without overflow warnings for large logits."""
    return 0.5 * (1.0 + np.tanh(0.5 * logits))


class WinValue:
    """``W(mover, other, lead)``: a learned chance of winning (an MLP's logit over :func:`win_features`), exact where settled.

    ``layers``: the network's ``(weight, bias)`` pairs, weight ``(out, in)``; ReLU between them, one logit out.
    """

    def __init__(self, rules: RuleSet | str, layers: list[tuple[np.ndarray, np.ndarray]]):
        self.rules = check_rules(rules)
        self.layers = [(np.ascontiguousarray(w, dtype=np.float32).T.copy(), np.asarray(b, dtype=np.float32)) for w, b in layers]
        self.settlement = Settlement(self.rules)
        self.num_rows = self.rules.num_rows

    def logits(self, features: np.ndarray) -> np.ndarray:
        """The network's output for (N, num_features) inputs, (N,) float32."""
        h = features
        for i, (weight, bias) in enumerate(self.layers):
            h = h @ weight + bias
            if i < len(self.layers) - 1:
                np.maximum(h, 0.0, out=h)
        return h[:, 0]

    def __call__(self, movers, others, leads) -> np.ndarray:
        """The mover's chance of winning at each state, (N,) float64 in [0, 1]."""
        known, value = self.settlement.settled(movers, others, leads)
        unknown = np.flatnonzero(~known)
        if unknown.size:
            movers, others, leads = (np.asarray(part, dtype=np.int64)[unknown] for part in (movers, others, leads))
            value[unknown] = sigmoid(self.logits(win_features(self.num_rows, movers, others, leads)).astype(np.float64))
        return value


class EndValues:
    """The worth to the mover of ending its turn in each open row with each score, under a :class:`WinValue`."""

    def __init__(self, value: WinValue):
        self.value = value
        rules = value.rules
        scores = rules.hand_scores.astype(np.int64)  # (H, C)
        pairs = [(c, p) for c in range(rules.num_rows) for p in np.unique(scores[:, c])]
        self.pair_rows = np.array([c for c, _ in pairs], dtype=np.int64)
        self.pair_points = np.array([p for _, p in pairs], dtype=np.int64)
        self.width = int(scores.max()) + 1

    def __call__(self, movers, others, leads) -> np.ndarray:
        """(N, C, width) float32: ``[i, c, p] = 1 - W(others[i], movers[i] - c, -(leads[i] + p))`` for open ``c``, else 0."""
        movers, others, leads = (np.asarray(part, dtype=np.int64).reshape(-1) for part in (movers, others, leads))
        out = np.zeros((len(movers), self.value.num_rows, self.width), dtype=np.float32)
        state, pair = np.nonzero((movers[:, None] >> self.pair_rows[None, :]) & 1)
        rows, points = self.pair_rows[pair], self.pair_points[pair]
        chances = self.value(others[state], movers[state] & ~(1 << rows), -(leads[state] + points))
        out[state, rows, points] = 1.0 - chances
        return out


class Plan2Planner:
    """Each action's chance of winning at a turn's decisions, planned exactly inside the turn under a :class:`WinValue`."""

    def __init__(self, value: WinValue):
        self.value = value
        self.rules = value.rules
        self.end_values = EndValues(value)
        self.arrays = kernel_arrays(self.rules, PairLayout(self.rules))
        self.policy = maximizing_policy()
        self.keep_after_reroll = self.rules.dice.keep_after_reroll.astype(np.int64)
        self.first_score = ActionLayout(self.rules).first_score_action
        self.num_actions = ActionLayout(self.rules).num_actions
        self._kept: dict[tuple[int, int, int], np.ndarray] = {}

    def turn_end_values(self, movers, others, leads) -> np.ndarray:
        """:class:`EndValues` of each decision's turn; the same for every decision of a turn, so kept and reused."""
        keys = list(zip(movers.tolist(), others.tolist(), leads.tolist()))
        compute = lambda index: self.end_values(movers[index], others[index], leads[index])
        shape = (self.rules.num_rows, self.end_values.width)
        return kept_per_turn(self._kept, keys, compute, shape, END_VALUES_KEPT, np.float32)

    def action_values(self, movers, others, leads, hands, rolls_left) -> np.ndarray:
        """(N, num_actions) float64: the mover's chance of winning after each action, ``-inf`` where illegal."""
        movers, others, leads, hands, rolls_left = (
            np.ascontiguousarray(part, dtype=np.int64).reshape(-1) for part in (movers, others, leads, hands, rolls_left)
        )
        if np.any(movers <= 0) or np.any(movers >= 1 << self.rules.num_rows):
            raise ValueError("a decision needs at least one open row of the mover's, within the rule set's rows")
        end = self.turn_end_values(movers, others, leads)
        out = np.empty((len(movers), self.num_actions), dtype=np.float32)
        learned_action_values(
            self.arrays, self.policy, end, movers, hands, rolls_left, self.keep_after_reroll, self.first_score, out
        )
        return out.astype(np.float64)


class Plan2Policy(TableReadingPolicy):
    """Plays the action of highest planned chance of winning at a table of two (the lowest action index among equals)."""

    def __init__(self, value: WinValue, name: str = "plan2", num_players: int = 2):
        if num_players != 2:
            raise ValueError(f"{name} plays at a table of 2 players (a two-player value), got {num_players!r}")
        super().__init__(value.rules, 2)
        self.name = name
        self.planner = Plan2Planner(value)

    @classmethod
    def load(cls, path: str, rules=None, num_players: int = 2) -> Plan2Policy:
        """The policy of the plan2 file at ``path`` (or a shipped one by name), for a table under ``rules``."""
        rules = rule_set(rules)
        meta, layers = read_plan2_file(plan2_file_path(path))
        check_trained_rules("plan2 file", path, meta, rules)
        return cls(WinValue(rules, layers), f"{PREFIX}{path}", num_players)

    def chances(self, observations) -> np.ndarray:
        """Each action's planned chance of winning at each table observation, (N, num_actions); ``-inf`` where illegal."""
        hands, rolls_left, open_bits, totals = self.read(observations)
        other_totals = np.asarray(observations["other_totals"], dtype=np.int64).reshape(-1)
        other_flags = np.asarray(observations["other_open_categories"], dtype=np.int64).reshape(len(hands), -1)
        return self.planner.action_values(open_bits, other_flags @ self._open_weights, totals - other_totals, hands, rolls_left)

    @override
    def act_batch(self, observations, action_masks):
        lowest = lambda tied: np.zeros((len(tied), self.planner.num_actions))  # argmax keeps the lowest index
        return best_with_fallback(self.chances(observations), action_masks, lowest, TIE_TOLERANCE)


def plan2_rules(path: str) -> str:
    """The rule set a plan2 file (or a shipped one by name) was trained on, read and checked from the file."""
    return read_plan2_file(plan2_file_path(path))[0]["rules"]


def load_value(path: str | Path) -> WinValue:
    """The :class:`WinValue` of a plan2 file."""
    meta, layers = read_plan2_file(Path(path))
    return WinValue(meta["rules"], layers)
