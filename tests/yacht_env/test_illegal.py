"""One illegal-action rule: every env answers an illegal action the same way (yacht_env.illegal)."""

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

from yacht_env import IllegalActionError, YachtEnv
from yacht_env.illegal import IllegalActionJudge
from yacht_env.table import pettingzoo_env as multiplayer
from yacht_env.table.env import YachtTableEnv
from yacht_env.vector_env import YachtVectorEnv

REROLL_ALL = 31  # legal on the first roll of a turn


class Solitaire:
    """``Yacht-v0``: ``step`` gives ``(reward, truncated, illegal_action, illegal_reason)``."""

    make = YachtEnv

    def __init__(self, **settings):
        self.env = self.make(**settings)

    def reset(self, seed):
        return self.env.reset(seed=seed)[0]

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        assert not terminated
        return float(reward), bool(truncated), info["illegal_action"], info.get("illegal_reason")

    def observation(self):
        return self.env.unwrapped._observation()


class Table(Solitaire):
    """``YachtTable-v0`` against one random opponent, the learner in seat 0."""

    make = YachtTableEnv


class Vector(Solitaire):
    """A vector env of one game; a truncated game's last info is its ``final_info``."""

    def __init__(self, **settings):
        self.env = YachtVectorEnv(1, **settings)

    def reset(self, seed):
        return self.env.reset(seed=seed)[0][0]

    def step(self, action):
        obs, rewards, terminated, truncated, infos = self.env.step(np.array([action]))
        assert not terminated[0]
        info = infos["final_info"] if truncated[0] else infos
        reason = info["illegal_reason"][0] if info.get("_illegal_reason", [False])[0] else None
        return float(rewards[0]), bool(truncated[0]), bool(info["illegal_action"][0]), reason

    def observation(self):
        return self.env._observations()[0]


class PettingZoo(Solitaire):
    """The PettingZoo env at a table of two; ``player_0`` acts first."""

    def __init__(self, **settings):
        self.env = multiplayer.raw_env(num_players=2, **settings)

    def reset(self, seed):
        self.env.reset(seed=seed)
        return self.observation()

    def step(self, action):
        self.env.step(action)
        agent = "player_0"
        assert self.env.agent_selection == agent and not self.env.terminations[agent]
        info = self.env.infos[agent]
        return self.env.rewards[agent], self.env.truncations[agent], info["illegal_action"], info.get("illegal_reason")

    def observation(self):
        return self.env.observe("player_0")["observation"]


ENVS = [Solitaire, Vector, Table, PettingZoo]


def answers(env_class, actions, **settings):
    env = env_class(**settings)
    env.reset(seed=5)
    return [env.step(action) for action in actions]


@pytest.mark.parametrize("env_class", ENVS, ids=lambda c: c.__name__)
def test_every_env_penalizes_counts_and_truncates_alike(env_class):
    # Two illegal actions, a legal re-roll (which does not reset the count), then the third illegal one.
    got = answers(env_class, [0, 0, REROLL_ALL, 0], illegal_action_penalty=2.5, max_illegal_actions=3)
    rerolls_no_dice = YachtEnv().layout.why_illegal(0, 2, 0)
    assert got == [
        (-2.5, False, True, rerolls_no_dice),
        (-2.5, False, True, rerolls_no_dice),
        (0.0, False, False, None),
        (-2.5, True, True, rerolls_no_dice),
    ]


@pytest.mark.parametrize("env_class", ENVS, ids=lambda c: c.__name__)
def test_every_env_truncates_at_the_default_limit(env_class):
    got = answers(env_class, [0] * 100)
    assert [truncated for _, truncated, _, _ in got] == [False] * 99 + [True]
    assert {reward for reward, _, _, _ in got} == {-1.0}


@pytest.mark.parametrize("env_class", ENVS, ids=lambda c: c.__name__)
def test_a_limit_of_one_truncates_at_the_first_illegal_action(env_class):
    assert answers(env_class, [0], max_illegal_actions=1, illegal_action_penalty=0)[0][:2] == (0.0, True)


