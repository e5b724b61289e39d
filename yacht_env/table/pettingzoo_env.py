"""Yacht for 1 to 5 players as a PettingZoo AEC env.

>>> from yacht_env.table import pettingzoo_env
>>> env = pettingzoo_env.env(num_players=3, reward_mode="win")
>>> env.reset(seed=0)
>>> for agent in env.agent_iter():
...     observation, reward, termination, truncation, info = env.last()
...     action = None if termination or truncation else env.action_space(agent).sample(observation["action_mask"])
...     env.step(action)
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from typing_extensions import Unpack, override

from yacht_env.env import check_action
from yacht_env.extras import needs_extra
from yacht_env.settings import GameArguments
from yacht_env.table.outcome import win_rewards, win_shares
from yacht_env.table.settings import TableSettings

with needs_extra("multiplayer"):
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers


def env(**kwargs) -> AECEnv:
    """The multi-player env wrapped as PettingZoo's classic envs are (``step`` before ``reset`` raises)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class YachtMultiplayerEnv(TableSettings, AECEnv):
    """## Description
    Yacht at a table of 1 to 5 players (rules in ``RULES.md``, or any rule set of
    ``yacht_env.rules.RULE_SETS``). Each player has their own column of rows (12 in Yacht) and
    their own dice; players take whole turns in rotation: ``player_0`` plays turn 1
    (roll, up to two re-rolls, score one row), then ``player_1`` plays turn 1, and so on; after
    every player has filled every row, the highest total wins, and equal highest totals share
    the win. The agent to act keeps acting until it scores (a re-roll does not pass the turn).

    ## Action Space
    ``Discrete(32 + rows)`` for every agent (44 for Yacht), the layout of ``Yacht-v0``: ``1..31``
    re-roll the dice whose bit is set (bit ``i`` <-> die ``i`` of the sorted dice), ``32 + c``
    scores row ``c`` of the rule set. Action ``0`` is never legal.

    ## Observation Space
    ``Dict(observation=..., action_mask=Box(0, 1, (44,), int8))``. ``action_mask`` marks the legal
    actions of the agent to act and is all zeros for every other agent and after the game.
    ``observation`` is a table observation (see :mod:`yacht_env.table.encoding`): the agent's own
    dice, rolls left and open rows in ``observation_encoding`` (default ``"flat"``), then the
    agent's total / 100, then for each other player, in the order they play after the agent,
    their total / 100 and their open-row flags. For ``flat`` Yacht that is ``Box(18 + 1 + 13 (n - 1),)``.
    Under rules with bonuses the own part also shows the agent's upper subtotal and Yahtzee box,
    as in ``Yacht-v0``, each other player's block ends with that player's (``dict``:
    ``other_upper_totals``, ``other_bonus_reached``, ``other_yahtzee_box_full``), and the masks
    follow the forced joker rule.
    Between its turns a player's own part shows the first roll of its next turn (each player's
    dice are fixed by the seed, so this tells it nothing it could act on); after its last turn,
    the dice it last scored with and 0 rolls left.

    ## Rewards
    ``reward_mode="win"`` (default): 0 until the game ends; then the winners share +1 and the
    others share -1 (one winner of two players: +1 / -1; two of three tie for first: +1/2 each,
    -1 for the third). When every player shares the win, everyone gets 0, so one player always
    gets 0. ``reward_mode="score"``: what a player's total gains when it scores (the row's points
    and any bonus they earn), so a player's return is its final total. In both modes an ignored illegal action costs the
    acting agent ``illegal_action_penalty``.

    ## Starting State
    Every row of every player open; ``player_0`` to act with its first roll made. Every player's
    dice for the whole game are drawn at reset from the env's seeded generator, in seat order
    (``player_0``'s dice for a seed are those of ``Yacht-v0`` for that seed): one seed, one dice
    stream per player, whatever anyone plays. ``reset(options={"faces": faces})`` plays given dice
    instead, ``faces`` of shape (num_players, 12, 3, 5).

    ## Episode End
    Every agent is terminated once the last player fills its last row. Every agent is truncated
    if one agent plays ``max_illegal_actions`` illegal actions in a game.

    ## Information
    ``infos[agent]``: ``total`` (bonuses included), ``turn`` (the 1-based turn the agent is playing or plays next)
    and ``illegal_action``, with ``illegal_reason`` after an illegal action; at the end,
    ``win_share`` (1/k for each of k winners, else 0).

    ## Arguments
    - ``num_players``: 1 to 5 (default 2); agents are ``player_0 .. player_{n-1}`` in seat order.
    - ``reward_mode``: ``"win"`` (default) or ``"score"``.
    - ``observation_encoding``: the own part, ``"flat"`` (default), ``"counts"``, ``"onehot"``,
      ``"features"`` or ``"dict"``.
    - ``illegal_action``: ``"penalize"`` (default: ignored, reported in ``infos``, costs
      ``illegal_action_penalty``, the same agent acts again) or ``"raise"`` (``IllegalActionError``).
    - ``illegal_action_penalty`` (default 1.0), ``max_illegal_actions`` (default 100), ``rules``
      (a name of ``yacht_env.rules.RULE_SETS`` such as ``"yahtzee"``, or a ``RuleSet``; default the
      rules of ``RULES.md``), ``render_mode`` (``None``, ``"ansi"``, ``"human"``).

    An action outside the action space raises ``ValueError`` and changes nothing.
    """

    metadata = {"name": "yacht_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False, "render_fps": 4}

    def __init__(
        self,
        num_players: int = 2,
        *,
        reward_mode: str = "win",
        render_mode: str | None = None,
        **settings: Unpack[GameArguments],
    ):
        super().__init__()
        self._set_game_settings(render_mode, **settings)
        self._set_table_settings(num_players, reward_mode)
        self.possible_agents = [f"player_{seat}" for seat in range(self.num_players)]
        self.seat_names = self.possible_agents
        self.agents: list[str] = []
        mask_space = spaces.Box(low=0, high=1, shape=(self.layout.num_actions,), dtype=np.int8)
        self.observation_spaces = {
            agent: spaces.Dict({"observation": self.encoding.space, "action_mask": mask_space}) for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(self.layout.num_actions) for agent in self.possible_agents}
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._np_random: np.random.Generator | None = None
        self._started = False

    # -- PettingZoo API ------------------------------------------------------------------------

    @override
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    @override
    def action_space(self, agent):
        return self.action_spaces[agent]

    @override
    def reset(self, seed: int | None = None, options: dict | None = None):
        faces = self._given_faces(options)
        if seed is not None or self._np_random is None:
            self._np_random, _ = seeding.np_random(seed)
        self._deal(faces, self._np_random)
        self._illegal_counts = [0] * self.num_players
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: self._info(seat) for seat, agent in enumerate(self.agents)}
        self.agent_selection = self.possible_agents[0]
        self._shown(None)

    @override
    def observe(self, agent):
        if agent not in self._seat_of:
            raise ValueError(f"unknown agent {agent!r}; this table has {', '.join(self._seat_of)}")
        seat = self._seat_of[agent]
        observation = self.encoding.of_seat(self.tables, 0, seat)
        acting = (
            agent in self.agents and agent == self.agent_selection and not (self.terminations[agent] or self.truncations[agent])
        )
        mask = self.tables.legal_masks([0])[0] if acting else np.zeros(self.layout.num_actions, dtype=np.int8)
        return {"observation": observation, "action_mask": mask}

    @override
    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        action = check_action(action, self.layout.num_actions)
        seat = self._seat_of[agent]
        reason = self._why_illegal(action, seat)
        if reason is not None:  # judged before the rewards are cleared: a refused action changes nothing
            self._illegal_counts[seat], penalty, truncated = self.illegal_judge.judge(reason, self._illegal_counts[seat])
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if reason is not None:
            self.rewards[agent] = penalty
            self.infos[agent] = self._info(seat, illegal_reason=reason)
            if truncated:
                self.truncations = {a: True for a in self.agents}
        else:
            points = int(self.tables.play([action], [0])[0][0])
            if self.reward_mode == "score":
                self.rewards[agent] = float(points)
            self.infos[agent] = self._info(seat)
            if self.tables.over[0]:
                self._end_game()
            self.agent_selection = self.possible_agents[int(self.tables.seat[0])]
        self._accumulate_rewards()
        self._shown(None)

    @override
    def close(self):
        pass

    # -- read-only view of the game ------------------------------------------------------------

    @property
    def totals(self) -> dict[str, int]:
        """Every player's points so far."""
        return {agent: int(self.tables.totals[0, seat]) for seat, agent in enumerate(self.possible_agents)}

    @property
    def sheets(self) -> dict[str, tuple[int | None, ...]]:
        """Every player's column: points written in each row, None where still open."""
        return {
            agent: tuple(None if points < 0 else int(points) for points in self.tables.sheets[0, seat])
            for seat, agent in enumerate(self.possible_agents)
        }

    # -- internals -----------------------------------------------------------------------------

    def _end_game(self):
        totals = self.tables.totals[0]
        if self.reward_mode == "win":
            for agent, reward in zip(self.possible_agents, win_rewards(totals)):
                self.rewards[agent] = float(reward)
        for seat, (agent, share) in enumerate(zip(self.possible_agents, win_shares(totals))):
            self.infos[agent] = dict(self._info(seat), win_share=float(share))
        self.terminations = {agent: True for agent in self.agents}

    def _info(self, seat: int, illegal_reason: str | None = None) -> dict:
        info: dict[str, object] = {
            "total": int(self.tables.totals[0, seat]),
            "turn": int(self.tables.turn([0], [seat])[0]),
            "illegal_action": illegal_reason is not None,
        }
        if illegal_reason is not None:
            info["illegal_reason"] = illegal_reason
        return info


raw_env = YachtMultiplayerEnv
