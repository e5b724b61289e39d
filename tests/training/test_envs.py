"""The training envs (agents.training.envs): each plays the config's rules, encoding, penalty and table, PPO sees the
rewards scaled while the monitor keeps them raw, and the envs of a vector are seeded and seated as the config says."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from agents.training.config import load_config  # noqa: E402
from agents.training.envs import make_single_env, make_training_env  # noqa: E402
from yacht_env.rules import RULE_SETS  # noqa: E402

TABLE = ["env.num_players=3", "env.opponents=[greedy,optimal]"]


def illegal_action(env) -> int:
    return int(np.flatnonzero(env.unwrapped.action_masks() == 0)[0])


def test_a_solitaire_env_plays_the_config_s_rules_and_encoding_and_scales_its_rewards_for_ppo():
    config = load_config(None, ["env.rules=yatzy", "env.observation_encoding=onehot", "env.reward_scale=0.25"]).env
    env = make_single_env(config)
    assert env.unwrapped.rules is RULE_SETS["yatzy"] and env.unwrapped.encoding.name == "onehot"
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    _, reward, *_ = env.step(illegal_action(env))
    assert reward == pytest.approx(-0.25 * config.illegal_action_penalty)


def test_the_monitor_inside_keeps_the_raw_returns():
    config = load_config(None, ["env.reward_scale=0.5"]).env
    env = make_single_env(config)
    env.reset(seed=1)
    scaled, done, info = 0.0, False, {}
    while not done:
        action = int(np.flatnonzero(env.unwrapped.action_masks())[-1])  # the last legal row: score, never re-roll
        _, reward, terminated, truncated, info = env.step(action)
        scaled += reward
        done = terminated or truncated
    assert info["episode"]["r"] == pytest.approx(2 * scaled) and info["episode"]["l"] == 12


def test_a_table_env_seats_the_learner_among_the_config_s_opponents_under_its_reward_mode():
    config = load_config(None, [*TABLE, "env.reward_mode=score", "env.illegal_action_penalty=3"]).env
    env = make_single_env(config, seat=2)
    table = env.unwrapped
    assert table.seat == 2 and table.reward_mode == "score" and table.num_players == 3
    assert sorted(getattr(policy, "name", "") for seat, policy in table.policy_at.items() if seat != 2) == ["greedy", "optimal"]
    env.reset(seed=0)
    _, reward, *_ = env.step(illegal_action(env))
    assert reward == pytest.approx(-3 * config.reward_scale)


def test_the_envs_of_a_vector_take_every_seat_in_turn_and_its_seed():
    config = load_config(None, [*TABLE, "env.num_envs=5"]).env
    vector = make_training_env(config, seed=7)
    assert vector.get_attr("seat") == [0, 1, 2, 0, 1]
    again, other = make_training_env(config, seed=7), make_training_env(config, seed=8)
    first = vector.reset()
    np.testing.assert_array_equal(first, again.reset())
    assert not np.array_equal(first, other.reset())


def test_a_vectorized_config_gets_the_in_process_vector_env_seeded_alike():
    from agents.training.sb3_vector import SB3YachtVecEnv

    config = load_config(None, ["env.vectorized=true", "env.num_envs=4"]).env
    vector = make_training_env(config, seed=3)
    assert isinstance(vector, SB3YachtVecEnv) and vector.num_envs == 4
    np.testing.assert_array_equal(vector.reset(), make_training_env(config, seed=3).reset())
    assert not np.array_equal(make_training_env(config, seed=3).reset(), make_training_env(config, seed=4).reset())


def test_a_table_of_two_is_a_table():
    config = load_config(None, ["env.num_players=2", "env.opponents=[greedy]"]).env
    assert make_single_env(config, seat=1).unwrapped.seat == 1


def test_env_i_of_a_vector_is_dealt_from_seed_plus_i():
    config = load_config(None, ["env.num_envs=3"]).env
    first = make_training_env(config, seed=11).reset()
    for i in range(3):
        observation, _ = make_single_env(config).reset(seed=11 + i)
        np.testing.assert_array_equal(first[i], observation)
