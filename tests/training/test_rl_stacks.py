"""Yacht-v0 as the common RL stacks use it, with no glue code: SB3's make_vec_env, MaskablePPO and
TorchRL's GymEnv with its ActionMask transform."""

from __future__ import annotations

import importlib.util

import gymnasium as gym
import numpy as np
import pytest

import yacht_env  # noqa: F401  (registers the ids)

pytest.importorskip("stable_baselines3", reason="the SB3 recipes need the train extra: pip install 'yacht-rl[train]'")

from stable_baselines3 import DQN, PPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402

YACHT_IDS = sorted(env_id for env_id, spec in gym.registry.items() if str(spec.entry_point).startswith("yacht_env"))


def test_the_ids_are_registered():
    assert "Yacht-v0" in YACHT_IDS


@pytest.mark.parametrize("env_id", YACHT_IDS)
def test_make_vec_env_needs_no_keyword_arguments(env_id):
    venv = make_vec_env(env_id, n_envs=8, seed=0)  # asks each env for render_mode="rgb_array"
    obs = venv.reset()
    assert obs.shape == (8, *venv.observation_space.shape)
    masks = np.stack(venv.env_method("action_masks"))
    obs, rewards, dones, infos = venv.step(masks.argmax(axis=1))  # the first legal action of each game
    assert not any(info["illegal_action"] for info in infos)
    frames = venv.get_images()
    assert len(frames) == 8 and all(frame.shape == (480, 640, 3) and frame.dtype == np.uint8 for frame in frames)
    venv.close()


def test_plain_ppo_and_dqn_train_on_make_vec_env():
    venv = make_vec_env("Yacht-v0", n_envs=8, seed=0)
    PPO("MlpPolicy", venv, n_steps=128, batch_size=256, n_epochs=2, seed=0).learn(2048)
    DQN("MlpPolicy", make_vec_env("Yacht-v0", n_envs=1, seed=0), buffer_size=10_000, learning_starts=500, seed=0).learn(2000)


def test_maskable_ppo_with_make_vec_env_plays_only_legal_actions():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy

    venv = make_vec_env("Yacht-v0", n_envs=8, seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=256, n_epochs=2, seed=0).learn(2048)
    returns, lengths = evaluate_policy(model, venv, n_eval_episodes=16, return_episode_rewards=True)
    # Masked play never pays the illegal-action penalty and always fills the sheet: 12 scoring
    # actions and at most 2 re-rolls a turn, for a non-negative score.
    assert len(returns) == 16 and min(returns) >= 0
    assert all(12 <= length <= 36 for length in lengths)


@pytest.mark.skipif(importlib.util.find_spec("torchrl") is None, reason="TorchRL is optional: pip install 'yacht-rl[torchrl]'")
def test_torchrl_ppo_trains_with_illegal_actions_masked():
    import torch

    from examples.torchrl_ppo import make_env, train

    env = make_env(seed=1)
    random_steps = env.rollout(200, break_when_any_done=False)  # the masked spec makes random actions legal
    batches = [data for data, _ in train(frames=1024, frames_per_batch=512, epochs=1, seed=0)]
    assert sum(data.numel() for data in batches) == 1024
    for data in [random_steps, *batches]:
        data = data.reshape(-1)
        masks, actions = data["action_mask"], data["action"]
        assert masks.dtype == torch.bool and masks.sum(-1).min() > 0
        assert masks[torch.arange(len(actions)), actions].all()  # every action legal in its state
        assert (data["next", "reward"] >= 0).all()  # never the illegal-action penalty
