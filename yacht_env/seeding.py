"""The seed of each seat at a table: one convention for every multi-player game of the project.

A table dealt with seed ``S`` deals every seat's dice from ``S`` (:func:`yacht_env.game.draw_table_dice`),
and seeds the policy in seat ``s`` with ``seat_seed(S, s) = S + s``, as Gymnasium's vector envs
seed sub-env ``i`` with ``seed + i``. ``YachtTable-v0`` (its opponents), the tournaments (policy
``i`` of a batch of deals) and ``yacht play`` (agents, and the seat seeds that records of
schema 1 hold) all seed seats with :func:`seat_seed`.

Records name seeds, not random streams, so replaying one depends on this convention: it does not
change.
"""

from __future__ import annotations

__all__ = ["seat_seed"]


def seat_seed(seed: int, seat: int) -> int:
    """The seed of seat ``seat`` (0-based) at a table seeded with ``seed``: ``seed + seat``."""
    return int(seed) + int(seat)
