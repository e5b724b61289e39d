"""Bad inputs to the library get a ValueError naming what is allowed; envs pickle."""

import pickle

import gymnasium as gym
import numpy as np
import pytest

from agents.solvers.optimal import open_bits_from, q_values
from yacht_env import YACHT, yacht_v0
from yacht_env.encoding import make_encoding
from yacht_env.env import YachtEnv
from yacht_env.rules import RuleSet, score
from yacht_env.vector_env import YachtVectorEnv


def test_q_values_refuses_a_0_1_integer_mask_instead_of_reading_row_indices():
    """Defect 2: the dict encoding's own int8 open_categories was read as "row 1 open"."""
    observation = make_encoding("dict", YACHT).encode(0, 2, (1 << 12) - 1)
    assert observation["open_categories"].dtype == np.int8
    for ambiguous in (observation["open_categories"], [1] * 12, [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1], ["sixes", 11]):
        with pytest.raises(ValueError, match="names .*indices .*boolean mask of 12"):
            q_values([6, 6, 2, 6, 1], 2, ambiguous)
    as_mask = q_values([6, 6, 2, 6, 1], 2, observation["open_categories"].astype(bool))
    assert np.array_equal(as_mask, q_values([6, 6, 2, 6, 1], 2, list(YACHT.category_names)))
    assert np.isfinite(as_mask[32:]).all()  # every row open, not just row 1
    assert open_bits_from([1]) == 0b10 and open_bits_from(np.array([5, 11])) == (1 << 5) | (1 << 11)


@pytest.mark.parametrize(
    "call",
    [
        lambda: score(np.array(5), "ones"),
        lambda: q_values(np.array(3), 2, ["yacht"]),
        lambda: q_values([6, 6, 2, 6, 1], 2, np.array(3)),
    ],
)
def test_zero_dimensional_arrays_are_value_errors(call):
    """Defect 8: score(np.array(5), ...) and q_values(np.array(3), ...) raised TypeError."""
    with pytest.raises(ValueError, match="shape \\(\\)"):
        call()


def test_the_vector_env_refuses_a_bool_in_an_action_list_as_the_single_env_does():
    """Defect 8: numpy read True as 1 and the vector env played it."""
    env = YachtVectorEnv(num_envs=2)
    env.reset(seed=0)
    before = env.state
    with pytest.raises(ValueError, match="bool"):
        env.step([True, 33])
    assert all(np.array_equal(a, b) for a, b in zip(env.state, before))
    single = YachtEnv()
    single.reset(seed=0)
    with pytest.raises(ValueError):
        single.step(True)


def test_observe_of_a_removed_or_unknown_agent_is_no_key_error():
    """Defect 8: observe() of the last agent removed raised KeyError."""
    env = yacht_v0.env(num_players=2)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(obs["action_mask"].nonzero()[0][-1]))
    assert env.agents == []
    for agent in env.possible_agents:
        assert not env.observe(agent)["action_mask"].any()  # nobody acts any more
    with pytest.raises(ValueError, match="unknown agent 'player_7'; this table has player_0, player_1"):
        env.observe("player_7")


@pytest.mark.parametrize(
    "make",
    [
        lambda: YachtEnv(observation_encoding="dict"),
        lambda: gym.make("Yacht-v0"),
        lambda: YachtVectorEnv(num_envs=3),
        lambda: yacht_v0.env(num_players=3),
    ],
    ids=["YachtEnv", "gym.make", "YachtVectorEnv", "yacht_v0"],
)
def test_every_env_pickles_and_plays_on_identically(make):
    """Defect 8: the vector env's docstring said it pickles; plain pickle failed on every env."""
    env = make()
    env.reset(seed=3)
    copy = pickle.loads(pickle.dumps(env))
    if isinstance(env, YachtVectorEnv):
        for _ in range(30):
            actions = np.array([int(m.nonzero()[0][-1]) for m in env.action_masks()])
            a, b = env.step(actions), copy.step(actions)
            assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        return
    if hasattr(env, "agent_iter"):
        for agent in env.agent_iter(60):
            obs, reward, done, truncated, _ = env.last()
            other = copy.last()
            assert np.array_equal(obs["observation"], other[0]["observation"]) and reward == other[1]
            action = None if done or truncated else int(obs["action_mask"].nonzero()[0][-1])
            env.step(action)
            copy.step(action)
        return
    terminated = False
    while not terminated:
        legal = env.unwrapped.action_masks().nonzero()[0]
        action = int(legal[min(1, len(legal) - 1)])  # the second-lowest legal action: re-rolls while any
        a, b = env.step(action), copy.step(action)
        assert a[1] == b[1] and a[4]["total"] == b[4]["total"] and a[2] == b[2]
        terminated = a[2]


def test_a_custom_rule_set_says_why_it_does_not_pickle():
    custom = RuleSet("three_rows", YACHT.categories[:3])
    with pytest.raises(TypeError, match="'three_rows' is not built in"):
        pickle.dumps(custom)
    assert pickle.loads(pickle.dumps(YACHT)) is YACHT
