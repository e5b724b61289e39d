"""The one guard between a policy and the game: a policy that cannot choose is replaced, and the replacement is told.

A policy can fail at a position that no check on loading visited: a learned network's outputs overflow to NaN
(a ``plan2:`` or ``ppo:`` file whose every weight passes the file's checks), a policy of one's own raises, or it
returns an action the mask forbids. :class:`GuardedPolicy` wraps any policy and checks each answer: at the first
failure the fallback (``optimal`` under the policy's rules, reading the same observations: it plays every rule
set and cannot fail) plays in its place for the rest of the game, that is until :meth:`GuardedPolicy.reset`, and
the replacement is told once, through ``on_replace`` (by default a ``WARNING`` of the ``agents.policies.guard``
logger: one line on stderr when nothing else is configured).

:func:`agents.registry.make_policy` and :func:`agents.registry.make_table_policy` guard every policy they build,
of every kind, so ``agents.evaluate``, tournaments, ``yacht play`` and the simulated people play through it; the
server guards each agent seat of each game (:mod:`yacht_play.serve.games`).

A zero-length batch gets a zero-length answer without asking the policy: a report over no decisions asks about none.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from typing_extensions import override

from agents.policies.policy import OptimalPolicy, Policy, PolicyOutputError, describe_position
from yacht_env.actions import ActionLayout

FALLBACK = "optimal"  # the policy that plays for one that could not choose
LOG = logging.getLogger("agents.policies.guard")


@dataclass(frozen=True)
class Replacement:
    """A policy replaced in a game: its name, the fallback's, and why (where it failed and what went wrong, one line)."""

    policy: str
    fallback: str
    reason: str

    @property
    def message(self) -> str:
        """The replacement as one line for a log or a terminal."""
        return (
            f"policy {self.policy} could not choose at {self.reason}; {self.fallback} plays in its place for the rest of the game"
        )


def replacement_note(policy: str, games: int, of_games: int, decisions: int) -> str:
    """One line under a results table whose ``policy`` was replaced in ``games`` of its ``of_games``: its figures
    are then partly the fallback's, which no reader should miss.
    """
    return (
        f"{policy} was replaced by {FALLBACK} in {games:,} of {of_games:,} games ({decisions:,} decisions): "
        f"its figures include {FALLBACK}'s play"
    )


def warn_replaced(notes: list[str]) -> None:
    """The replacement notes once more, on stderr, after the tables: where a log or a pipe still shows them."""
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)


def log_replacement(replacement: Replacement) -> None:
    """The default ``on_replace``: one warning line."""
    LOG.warning("%s", replacement.message)


def fallback_for(policy: Policy) -> Policy:
    """``optimal`` under ``policy``'s rules, fed what ``policy`` is fed: its solitaire observations, or the table
    observations of its ``table_encoding`` (of which it reads the seat's own position).
    """
    fallback = OptimalPolicy(policy.rules, policy.encoding.name)
    table_encoding = getattr(policy, "table_encoding", None)
    if table_encoding is not None:
        fallback.encoding = table_encoding  # it decodes the own position (and sheet state) as any encoding does
    return fallback


def batch_size(action_masks) -> int:
    """The number of positions in a batch: the rows of its masks."""
    return int(np.shape(action_masks)[0])


