"""``YachtTable-v0``: one learner at a table against fixed opponent policies.

    from agents.registry import make_opponents
    gym.make("YachtTable-v0", opponents=make_opponents(["optimal"]))
    gym.make("YachtTable-v0", opponents=make_opponents(["greedy", "random"]), reward_mode="win", seat=1)
    gym.make("YachtTable-v0", rules="yahtzee", opponents=make_opponents(["optimal"], rules="yahtzee"))

The env takes policy objects; turning names into policies belongs to ``agents``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from typing_extensions import Unpack, override

from yacht_env import render_rgb
from yacht_env.encoding import make_encoding
from yacht_env.env import check_action
from yacht_env.rules import RuleSet
from yacht_env.seeding import seat_seed
from yacht_env.settings import GameArguments, GameOverError
from yacht_env.table.encoding import policy_observations
from yacht_env.table.outcome import MAX_PLAYERS, win_rewards, win_shares
from yacht_env.table.settings import TableSettings
from yacht_env.vector_env import sample_legal_actions


class RandomOpponent:
    """A player who picks uniformly among the legal actions: ``YachtTable-v0``'s default opponent.

    The env's own stand-in, so that the env builds with no arguments; ``agents`` has the
    project's policies (:func:`agents.registry.make_opponents`).
    """

    name = "random"

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.encoding = make_encoding("flat", rules)
        self.reset()

    def act_batch(self, observations, action_masks) -> np.ndarray:
        """One uniformly random legal action per row of ``action_masks``."""
        return sample_legal_actions(action_masks, self.rng)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the choices."""
        self.rng = np.random.default_rng(seed)


def check_opponents(opponents, rules: RuleSet) -> list:
    """The opponents as a list of policy objects, or ``ValueError`` naming what is wrong.

    A policy is any object with ``act_batch(observations, action_masks)`` and ``reset(seed)``
    (the interface of :class:`agents.policies.policy.Policy`); names such as ``"optimal"`` or
    ``"ppo:PATH"`` are turned into policies by ``agents`` (:func:`agents.registry.make_opponents`).
    """
    if isinstance(opponents, (str, bytes)) or not hasattr(opponents, "__len__"):
        raise ValueError(f"opponents must be a list of 1 to {MAX_PLAYERS - 1} policies, got {opponents!r}")
    opponents = list(opponents)
    if not 1 <= len(opponents) <= MAX_PLAYERS - 1:
        raise ValueError(f"opponents must be a list of 1 to {MAX_PLAYERS - 1} policies, got {len(opponents)}")
    for opponent in opponents:
        if isinstance(opponent, str):
            raise ValueError(
                f"opponent {opponent!r} is a policy name; YachtTable-v0 takes policy objects: build them with "
                "agents.registry.make_opponents(names, rules=...)"
            )
        if not callable(getattr(opponent, "act_batch", None)) or not callable(getattr(opponent, "reset", None)):
            raise ValueError(f"opponent {opponent!r} is not a policy (an object with act_batch and reset)")
        if getattr(opponent, "rules", rules) is not rules:
            raise ValueError(f"opponent {opponent!r} plays other rules than the env's {rules.name!r}")
    return opponents