def test_a_judge_made_alone_has_the_envs_defaults_and_counts_from_where_it_is_told():
    assert IllegalActionJudge() == YachtEnv().illegal_judge == IllegalActionJudge("penalize", 1.0, 100)
    judge = IllegalActionJudge(max_illegal_actions=3)
    assert [judge.judge("why", count) for count in range(3)] == [(1, -1.0, False), (2, -1.0, False), (3, -1.0, True)]
    assert judge.judge("why", 5) == (6, -1.0, True)  # past a limit lowered during the episode: truncated too
    with pytest.raises(dataclasses.FrozenInstanceError):
        judge.max_illegal_actions = 5  # only through the env's setting, which checks it again
    assert IllegalActionJudge(illegal_action_penalty=2).illegal_action_penalty == 2.0
    assert type(IllegalActionJudge(illegal_action_penalty=2).illegal_action_penalty) is float


@pytest.mark.parametrize("env_class", ENVS, ids=lambda c: c.__name__)
def test_every_env_raises_alike_and_changes_nothing(env_class):
    env = env_class(illegal_action="raise")
    before = env.reset(seed=5)
    with pytest.raises(IllegalActionError, match="^(sub-env 0: )?action 0 re-rolls no dice, which is never allowed"):
        env.step(0)
    np.testing.assert_array_equal(env.observation(), before)
    assert env.step(REROLL_ALL) == (0.0, False, False, None)


@pytest.mark.parametrize("env_class", ENVS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "settings, message",
    [
        ({"illegal_action": "ignore"}, "illegal_action 'ignore' is not supported; expected 'penalize' or 'raise'"),
        ({"max_illegal_actions": 0}, "max_illegal_actions must be an integer of at least 1, got 0"),
        ({"max_illegal_actions": True}, "max_illegal_actions must be an integer of at least 1, got True"),
    ],
)
def test_every_env_refuses_bad_illegal_action_settings_alike(env_class, settings, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        env_class(**settings)


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: YachtEnv(**kw),
        lambda **kw: YachtVectorEnv(2, **kw),
        lambda **kw: YachtTableEnv(opponents=[], **kw),
        lambda **kw: multiplayer.raw_env(num_players=2, **kw),
    ],
    ids=["YachtEnv", "YachtVectorEnv", "YachtTableEnv", "YachtMultiplayerEnv"],
)
def test_an_unknown_setting_names_the_env_and_what_it_takes(make):
    with pytest.raises(TypeError, match=r"^Yacht\w*Env\(\) got an unexpected keyword argument 'illegal_actions'; its arguments"):
        make(illegal_actions="raise")


def test_setting_the_mode_on_an_env_checks_it_again():
    env = YachtEnv()
    env.illegal_action = "raise"
    assert env.illegal_judge == IllegalActionJudge("raise", 1.0, 100)
    with pytest.raises(ValueError, match="illegal_action 'ignore' is not supported"):
        env.illegal_action = "ignore"
    assert env.illegal_action == "raise"


@pytest.mark.parametrize(
    "make",
    [YachtEnv, lambda: YachtVectorEnv(2), YachtTableEnv, lambda: multiplayer.raw_env(num_players=2)],
    ids=["Yacht-v0", "vector", "YachtTable-v0", "pettingzoo"],
)
def test_render_without_a_mode_names_every_mode_of_the_env(make):
    env = make()
    modes = env.metadata["render_modes"]
    allowed = ", ".join(repr(mode) for mode in modes[:-1]) + f" or {modes[-1]!r}"
    with pytest.warns(UserWarning, match=f"pass render_mode={allowed} to the env"):
        assert env.render() is None


def test_render_modes_are_checked_against_the_env_metadata():
    with pytest.raises(ValueError, match=r"^render_mode 'human' is not supported; expected one of None, 'ansi', 'rgb_array'$"):
        YachtVectorEnv(2, render_mode="human")
    assert YachtTableEnv(render_mode="rgb_array").render_mode == "rgb_array"
    assert gym.make("YachtTable-v0", render_mode="rgb_array").unwrapped.render_mode == "rgb_array"
