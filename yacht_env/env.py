"""The single-player Gymnasium env ``Yacht-v0``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from typing_extensions import Unpack, override

from yacht_env import render_rgb
from yacht_env.game import GameBatch, advance, check_game_dice, compiled_call, draw_game_dice
from yacht_env.illegal import ILLEGAL_ACTION_MODES
from yacht_env.render import render_position
from yacht_env.settings import GameArguments, GameOverError, GameSettings

__all__ = [
    "ILLEGAL_ACTION_MODES",
    "GameOverError",
    "GameSettings",
    "YachtEnv",
    "check_action",
    "check_game_dice",
    "draw_game_dice",
]


def check_action(action, num_actions: int) -> int:
    """The action as an int, or ``ValueError`` naming it and what the space allows."""
    if type(action) is int or (isinstance(action, np.integer) and not isinstance(action, np.bool_)):
        value = int(action)
    elif isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        value = int(action)
    else:
        shape = f" of shape {action.shape}" if isinstance(action, np.ndarray) else ""
        raise ValueError(
            f"action {action!r}{shape} is not in the action space: expected one integer in 0..{num_actions - 1} "
            f"(Discrete({num_actions}))"
        )
    if not 0 <= value < num_actions:
        raise ValueError(f"action {value} is not in the action space: expected an integer in 0..{num_actions - 1}")
    return value


class YachtEnv(GameSettings, gym.Env):
    """## Description
    Solitaire Yacht, the public-domain ancestor of Yahtzee (rules in ``RULES.md``). Each of the 12
    turns starts with a roll of five dice; the player may re-roll any subset of the dice up to twice,
    then must write the dice's score into one empty row of the score sheet. The goal is the highest
    total after 12 turns. The rules come from a :class:`~yacht_env.rules.RuleSet`, so variants
    change the sizes below but not the layout.

    ## Action Space
    ``Discrete(44)``:

    - ``1..31``: re-roll the dice whose bit is set (bit ``i`` <-> die ``i`` of the *sorted* dice in
      the observation; 31 re-rolls all five). Action ``0`` (re-roll nothing) is never legal.
    - ``32 + c``: score the dice in ``yacht_env.CATEGORIES[c]`` (ones, twos, threes, fours, fives,
      sixes, choice, four_of_a_kind, full_house, little_straight, big_straight, yacht) and start the
      next turn with a fresh roll.

    ``info["action_mask"]`` (int8, shape (44,)) marks the legal actions; ``action_masks()`` returns
    it as bool for sb3-contrib's ``MaskablePPO``.

    ## Observation Space
    Chosen with ``observation_encoding`` (see :mod:`yacht_env.encoding`). The default ``"flat"`` is a
    ``Box(0, 6, (18,), float32)``: the five dice sorted ascending (1..6), the rolls left this turn
    (2 after the first roll, 0 after the third) and one 0/1 flag per category (1 = open). ``"counts"``
    replaces the dice by face counts, ``"onehot"`` one-hot encodes dice and rolls left, and
    ``"dict"`` is a ``Dict`` with ``dice``, ``rolls_left`` and ``open_categories``. Under rules
    with bonuses (Yahtzee, Yatzy) every encoding ends with the sheet state the next decisions
    depend on: the upper subtotal (capped at the bonus threshold), whether the bonus is reached,
    and whether the Yahtzee box holds its 50 (see :mod:`yacht_env.encoding`).

    ## Rewards
    What a scoring action adds to the total: the row's points, plus the upper bonus in the step
    whose score reaches its threshold and the extra-Yahtzee bonus for a Yahtzee scored while the
    Yahtzee box holds its full points (rules that have them; RULES.md has none). Rewards sum to
    the final total. 0 for a re-roll. An illegal action (see Arguments) earns
    ``-illegal_action_penalty`` and changes nothing else. Under the forced joker rule the mask
    holds only the rows a Yahtzee may go in.

    ## Starting State
    All 12 categories open, turn 1, the first roll made (rolls left 2). The whole game's dice are
    drawn from ``self.np_random`` at reset (see ``draw_game_dice``): one seed, one dice stream,
    whatever the agent does. ``reset(options={"faces": faces})`` plays a given dice stream of shape
    (12, 3, 5) instead, e.g. to replay a recorded game.

    ## Episode End
    ``terminated`` after the 12th scoring action (the sheet is full). ``truncated`` if the agent
    plays ``max_illegal_actions`` illegal actions in one episode, so that an agent that only plays
    illegal actions cannot run an episode forever. ``step`` after the end raises ``GameOverError``.

    ## Information
    ``action_mask`` (int8), ``total`` (points so far), ``turn`` (1..12, the turn being played),
    ``illegal_action`` (bool) and, after an illegal action, ``illegal_reason``.

    ## Arguments
    - ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the text), ``"human"`` (prints it)
      or ``"rgb_array"`` (``render()`` returns a (480, 640, 3) uint8 picture of the dice, the dice the
      last re-roll kept and the score sheet; needs Pillow, the ``render`` extra).
    - ``rules``: a ``RuleSet`` or the name of one in ``yacht_env.rules.RULE_SETS`` (default ``yacht_env.YACHT``,
      the rules of ``RULES.md``; ``Yahtzee-v0`` and ``Yatzy-v0`` are this env with ``"yahtzee"``
      and ``"yatzy"``). Sizes follow the rules: ``Discrete(32 + rows)`` for five dice.
    - ``observation_encoding``: ``"flat"`` (default), ``"counts"``, ``"onehot"`` or ``"dict"``.
    - ``illegal_action``: ``"penalize"`` (default: the action is ignored, reported in ``info`` and
      costs ``illegal_action_penalty``) or ``"raise"`` (``IllegalActionError``, a ``ValueError``).
    - ``illegal_action_penalty``: points subtracted for an ignored illegal action (default 1.0).
    - ``max_illegal_actions``: illegal actions in one episode before it is truncated (default 100).

    An action outside the action space (``44``, ``-1``, ``2.5``, ``None``, an array of the wrong
    shape) always raises ``ValueError`` and leaves the game as it was.

    ## Version History
    - v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(self, render_mode: str | None = None, **settings: Unpack[GameArguments]):
        self._set_game_settings(render_mode, **settings)
        self.action_space = spaces.Discrete(self.layout.num_actions)
        self.observation_space = self.encoding.space

        # One game at a table of one: the shared transition steps it through length-1 arrays.
        self._game = GameBatch(self.rules, num_players=1, num_tables=1)
        self._action = np.zeros(1, dtype=np.int64)
        self._points = np.zeros(1, dtype=np.int64)
        self._legal = np.zeros(1, dtype=bool)
        self._bind_game_views()
        self._masks = self.layout.legal_masks
        self._forced_joker = self.rules.joker == "forced"
        self._sheet_observed = bool(self.encoding.sheet_width)
        self._started = False
        self._done = True

    # -- gymnasium API -------------------------------------------------------------------------

    @override
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        faces = (options or {}).get("faces")
        if faces is not None:
            faces = check_game_dice(faces, self.rules)
        super().reset(seed=seed)
        if faces is None:
            faces = draw_game_dice(self.np_random, self.rules)
        self._game.start(faces[None, None])
        self._started = True
        self._illegal_count = 0
        self._last_reroll = None  # (hand before, re-roll mask): which dice the frame shows as held
        self._done = False
        self._read_position()
        return self._shown((self._observation(), self._info(False)))

    @override
    def step(self, action):
        if self._done:
            raise GameOverError("the episode has ended (or reset was never called); call reset() before step()")
        action = check_action(action, self.layout.num_actions)
        hand, rolls_left, open_bits = self._hand, self._rolls_left, self._open
        self._action[0] = action
        self._advance(*self._advance_args)
        reward = 0.0
        terminated = truncated = False
        illegal = not self._legal[0]
        if illegal:  # the game is as it was: an illegal action changes nothing
            reason = self.layout.why_illegal(action, rolls_left, open_bits, hand)
            self._illegal_count, reward, truncated = self.illegal_judge.judge(reason, self._illegal_count)
        else:
            self._last_reroll = (hand, action) if action < self._first_score_action else None
            self._read_position()
            if action >= self._first_score_action:
                reward = float(self._points[0])
                terminated = bool(self._over[0])
        self._done = terminated or truncated
        info = self._info(illegal)
        if illegal:
            info["illegal_reason"] = reason
        return self._shown((self._observation(), reward, terminated, truncated, info))

    def _frame(self):
        held = None
        if self._last_reroll is not None:
            hand, mask = self._last_reroll
            held = render_rgb.held_dice(self.rules.dice.hands[hand], mask, self.dice)
        return render_rgb.render_frame(
            self.rules, self.dice, self._rolls_left, self.sheet, self.turn, held=held, total=self.total
        )

    def _text(self):
        return render_position(self.rules, self.dice, self._rolls_left, self.sheet, self.turn, total=self.total)

    def action_masks(self) -> np.ndarray:
        """Legal actions as bool, shape (num_actions,) (the sb3-contrib convention)."""
        return self._mask().astype(bool)

    # -- read-only view of the game ------------------------------------------------------------

    @property
    def dice(self) -> np.ndarray:
        """The current dice, sorted ascending."""
        return self.rules.dice.hands[self._hand].copy()

    @property
    def rolls_left(self) -> int:
        """Re-rolls left this turn (0 once the game is over)."""
        return self._rolls_left

    @property
    def open_categories(self) -> int:
        """Bit set of open categories (bit c <-> ``rules.category_names[c]``)."""
        return self._open

    @property
    def sheet(self) -> tuple[int | None, ...]:
        """Points written in each category, None where still open."""
        return self._game.sheet(0, 0)

    @property
    def total(self) -> int:
        """Points so far, bonuses included."""
        return int(self._totals[0])

    @property
    def turn(self) -> int:
        """The 1-based turn being played (stays at the last turn once the game is over)."""
        return min(int(self._turns_done[0]) + 1, self.rules.num_turns)

    @property
    def state(self) -> tuple[int, int, int]:
        """``(hand index, rolls left, open bit set)``: what the DP solver and encodings take."""
        return self._hand, self._rolls_left, self._open

    @property
    def sheet_state(self) -> tuple[int, int]:
        """``(upper subtotal, Yahtzee box full 0/1)``: what a decision depends on beyond :attr:`state`
        under rules with bonuses (both 0 for rules without them).
        """
        upper, full = self._game.sheet_state([0], [0])
        return int(upper[0]), int(full[0])

    # -- internals -----------------------------------------------------------------------------

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_advance"]  # machine code does not pickle: a copy binds its own on arrival
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bind_game_views()  # a copied view no longer shares memory with the copied game

    def _bind_game_views(self):
        game = self._game
        # The transition's arguments are the same arrays at every step, so its machine code is bound once.
        self._advance_args = (game.all_tables, self._action, game.state, game.arrays, self._points, self._legal)
        self._advance = compiled_call(advance, *self._advance_args)
        self._all_tables, self._first_score_action = game.all_tables, self.layout.first_score_action
        self._hands, self._rolls, self._opens, self._totals, self._turns_done, self._over = (
            array.reshape(-1) for array in (game.hands, game.rolls_left, game.open_bits, game.totals, game.turns_done, game.over)
        )

    def _read_position(self):
        # Python ints index the encoders' tables and the masks faster than numpy scalars.
        self._hand = int(self._hands[0])
        self._rolls_left = int(self._rolls[0])
        self._open = int(self._opens[0])

    def _observation(self):
        if self._sheet_observed:
            return self.encoding.encode(self._hand, self._rolls_left, self._open, *self.sheet_state)
        return self.encoding.encode(self._hand, self._rolls_left, self._open)

    def _mask(self) -> np.ndarray:
        if self._forced_joker:
            return self.layout.legal_mask(self._rolls_left, self._open, self._hand)
        return self._masks[int(self._rolls_left > 0), self._open]

    def _info(self, illegal: bool) -> dict:
        return {
            "action_mask": (self._mask() if self._forced_joker else self._masks[int(self._rolls_left > 0), self._open]).copy(),
            "total": int(self._totals[0]),
            "turn": self.turn,
            "illegal_action": illegal,
        }