class YachtTableEnv(TableSettings, gym.Env):
    """## Description
    ``YachtTable-v0``: Yacht played by one learner at a table of 2 to 5 players against fixed opponent
    policies (rules in ``RULES.md``, as in :class:`~yacht_env.table.pettingzoo_env.YachtMultiplayerEnv`):
    every player has their own dice and column, and players take whole turns in rotation. The
    opponents' turns are played inside ``reset`` and ``step``, so the learner only ever sees its
    own decisions.

    ## Action Space
    ``Discrete(32 + rows)`` (44 for Yacht), as in ``Yacht-v0``: ``1..31`` re-roll the dice whose bit
    is set, ``32 + c`` scores row ``c``. ``info["action_mask"]`` and ``action_masks()`` mark the
    legal actions (under the forced joker rule, only the rows an extra Yahtzee may go in).

    ## Observation Space
    The learner's table observation (see :mod:`yacht_env.table.encoding`): its own dice, rolls
    left and open rows in ``observation_encoding`` (default ``"flat"``), its total / 100, then for
    each other player, in the order they play after the learner, their total / 100 and their 12
    open-row flags. ``flat`` at a two-player table is ``Box(0, 6, (32,), float32)``. Under rules
    with bonuses the own part also shows the learner's sheet state (upper subtotal, Yahtzee box),
    as ``Yacht-v0``'s observation does, and each other player's block ends with that player's
    sheet state in the same layout (``dict``: ``other_upper_totals``, ``other_bonus_reached``,
    ``other_yahtzee_box_full``), since what they can still score depends on it. The same layout as
    the PettingZoo env's ``observation``, so a policy trained here can sit at a PettingZoo table or in
    a tournament.

    ## Rewards
    ``reward_mode="score"`` (default): what the learner's total gains, as in solitaire
    ``Yacht-v0`` (the row's points and any bonus they earn, so the rewards sum to the final
    total). ``reward_mode="win"``: 0 until the game ends, then the learner's zero-sum share:
    the winners share +1, the others share -1 (so +1 or -1 with one opponent, 0 for a tie of
    two). An ignored illegal action costs ``illegal_action_penalty`` in both modes.

    ## Starting State
    Every row open. Every seat's dice for the whole game are drawn at reset in seat order, as
    the PettingZoo env draws them: the same seed deals the same dice to every seat in both envs.
    The opponents sitting before the learner have played their first turn.
    ``reset(options={"faces": faces})`` plays given dice, shape (num_players, 12, 3, 5). A reset
    with seed ``S`` also re-seeds the opponent in seat ``s`` with ``S + s``
    (:func:`yacht_env.seeding.seat_seed`, as tournaments and ``yacht play`` seed seats), so a
    seeded game is reproducible.

    ## Episode End
    ``terminated`` once every player has filled every row (the opponents after the learner play
    their last turns inside the learner's last ``step``). ``truncated`` after
    ``max_illegal_actions`` illegal actions by the learner. ``step`` after the end raises
    ``GameOverError``.

    ## Information
    As ``Yacht-v0`` (``action_mask``, ``total``, ``turn``, ``illegal_action``, ``illegal_reason``),
    plus ``totals`` (every seat's total, bonuses included, seat order) and, at the end, ``win_share`` (1/k if the
    learner is one of k winners, else 0).

    ## Arguments
    - ``opponents``: by default one :class:`RandomOpponent` (a two-player table against a
      uniformly random player); else 1 to 4 policy objects (``act_batch`` and ``reset``, the interface of
      ``agents.policies.policy.Policy``), seated in order in the seats other than the learner's;
      :func:`agents.registry.make_opponents` builds them from names (``random``, ``greedy``,
      ``optimal``, ``ppo:PATH``).
    - ``num_players``: 2 to 5, ``len(opponents) + 1`` by default (given, it must agree).
    - ``seat``: the learner's seat, 0 (default, plays first) to ``num_players - 1``.
    - ``reward_mode``: ``"score"`` (default) or ``"win"``.
    - ``observation_encoding``, ``illegal_action``, ``illegal_action_penalty``,
      ``max_illegal_actions``, ``render_mode``: as for ``Yacht-v0``; an ``"rgb_array"`` frame
      shows the learner's dice and sheet and every player's total.
    - ``rules``: a name of ``yacht_env.rules.RULE_SETS`` (``"yahtzee"``, ``"yatzy"``, ...) or a
      ``RuleSet`` (default the rules of ``RULES.md``); the opponents must play the same rules.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        opponents=None,
        *,
        num_players: int | None = None,
        seat: int = 0,
        reward_mode: str = "score",
        render_mode: str | None = None,
        **settings: Unpack[GameArguments],
    ):
        self._set_game_settings(render_mode, **settings)
        if opponents is None:  # so that gymnasium.make("YachtTable-v0") and SB3's make_vec_env need no arguments
            opponents = [RandomOpponent(self.rules)] * ((num_players or 2) - 1)
        opponents = check_opponents(opponents, self.rules)
        self._set_table_settings(len(opponents) + 1 if num_players is None else num_players, reward_mode, low=2)
        if len(opponents) != self.num_players - 1:
            raise ValueError(
                f"a table of {self.num_players} players needs {self.num_players - 1} opponent(s), got {len(opponents)}"
            )
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be an integer in 0..{self.num_players - 1}, got {seat!r}")
        self.seat = int(seat)
        self.opponents = opponents
        other_seats = [s for s in range(self.num_players) if s != self.seat]
        self.policy_at = dict(zip(other_seats, self.opponents))
        self.action_space = spaces.Discrete(self.layout.num_actions)
        self.observation_space = self.encoding.space
        self.seat_names = [
            "agent" if s == self.seat else getattr(self.policy_at[s], "name", type(self.policy_at[s]).__name__)
            for s in range(self.num_players)
        ]
        self._done = True
        self._started = False

    # -- gymnasium API -------------------------------------------------------------------------

    @override
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        faces = self._given_faces(options)
        super().reset(seed=seed)
        if seed is not None:
            for seat, policy in self.policy_at.items():
                policy.reset(seat_seed(seed, seat))
        self._deal(faces, self.np_random)
        self._illegal_count = 0
        self._last_reroll = None  # (hand before, re-roll mask) of the learner's last legal re-roll
        self._done = False
        self._play_opponents()
        return self._shown((self._observation(), self._info()))

    @override
    def step(self, action):
        if self._done:
            raise GameOverError("the episode has ended (or reset was never called); call reset() before step()")
        action = check_action(action, self.layout.num_actions)
        reason = self._why_illegal(action, self.seat)
        reward = 0.0
        terminated = truncated = False
        if reason is not None:
            self._illegal_count, reward, truncated = self.illegal_judge.judge(reason, self._illegal_count)
        else:
            is_reroll = action < self.layout.first_score_action
            self._last_reroll = (int(self.tables.hands[0, self.seat]), action) if is_reroll else None
            points = int(self.tables.play([action], [0])[0][0])
            if self.reward_mode == "score":
                reward = float(points)
            self._play_opponents()
            terminated = bool(self.tables.over[0])
            if terminated and self.reward_mode == "win":
                reward = float(win_rewards(self.tables.totals[0])[self.seat])
        self._done = terminated or truncated
        return self._shown((self._observation(), reward, terminated, truncated, self._info(illegal_reason=reason)))

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
            render_rgb.Seat(
                name,
                int(tables.totals[0, s]),
                bin(int(tables.open_bits[0, s])).count("1"),
                to_play=not over and int(tables.seat[0]) == s,
                winner=shares is not None and shares[s] > 0,
            )
            for s, name in enumerate(self.seat_names)
        ]
        dice = None if over else rules.dice.hands[tables.hands[0, seat]]
        held = None
        if dice is not None and self._last_reroll is not None:
            hand, mask = self._last_reroll
            held = render_rgb.held_dice(rules.dice.hands[hand], mask, dice)
        sheet = [None if points < 0 else int(points) for points in tables.sheets[0, seat]]
        turn = int(tables.turn([0], [seat])[0])
        title = f"{self.seat_names[seat]} (seat {seat + 1} of {self.num_players})"
        rolls_left = int(tables.rolls_left[0, seat])
        return render_rgb.render_frame(
            rules, dice, rolls_left, sheet, turn, held=held, title=title, seats=seats, total=int(tables.totals[0, seat])
        )

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
