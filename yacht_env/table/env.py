"""``Yacht-v0`` at a table: one learner against fixed opponent policies, and the factory behind
``gymnasium.make("Yacht-v0", ...)``.

    gym.make("Yacht-v0")                                              # solitaire: a YachtEnv
    gym.make("Yacht-v0", num_players=2, opponents=["optimal"])        # a YachtTableEnv
    gym.make("Yacht-v0", opponents=["greedy", "random"], reward_mode="win", seat=1)
"""

from __future__ import annotations

import numpy as np
import gymnasium as gym
from gymnasium import spaces

from yacht_env import render_rgb
from yacht_env.actions import IllegalActionError
from yacht_env.env import GameOverError, GameSettings, YachtEnv, check_action
from yacht_env.rules import RuleSet
from yacht_env.table.game import (
    Tables,
    check_num_players,
    check_reward_mode,
    check_table_dice,
    draw_table_dice,
    render_table,
    win_rewards,
    win_shares,
)
from yacht_env.table.encoding import make_table_encoding, policy_observations


def make_yacht_env(num_players: int | None = None, opponents=None, **kwargs) -> gym.Env:
    """``Yacht-v0``: the solitaire :class:`YachtEnv` unless there is a table to play at.

    ``num_players`` defaults to one more than the number of ``opponents``; with one player (and no
    opponents) this is exactly ``YachtEnv(**kwargs)``, and ``reward_mode`` may only be ``"score"``.
    """
    opponents = [] if opponents is None else opponents
    if isinstance(opponents, (str, bytes)) or not hasattr(opponents, "__len__"):
        raise ValueError(f"opponents must be a list of policies or policy names, got {opponents!r}")
    num_players = check_num_players(len(opponents) + 1 if num_players is None else num_players)
    if num_players > 1:
        return YachtTableEnv(num_players=num_players, opponents=opponents, **kwargs)
    if opponents:
        raise ValueError(f"a one-player game has no opponents, got {list(opponents)!r}; pass num_players={len(opponents) + 1}")
    if kwargs.pop("seat", 0) != 0:
        raise ValueError("a one-player game has only seat 0")
    if check_reward_mode(kwargs.pop("reward_mode", "score")) != "score":
        raise ValueError("reward_mode 'win' needs opponents: with one player every game is a win")
    return YachtEnv(**kwargs)


make_yacht_env.metadata = YachtEnv.metadata  # gymnasium.make checks render modes against it


def resolve_opponents(opponents, num_players: int, rules: RuleSet) -> list:
    """Opponent policies from names (``random``, ``greedy``, ``optimal``, ``ppo:PATH``) or policy objects."""
    if len(opponents) != num_players - 1:
        raise ValueError(
            f"a table of {num_players} players needs {num_players - 1} opponent(s), got {len(opponents)}: {list(opponents)!r}"
        )
    policies = []
    for opponent in opponents:
        if isinstance(opponent, str):
            from agents.table_policy import make_table_policy  # agents is optional for yacht_env

            opponent = make_table_policy(opponent, num_players, rules=rules)
        elif not callable(getattr(opponent, "act_batch", None)):
            raise ValueError(f"opponent {opponent!r} is neither a policy name nor a policy (an object with act_batch)")
        if getattr(opponent, "rules", rules) is not rules:
            raise ValueError(f"opponent {opponent!r} plays other rules than the env's {rules.name!r}")
        policies.append(opponent)
    return policies


