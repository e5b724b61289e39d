"""What an illegal action costs: the one rule every Yacht env applies.

An action inside the action space that the rules forbid now (action 0, a re-roll with no rolls
left, a filled row, a row the forced joker rule closes) is answered in one of two ways, chosen
with the env argument ``illegal_action``:

- ``"raise"``: :class:`~yacht_env.actions.IllegalActionError` naming why, and nothing changes.
- ``"penalize"`` (the default): the action is ignored (the game stays as it was), the acting
  player's reward is ``-illegal_action_penalty``, the illegal action is counted, and once the
  episode's count reaches ``max_illegal_actions`` the episode is truncated, so that an agent that
  only plays illegal actions cannot run an episode forever.

As pgx answers illegal actions once in ``core.Env.step`` beneath every game, every env here
(``Yacht-v0``, its vector env, ``YachtTable-v0`` and the PettingZoo env) leaves the answer to an
:class:`IllegalActionJudge`; the vector env's compiled loop calls :func:`penalize` per game, the
same function the judge calls for one game.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from numba import njit

from yacht_env.actions import IllegalActionError

__all__ = ["ILLEGAL_ACTION_MODES", "IllegalActionJudge", "JudgeSetting", "penalize"]

ILLEGAL_ACTION_MODES = ("penalize", "raise")


@njit(cache=True)
def penalize(count, penalty, max_illegal_actions):
    """One more ignored illegal action after ``count`` of them: ``(count + 1, reward, truncated)``."""
    count += 1
    return count, -penalty, count >= max_illegal_actions


@dataclass(frozen=True)
class IllegalActionJudge:
    """The env arguments ``illegal_action``, ``illegal_action_penalty`` and ``max_illegal_actions``,
    checked when made, and the answer to an illegal action that follows from them.
    """

    illegal_action: str = "penalize"
    illegal_action_penalty: float = 1.0
    max_illegal_actions: int = 100

    def __post_init__(self):
        if self.illegal_action not in ILLEGAL_ACTION_MODES:
            allowed = " or ".join(repr(mode) for mode in ILLEGAL_ACTION_MODES)
            raise ValueError(f"illegal_action {self.illegal_action!r} is not supported; expected {allowed}")
        limit = self.max_illegal_actions
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"max_illegal_actions must be an integer of at least 1, got {limit!r}")
        object.__setattr__(self, "illegal_action_penalty", float(self.illegal_action_penalty))

    def refuse(self, reason: str | None) -> None:
        """In ``"raise"`` mode, ``IllegalActionError(reason)`` for an illegal action (``reason`` not None)."""
        if reason is not None and self.illegal_action == "raise":
            raise IllegalActionError(reason)

    def judge(self, reason: str, count: int) -> tuple[int, float, bool]:
        """The answer to an illegal action (why: ``reason``) after ``count`` of them in this episode.

        Raises in ``"raise"`` mode; else ``(count + 1, reward, truncated)``.
        """
        self.refuse(reason)
        count, reward, truncated = penalize(count, self.illegal_action_penalty, self.max_illegal_actions)
        return int(count), float(reward), bool(truncated)


class JudgeSetting:
    """An env attribute that its :class:`IllegalActionJudge` keeps: setting it checks the judge again."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, env, owner=None):
        return self if env is None else getattr(env.illegal_judge, self.name)

    def __set__(self, env, value):
        env.illegal_judge = replace(env.illegal_judge, **{self.name: value})