def first_line(error: BaseException) -> str:
    """An exception as one line: its message's first line, or its type's name when it has none."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def unusable_actions(actions, masks: np.ndarray) -> tuple[int | None, str] | None:
    """``(row, why)`` when ``actions`` are no legal actions for the (N, num_actions) ``masks`` (``row``: the first
    position at fault, None when the answer as a whole is wrong), else None.
    """
    array = np.asarray(actions)
    if array.shape != (len(masks),):
        return None, f"it answered shape {array.shape} for {len(masks)} positions"
    if not (
        np.issubdtype(array.dtype, np.integer) or (np.issubdtype(array.dtype, np.floating) and np.all(array == np.round(array)))
    ):
        return None, f"it answered {array.dtype} values, not action numbers"
    outside = np.flatnonzero((array < 0) | (array >= masks.shape[1]))
    if outside.size:
        return int(outside[0]), f"it chose action {array[outside[0]]}, not one of 0..{masks.shape[1] - 1}"
    illegal = np.flatnonzero(masks[np.arange(len(array)), array.astype(np.int64)] == 0)
    if illegal.size:
        return int(illegal[0]), f"it chose the illegal action {int(array[illegal[0]])}"
    return None


def unusable_probabilities(p, masks: np.ndarray) -> tuple[int | None, str] | None:
    """``(row, why)`` when ``p`` is no (N, num_actions) table of probabilities, each row summing to 1, else None."""
    array = np.asarray(p, dtype=float)
    if array.shape != masks.shape:
        return None, f"it answered shape {array.shape} for {masks.shape[0]} positions of {masks.shape[1]} actions"
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1) | (array < 0).any(axis=1) | (np.abs(array.sum(axis=1) - 1) > 1e-4))
    if bad.size:
        return int(bad[0]), "its probabilities are NaN, infinite, negative or do not sum to 1"
    return None


class GuardedPolicy(Policy):
    """``policy`` behind the guard (see the module's docstring); every attribute not its own is ``policy``'s.

    ``on_replace``: told the :class:`Replacement` once, when the fallback takes over. ``replaced``: that
    replacement, or None while the policy plays. ``fallback``: the policy that takes over (default
    :func:`fallback_for`, built when first needed).
    """

    def __init__(
        self,
        policy: Policy,
        on_replace: Callable[[Replacement], None] | None = None,
        fallback: Policy | None = None,
    ):
        # No Policy.__init__: the rules, encoding and name are the guarded policy's own.
        self.policy = policy
        self.rules = policy.rules
        self.encoding = policy.encoding
        self.name = policy.name
        self.on_replace = on_replace or log_replacement
        self.fallback = fallback
        self.replaced: Replacement | None = None
        self.num_actions = ActionLayout(self.rules).num_actions

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "policy":  # not there while unpickling: no endless lookup
            raise AttributeError(name)
        return getattr(self.policy, name)

    @override
    def act_batch(self, observations, action_masks):
        masks = np.asarray(action_masks)
        if batch_size(masks) == 0:
            return np.zeros(0, dtype=np.int64)
        if self.replaced is None:
            try:
                with np.errstate(over="ignore", invalid="ignore"):  # what overflows shows in the answer, checked here
                    actions = self.policy.act_batch(observations, masks)
                fault = unusable_actions(actions, masks)
            except Exception as error:  # whatever a policy raises, the game goes on without it
                fault = getattr(error, "row", None), first_line(error)
            if fault is None:
                return np.asarray(actions, dtype=np.int64)
            self.replace(observations, masks, *fault)
        return np.asarray(self.fallback_policy().act_batch(observations, masks), dtype=np.int64)

    def action_probabilities(self, observations, action_masks) -> np.ndarray | None:
        """The policy's probability of each action, (N, num_actions); None for a policy that gives none.

        These measure the policy itself, so nothing stands in for it here: outputs that are no probabilities are a
        ``PolicyOutputError`` naming the policy and the position in one line.
        """
        masks = np.asarray(action_masks)
        if batch_size(masks) == 0:
            return np.zeros((0, self.num_actions))
        probabilities = getattr(self.policy, "action_probabilities", None)
        try:
            p = probabilities(observations, masks) if probabilities is not None else None
            fault = None if p is None else unusable_probabilities(p, masks)
        except Exception as error:
            fault = getattr(error, "row", None), first_line(error)
        if fault is not None:
            row, why = fault
            raise PolicyOutputError(
                f"policy {self.name} gives no probabilities at {self.where(observations, masks, row)}: {why}", row
            )
        return None if p is None else np.asarray(p, dtype=float)

    def fallback_policy(self) -> Policy:
        """The policy that plays once this one is replaced."""
        if self.fallback is None:
            self.fallback = fallback_for(self.policy)
        return self.fallback

    def replace(self, observations, masks: np.ndarray, row: int | None, why: str) -> None:
        """Hand the game to the fallback, and tell ``on_replace`` why (once)."""
        fallback = self.fallback_policy()
        self.replaced = Replacement(self.name, fallback.name, f"{self.where(observations, masks, row)}: {why}")
        self.on_replace(self.replaced)

    def where(self, observations, masks: np.ndarray, row: int | None) -> str:
        """The position ``row`` of the batch, for a message; or how many there were when the row is not known."""
        if row is None and len(masks) == 1:
            row = 0
        if row is None or not 0 <= row < len(masks):
            return f"one of {len(masks)} positions"
        try:
            return describe_position(getattr(self.policy, "table_encoding", None) or self.encoding, observations, row)
        except Exception:  # observations the encoding cannot read: the policy's failure is the news, not this
            return f"position {row} of {len(masks)}"

    @override
    def reset(self, seed=None):
        """A new game: the policy plays again, re-seeded."""
        self.replaced = None
        self.policy.reset(seed)

    def __repr__(self) -> str:
        return f"<guarded {self.policy!r}>"


def guard(policy: Policy, on_replace: Callable[[Replacement], None] | None = None) -> GuardedPolicy:
    """``policy`` behind the guard (a policy guarded already as it is, with ``on_replace`` when given)."""
    if isinstance(policy, GuardedPolicy):
        if on_replace is not None:
            policy.on_replace = on_replace
        return policy
    return GuardedPolicy(policy, on_replace)


def unguarded(policy):
    """The policy behind a guard (any other policy as it is)."""
    return policy.policy if isinstance(policy, GuardedPolicy) else policy
