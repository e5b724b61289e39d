"""What every Yacht env shares beneath its own code: the common constructor arguments, checked
the same way everywhere, the illegal-action judge they make, and rendering by ``render_mode``.

The envs (``Yacht-v0``, its vector env, ``YachtTable-v0`` and the PettingZoo env) derive from
:class:`GameSettings`; each names its render modes once, in ``metadata["render_modes"]``, and every
message about render modes is made from that list.
"""

from __future__ import annotations

import gymnasium as gym
from typing_extensions import TypedDict

from yacht_env.actions import ActionLayout
from yacht_env.encoding import make_encoding
from yacht_env.game import check_playable
from yacht_env.illegal import IllegalActionJudge, JudgeSetting
from yacht_env.rules import RuleSet, rule_set

__all__ = ["GameArguments", "GameOverError", "GameSettings"]


class GameOverError(RuntimeError):
    """``step`` was called after the episode ended; call ``reset`` first."""


class GameArguments(TypedDict, total=False):
    """The keyword arguments every Yacht env takes (``## Arguments`` of ``YachtEnv``; defaults in
    :meth:`GameSettings._set_game_settings`).
    """

    rules: RuleSet | str | None
    observation_encoding: str
    illegal_action: str
    illegal_action_penalty: float
    max_illegal_actions: int


def _either(names: list[str]) -> str:
    """``'a', 'b' or 'c'``."""
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


class GameSettings:
    """The constructor arguments every Yacht env shares, and what follows from them.

    A subclass sets ``self._started`` once a game exists and gives ``_frame()`` (the
    ``"rgb_array"`` picture) and ``_text()`` (the ``"ansi"`` text) for the modes it lists.
    """

    metadata: dict
    render_mode: str | None
    _started: bool

    illegal_action = JudgeSetting()
    illegal_action_penalty = JudgeSetting()
    max_illegal_actions = JudgeSetting()

    def _set_game_settings(self, render_mode, **settings):
        unknown = [name for name in settings if name not in GameArguments.__annotations__]
        if unknown:
            # Named after the env the user built, not this helper, and listing what it takes.
            raise TypeError(
                f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}; "
                f"its arguments are render_mode, {', '.join(GameArguments.__annotations__)} (and its own)"
            )
        self._check_game_settings(render_mode, **settings)

    def _check_game_settings(
        self,
        render_mode,
        rules=None,
        observation_encoding="flat",
        illegal_action="penalize",
        illegal_action_penalty=1.0,
        max_illegal_actions=100,
    ):
        modes = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in modes:
            allowed = ", ".join(repr(mode) for mode in [None, *modes])
            raise ValueError(f"render_mode {render_mode!r} is not supported; expected one of {allowed}")
        self.illegal_judge = IllegalActionJudge(illegal_action, illegal_action_penalty, max_illegal_actions)
        self.rules = check_playable(rule_set(rules))
        self.render_mode = render_mode
        self.layout = ActionLayout(self.rules)
        self.encoding = make_encoding(observation_encoding, self.rules)

    # -- rendering -----------------------------------------------------------------------------

    def render(self):
        """The game in ``render_mode``: the text (``"ansi"``), the text printed (``"human"``) or a
        picture (``"rgb_array"``, a uint8 array of shape (height, width, 3)).
        """
        if not self._can_render():
            return None
        if self.render_mode == "rgb_array":
            return self._frame()
        text = self._text()
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def _can_render(self, what: str = "a game") -> bool:
        """Whether ``render()`` has something to draw: False (with Gymnasium's warning naming this
        env's modes) without a render mode; ``GameOverError`` before the first reset.
        """
        if self.render_mode is None:
            modes = _either(self.metadata["render_modes"])
            gym.logger.warn(f"render() called without a render_mode; pass render_mode={modes} to the env")
            return False
        if not self._started:
            raise GameOverError(f"render() needs {what}: call reset() first")
        return True

    def _shown(self, result):
        """``result``, once the game is printed in ``"human"`` mode (the end of every ``reset`` and ``step``)."""
        if self.render_mode == "human":
            self.render()
        return result

    def _frame(self):
        raise NotImplementedError

    def _text(self) -> str:
        raise NotImplementedError