class YachtTableEnv(GameSettings, gym.Env):
    """
    ## Description
    ``Yacht-v0`` played by one learner at a table of 2 to 5 players against fixed opponent
    policies (rules in ``RULES.md``, as in :class:`~yacht_env.multiplayer.YachtMultiplayerEnv`):
    every player has their own dice and column, and players take whole turns in rotation. The
    opponents' turns are played inside ``reset`` and ``step``, so the learner only ever sees its
    own decisions.

    ## Action Space
    ``Discrete(44)``, as in ``Yacht-v0``: ``1..31`` re-roll the dice whose bit is set, ``32 + c``
    scores row ``c``. ``info["action_mask"]`` and ``action_masks()`` mark the legal actions.

    ## Observation Space
    The learner's table observation (see :mod:`yacht_env.table.encoding`): its own dice, rolls
    left and open rows in ``observation_encoding`` (default ``"flat"``), its total / 100, then for
    each other player, in the order they play after the learner, their total / 100 and their 12
    open-row flags. ``flat`` at a two-player table is ``Box(0, 6, (32,), float32)``. The same
    layout as the PettingZoo env's ``observation``, so a policy trained here can sit at a
    PettingZoo table or in a tournament.

    ## Rewards
    ``reward_mode="score"`` (default): the points the learner writes, as in solitaire
    ``Yacht-v0``. ``reward_mode="win"``: 0 until the game ends, then the learner's zero-sum share:
    the winners share +1, the others share -1 (so +1 or -1 with one opponent, 0 for a tie of
    two). An ignored illegal action costs ``illegal_action_penalty`` in both modes.

    ## Starting State
    Every row open. Every seat's dice for the whole game are drawn at reset in seat order, as
    the PettingZoo env draws them: the same seed deals the same dice to every seat in both envs.
    The opponents sitting before the learner have played their first turn.
    ``reset(options={"faces": faces})`` plays given dice, shape (num_players, 12, 3, 5). A reset
    with a seed also re-seeds the opponents (``policy.reset``), so a seeded game is reproducible.

    ## Episode End
    ``terminated`` once every player has filled every row (the opponents after the learner play
    their last turns inside the learner's last ``step``). ``truncated`` after
    ``max_illegal_actions`` illegal actions by the learner. ``step`` after the end raises
    ``GameOverError``.

    ## Information
    As ``Yacht-v0`` (``action_mask``, ``total``, ``turn``, ``illegal_action``, ``illegal_reason``),
    plus ``totals`` (every seat's total, seat order) and, at the end, ``win_share`` (1/k if the
    learner is one of k winners, else 0).

    ## Arguments
    - ``num_players``: 2 to 5; ``opponents``: ``num_players - 1`` policies of the ``agents``
      package or their names (``random``, ``greedy``, ``optimal``, ``ppo:PATH``), seated in order
      in the seats other than the learner's.
    - ``seat``: the learner's seat, 0 (default, plays first) to ``num_players - 1``.
    - ``reward_mode``: ``"score"`` (default) or ``"win"``.
    - ``observation_encoding``, ``illegal_action``, ``illegal_action_penalty``,
      ``max_illegal_actions``, ``rules``, ``render_mode``: as for ``Yacht-v0``; an
      ``"rgb_array"`` frame shows the learner's dice and sheet and every player's total.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        num_players: int = 2,
        opponents=("optimal",),
        *,
        seat: int = 0,
        reward_mode: str = "score",
        render_mode: str | None = None,
        rules: RuleSet | None = None,
        observation_encoding: str = "flat",
        illegal_action: str = "penalize",
        illegal_action_penalty: float = 1.0,
        max_illegal_actions: int = 100,
    ):
        self._set_game_settings(render_mode, rules, observation_encoding, illegal_action, illegal_action_penalty, max_illegal_actions)
        self.num_players = check_num_players(num_players, low=2)
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be an integer in 0..{self.num_players - 1}, got {seat!r}")
        self.seat = int(seat)
        self.reward_mode = check_reward_mode(reward_mode)

        self.encoding = make_table_encoding(observation_encoding, self.num_players, self.rules)
        self.opponents = resolve_opponents(list(opponents), self.num_players, self.rules)
        other_seats = [s for s in range(self.num_players) if s != self.seat]
        self.policy_at = dict(zip(other_seats, self.opponents))
        self.tables = Tables(self.rules, self.num_players)
        self.layout = self.tables.layout
        self.action_space = spaces.Discrete(self.layout.num_actions)
        self.observation_space = self.encoding.space
        self.seat_names = [
            "agent" if s == self.seat else getattr(self.policy_at[s], "name", type(self.policy_at[s]).__name__)
            for s in range(self.num_players)
        ]
        self._done = True
        self._started = False

    # -- gymnasium API -------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        faces = (options or {}).get("faces")
        if faces is not None:
            faces = check_table_dice(faces, self.rules, self.num_players)
        super().reset(seed=seed)
        if faces is None:
            faces = draw_table_dice(self.np_random, self.rules, self.num_players)
        if seed is not None:
            for index, policy in enumerate(self.opponents):
                policy.reset(int(np.random.SeedSequence(seed, spawn_key=(index,)).generate_state(1)[0]))
        self.tables.start(faces[None])
        self._started = True
        self._illegal_count = 0
        self._last_reroll = None  # (hand before, re-roll mask) of the learner's last legal re-roll
        self._done = False
        self._play_opponents()
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action):
        if self._done:
            raise GameOverError("the episode has ended (or reset was never called); call reset() before step()")
        action = check_action(action, self.layout.num_actions)
        _, rolls_left, open_bits = (int(part[0]) for part in self.tables.position([0], [self.seat]))
        reason = self.layout.why_illegal(action, rolls_left, open_bits)
        reward = 0.0
        terminated = truncated = False
        if reason is not None:
            if self.illegal_action == "raise":
                raise IllegalActionError(reason)
            self._illegal_count += 1
            reward = -self.illegal_action_penalty
            truncated = self._illegal_count >= self.max_illegal_actions
        else:
            is_reroll = action < self.layout.first_score_action
            self._last_reroll = (int(self.tables.hands[0, self.seat]), action) if is_reroll else None
            points = int(self.tables.play([action], [0])[0])
            if self.reward_mode == "score":
                reward = float(points)
            self._play_opponents()
            terminated = bool(self.tables.over[0])
            if terminated and self.reward_mode == "win":
                reward = float(win_rewards(self.tables.totals[0])[self.seat])
        self._done = terminated or truncated
        info = self._info(illegal_reason=reason)
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, truncated, info

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human' to the env")
            return None
        if not self._started:
            raise GameOverError("render() needs a game: call reset() first")
        if self.render_mode == "rgb_array":
            return self._frame()
        text = render_table(self.tables, 0, self.seat_names)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def action_masks(self) -> np.ndarray:
        """Legal actions as bool, shape (num_actions,) (the sb3-contrib convention)."""
        return self._mask().astype(bool)

    # -- read-only view of the game ------------------------------------------------------------

    @property
    def totals(self) -> tuple[int, ...]:
        """Every seat's points so far, in seat order."""
        return tuple(int(total) for total in self.tables.totals[0])

    @property
    def sheets(self) -> tuple[tuple[int | None, ...], ...]:
        """Every seat's column, in seat order: points written in each row, None where still open."""
        return tuple(tuple(None if p < 0 else int(p) for p in column) for column in self.tables.sheets[0])

    # -- internals -----------------------------------------------------------------------------

    def _play_opponents(self):
        """Play the opponents' decisions until it is the learner's turn or the game is over."""
        tables = self.tables
        while not tables.over[0] and tables.seat[0] != self.seat:
            seat = int(tables.seat[0])
            policy = self.policy_at[seat]
            mask = tables.legal_masks([0])
            action = int(policy.act_batch(policy_observations(policy, tables, [0], [seat]), mask)[0])
            if not (0 <= action < len(mask[0]) and mask[0, action]):
                raise ValueError(f"opponent {self.seat_names[seat]!r} in seat {seat} chose illegal action {action}")
            tables.play([action], [0])

    def _frame(self) -> np.ndarray:
        """The learner's dice and sheet, and every player's total (:mod:`yacht_env.render_rgb`)."""
        tables, rules, seat = self.tables, self.rules, self.seat
        over = bool(tables.over[0])
        shares = win_shares(tables.totals[0]) if over else None
        seats = [
            render_rgb.Seat(name, int(tables.totals[0, s]), bin(int(tables.open_bits[0, s])).count("1"),
                            to_play=not over and int(tables.seat[0]) == s, winner=over and shares[s] > 0)
            for s, name in enumerate(self.seat_names)
        ]  # fmt: skip
        dice = None if over else rules.dice.hands[tables.hands[0, seat]]
        held = None
        if dice is not None and self._last_reroll is not None:
            hand, mask = self._last_reroll
            held = render_rgb.held_dice(rules.dice.hands[hand], mask, dice)
        sheet = [None if points < 0 else int(points) for points in tables.sheets[0, seat]]
        turn = int(tables.turn([0], [seat])[0])
        title = f"{self.seat_names[seat]} (seat {seat + 1} of {self.num_players})"
        return render_rgb.render_frame(rules, dice, int(tables.rolls_left[0, seat]), sheet, turn, held=held, title=title, seats=seats)

    def _mask(self) -> np.ndarray:
        if self.tables.over[0]:
            return np.zeros(self.layout.num_actions, dtype=np.int8)
        return self.tables.legal_masks([0])[0]

    def _observation(self):
        return self.encoding.of_seat(self.tables, 0, self.seat)

    def _info(self, illegal_reason: str | None = None) -> dict:
        info = {
            "action_mask": self._mask(),
            "total": int(self.tables.totals[0, self.seat]),
            "turn": int(self.tables.turn([0], [self.seat])[0]),
            "illegal_action": illegal_reason is not None,
            "totals": self.tables.totals[0].copy(),
        }
        if illegal_reason is not None:
            info["illegal_reason"] = illegal_reason
        if self.tables.over[0]:
            info["win_share"] = float(win_shares(self.tables.totals[0])[self.seat])
        return info
