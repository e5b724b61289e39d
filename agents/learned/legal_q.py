"""Action values restricted to the legal actions: what a Q network's greedy choice and its TD target's max range over.

A Q network gives a value to every action, the illegal ones included; nothing in its training teaches it that
an illegal action is worse (an illegal action is never taken, so its value is never fitted). Every use of the
values therefore masks them first, through :func:`legal_values`: the greedy action of a masked DQN
(:mod:`agents.training.dqn_model`) and of a ``dqn:`` file (:mod:`agents.learned.dqn`), and the max over the next
state's actions in the TD target ``r + gamma * max_a' Q(s', a')``.
"""

from __future__ import annotations

from yacht_env.extras import needs_extra

with needs_extra("train"):
    import torch


def legal_values(q: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """``q`` (N, num_actions) where ``masks`` allows the action, ``-inf`` where it forbids it.

    A row with no legal action (a game over: nothing is left to choose) is all zeros instead, so its max, the
    value of what is left to play, is 0, and never ``-inf`` (which a TD target's ``0 * -inf`` would turn into NaN).
    """
    legal = masks != 0
    nothing_left = ~legal.any(dim=1, keepdim=True)
    illegal = torch.where(nothing_left, torch.zeros((), dtype=q.dtype), torch.full((), -torch.inf, dtype=q.dtype))
    return torch.where(legal, q, illegal)


def greedy_actions(q: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """The legal action of highest value in each row, (N,) int64 (the lowest such action on ties)."""
    return legal_values(q, masks).argmax(dim=1)
