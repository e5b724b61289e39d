"""The stable-baselines3 adapter of the vector env: same training as separate Yacht-v0 envs."""

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from agents.training.config import EnvConfig
from agents.training.envs import make_training_env
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
