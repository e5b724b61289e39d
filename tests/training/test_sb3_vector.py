"""The stable-baselines3 adapter of the vector env: same training as separate Yacht-v0 envs."""

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from agents.training.config import EnvConfig
from agents.training.envs import make_training_env
from agents.training.sb3_vector import SB3YachtVecEnv
from yacht_env.rules import rule_set


def train(vectorized: bool, encoding: str, steps: int = 2048, rules: str = "yacht"):
    env = make_training_env(EnvConfig(rules=rules, observation_encoding=encoding, num_envs=4, vectorized=vectorized), seed=3)
    assert env.action_space.n == 32 + rule_set(rules).num_rows
    model = MaskablePPO(
        "MultiInputPolicy" if encoding == "dict" else "MlpPolicy",
        env,
        n_steps=64,
        batch_size=64,
        n_epochs=2,
        seed=3,
        device="cpu",
    )
    model.learn(steps)
    episodes = [(info["r"], info["l"]) for info in model.ep_info_buffer]
    return torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach().numpy(), episodes


@pytest.mark.parametrize("encoding, rules", [("features", "yacht"), ("dict", "yacht"), ("features", "yahtzee_forced_joker")])
def test_training_on_the_vector_env_matches_separate_envs_exactly(encoding, rules):
    """Same seed, same config: the same games, the same episode records, the same weights, under the config's rules."""
    separate_weights, separate_episodes = train(False, encoding, rules=rules)
    vector_weights, vector_episodes = train(True, encoding, rules=rules)
    assert len(separate_episodes) > 30
    turns = rule_set(rules).num_rows
    assert all(turns <= length <= 3 * turns for _, length in separate_episodes)  # a game of these rules: 1-3 decisions a turn
    assert vector_episodes == separate_episodes
    np.testing.assert_array_equal(vector_weights, separate_weights)


def test_adapter_reports_masks_and_terminal_observations():
    env = make_training_env(EnvConfig(observation_encoding="flat", num_envs=3, vectorized=True), seed=0)
    obs = env.reset()
    assert obs.shape == (3, 18)
    masks = np.stack(env.env_method("action_masks"))
    assert masks.shape == (3, 44) and masks.dtype == bool and not masks[:, 0].any()
    ended = []
    for _ in range(12):
        env.step_async(np.argmax(masks[:, 32:], axis=1) + 32)  # score the first open row
        obs, rewards, dones, infos = env.step_wait()
        masks = np.stack(env.env_method("action_masks"))
        ended.append(dones)
    assert ended[-1].all() and not np.any(ended[:-1])
    for info in infos:
        assert info["terminal_observation"].shape == (18,) and not info["terminal_observation"][6:].any()
        assert info["episode"]["l"] == 12 and not info["TimeLimit.truncated"]
    assert (obs[:, 6:] == 1).all()  # the next games have started


def play_out(env, masks):
    """Every game scores its first open row each turn to its end; the steps' rewards and the last infos."""
    rewards_seen = []
    for _ in range(12):
        env.step_async(np.argmax(masks[:, 32:], axis=1) + 32)
        obs, rewards, dones, infos = env.step_wait()
        rewards_seen.append(rewards)
        masks = np.stack(env.env_method("action_masks"))
    return np.array(rewards_seen), infos, masks


def test_ppo_sees_rewards_scaled_while_the_episodes_are_recorded_raw_and_start_afresh():
    env = make_training_env(EnvConfig(num_envs=2, vectorized=True, reward_scale=0.25), seed=5)
    env.reset()
    rewards, infos, masks = play_out(env, np.stack(env.env_method("action_masks")))
    assert rewards.dtype == np.float32
    for i, info in enumerate(infos):
        assert info["episode"]["r"] == pytest.approx(4 * rewards[:, i].sum()) and info["episode"]["l"] == 12
    again, infos, _ = play_out(env, masks)  # the next games: returns and lengths counted from 0 again
    assert all(info["episode"]["l"] == 12 for info in infos)
    assert [info["episode"]["r"] for info in infos] == pytest.approx(4 * again.sum(axis=0))


def test_a_seeded_reset_deals_the_same_games_and_the_seed_is_used_once():
    config = EnvConfig(num_envs=3, vectorized=True)
    first, second = make_training_env(config, seed=9), make_training_env(config, seed=9)
    np.testing.assert_array_equal(first.reset(), second.reset())
    np.testing.assert_array_equal(first.reset(), second.reset())  # unseeded now, but alike: one stream each
    assert first._seeds == [None, None, None]


def test_only_the_masks_are_a_per_env_method_and_attributes_are_read_alike_for_every_env():
    env = make_training_env(EnvConfig(num_envs=3, vectorized=True), seed=0)
    assert isinstance(env, SB3YachtVecEnv)
    env.reset()
    assert len(env.env_method("action_masks", indices=[0, 2])) == 2
    for name in ("render", "_reset_seeds"):  # names that sort after the masks' and before
        with pytest.raises(AttributeError, match=f"SB3YachtVecEnv has no per-env method {name!r}"):
            env.env_method(name)
    assert env.get_attr("num_envs") == [3, 3, 3] and env.get_attr("num_envs", indices=[1]) == [3]
    with pytest.raises(AttributeError, match=r"does not set per-env attributes \('rules'\)"):
        env.set_attr("rules", None)
    assert env.env_is_wrapped(object) == [False, False, False] and env.get_images() == [None, None, None]
    assert env.has_attr("action_masks") and env.has_attr("num_envs")
    assert not env.has_attr("no_such_thing") and not env.has_attr("_no_such_thing")
    env.close()


def test_a_game_cut_short_by_illegal_actions_is_reported_truncated_by_a_time_limit():
    env = make_training_env(EnvConfig(num_envs=2, vectorized=True), seed=0)
    env.reset()
    dones = np.zeros(2, dtype=bool)
    steps = 0
    while not dones.any():
        env.step_async(np.zeros(2, dtype=np.int64))  # keeping every die is never a legal re-roll
        _, _, dones, infos = env.step_wait()
        steps += 1
    assert dones.all() and steps == 100  # the envs' default limit of illegal actions
    assert all(info["TimeLimit.truncated"] and info["episode"]["l"] == 100 for info in infos)
