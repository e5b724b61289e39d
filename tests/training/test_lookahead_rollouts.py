"""Faster training, the same learning: the look-ahead kept in the rollout buffer (computed once per sample), and
distributions built unchecked while PPO trains."""

import contextlib
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch as th
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.distributions import MaskableCategorical

import agents.learned.model_files
import agents.training.lookahead_policy as lookahead_policy
from agents.training.config import load_config
from agents.training.envs import make_training_env
from agents.training.lookahead_policy import OneTurnLookahead
from agents.training.lookahead_rollouts import LookaheadRolloutBuffer, keep_lookahead_in_rollouts
from tests.training.test_lookahead_policy import random_positions
from train import load_checkpoint, new_model, save_model, unchecked_distributions
from yacht_env.encoding import make_encoding
from yacht_env.rules import YACHT

ROOT = Path(__file__).resolve().parents[2]
SMALL = [
    "env.num_envs=8",
    "ppo.n_steps=32",
    "ppo.batch_size=64",
    "ppo.n_epochs=3",
    "ppo.net_arch=[32,32]",
    "run.progress_bar=false",
]
ROLLOUTS = 3  # of 8 envs x 32 steps


def small_config(rules, vectorized=True):
    return load_config(ROOT / "configs/ppo.yaml", [*SMALL, f"env.rules={rules}", f"env.vectorized={vectorized}"])


def plain_buffer(model):
    """sb3-contrib's own buffer: the extractor computes q from the observation at every read, as before."""
    old = model.rollout_buffer
    model.rollout_buffer = MaskableRolloutBuffer(
        old.buffer_size,
        old.observation_space,
        old.action_space,
        old.device,
        gae_lambda=old.gae_lambda,
        gamma=old.gamma,
        n_envs=old.n_envs,
    )


def trained(config, tmp_path, now: bool):
    """A model of ``config`` after ROLLOUTS rollouts and their updates: as train.py trains now (the look-ahead
    kept in the rollout buffer, distributions unchecked), or as before (``now`` false).
    """
    env = make_training_env(config.env, seed=config.seed)
    model = new_model(config, env, tmp_path)
    assert isinstance(model.rollout_buffer, LookaheadRolloutBuffer)  # what train.py trains with
    if not now:
        plain_buffer(model)
    with unchecked_distributions() if now else contextlib.nullcontext():
        model.learn(total_timesteps=ROLLOUTS * config.env.num_envs * config.ppo.n_steps)
    env.close()
    return model


def test_features_of_stored_rows_are_those_of_the_observations():
    obs, _ = random_positions(64, 4)
    extractor = OneTurnLookahead(make_encoding("features", YACHT).space, encoding="features")
    features = extractor(th.as_tensor(obs))
    inputs = extractor.lookahead_inputs(obs)
    rows = th.as_tensor(np.concatenate([obs, inputs], axis=1))
    assert th.equal(extractor(rows), features)
    expected = agents.learned.model_files.lookahead_inputs(extractor.one_turn_q(th.as_tensor(obs)))
    assert th.equal(features[:, obs.shape[1] :], th.as_tensor(expected))


# yahtzee (bonuses, a sheet state in the features) is the long one: `pytest -m slow`; CI trains yacht both ways
@pytest.mark.parametrize("rules", ["yacht", pytest.param("yahtzee", marks=pytest.mark.slow)])
def test_training_now_learns_exactly_what_training_before_learnt(tmp_path, rules):
    config = small_config(rules)
    new, old = trained(config, tmp_path / "new", True), trained(config, tmp_path / "old", False)
    new_params, old_params = new.policy.state_dict(), old.policy.state_dict()
    assert new_params.keys() == old_params.keys()
    for name in new_params:  # the same features, the same minibatches: the same numbers, bit for bit
        assert th.equal(new_params[name], old_params[name]), name
    first = small_config(rules)  # and the updates did move the network: the comparison can fail
    untrained = new_model(first, make_training_env(first.env, seed=first.seed), tmp_path / "fresh")
    assert not th.equal(untrained.policy.action_net.weight, new.policy.action_net.weight)
    obs, masks = played_positions(config, 12)  # and they play alike: the same log-probabilities of every legal action
    for action in range(masks.shape[1]):
        legal = masks[:, action]
        if not legal.any():
            continue
        with th.no_grad():
            chosen = th.full((legal.sum(),), action)
            _, new_log_probs, _ = new.policy.evaluate_actions(th.as_tensor(obs[legal]), chosen, masks[legal])
            _, old_log_probs, _ = old.policy.evaluate_actions(th.as_tensor(obs[legal]), chosen, masks[legal])
        assert th.equal(new_log_probs, old_log_probs)


def played_positions(config, steps):
    """The observations and masks of ``steps`` steps of random play in ``config``'s training env."""
    env = make_training_env(config.env, seed=99)
    rng = np.random.default_rng(99)
    obs, seen, masks = env.reset(), [], []
    for _ in range(steps):
        mask = env.action_masks()
        seen.append(obs)
        masks.append(mask)
        obs, _, _, _ = env.step(np.array([rng.choice(np.flatnonzero(row)) for row in mask]))
    return np.concatenate(seen), np.concatenate(masks).astype(bool)


@pytest.mark.parametrize("vectorized", [True, False])
def test_the_lookahead_is_computed_once_per_collected_observation(tmp_path, monkeypatch, vectorized):
    rows = []

    def counting_one_turn_q(turn, encoding, observations, num_actions):
        rows.append(len(observations))
        return agents.learned.model_files.one_turn_q(turn, encoding, observations, num_actions)

    monkeypatch.setattr(lookahead_policy, "one_turn_q", counting_one_turn_q)
    config = small_config("yacht", vectorized)
    trained(config, tmp_path / "new", True)
    envs, steps = config.env.num_envs, config.ppo.n_steps
    # every observation acted on, and the last one of the run (valued to bootstrap the last rollout):
    # the last observation of each rollout is valued and then acted on, computed once for both
    assert sum(rows) == envs * (ROLLOUTS * steps + 1)
    if not vectorized:
        return
    rows.clear()
    trained(config, tmp_path / "old", False)
    # as before: every epoch computes it again (and so the last observation of a rollout twice)
    assert sum(rows) == envs * ROLLOUTS * (steps + 1) + ROLLOUTS * config.ppo.n_epochs * envs * steps


def test_saved_models_hold_nothing_of_the_buffer_and_resume_with_it(tmp_path):
    config = small_config("yacht")
    model = trained(config, tmp_path, True)
    save_model(model, tmp_path / "model.zip")
    with zipfile.ZipFile(tmp_path / "model.zip") as archive:
        data = archive.read("data").decode()
    assert "lookahead_rollouts" not in data and "LookaheadRolloutBuffer" not in data
    env = make_training_env(config.env, seed=1)
    resumed = load_checkpoint(tmp_path / "model.zip", config, env, tmp_path)
    assert isinstance(resumed.rollout_buffer, LookaheadRolloutBuffer)
    assert resumed.rollout_buffer.lookahead is resumed.policy.features_extractor
    steps = resumed.num_timesteps
    resumed.learn(total_timesteps=config.env.num_envs * config.ppo.n_steps, reset_num_timesteps=False)
    assert resumed.num_timesteps == steps + config.env.num_envs * config.ppo.n_steps


def test_other_policies_keep_their_buffer(tmp_path):
    config = load_config(ROOT / "configs/ppo.yaml", [*SMALL, "ppo.policy=mlp"])
    model = new_model(config, make_training_env(config.env, seed=0), tmp_path)
    keep_lookahead_in_rollouts(model)
    assert type(model.rollout_buffer) is MaskableRolloutBuffer


@pytest.fixture
def checked_by_default():
    """Distributions checked, as torch does by default: importing torchrl (tests/training/test_rl_stacks.py, maybe
    earlier in the same process) turns the checks off for the whole process."""
    before = th.distributions.Distribution._validate_args
    th.distributions.Distribution.set_default_validate_args(True)
    yield
    th.distributions.Distribution.set_default_validate_args(before)


def test_distributions_go_unchecked_only_within_and_a_nan_still_stops_sampling(checked_by_default):
    nan_logits, masks = th.tensor([[float("nan"), 0.0, 1.0]]), th.tensor([[True, True, False]])
    with pytest.raises(ValueError, match="logits"):
        MaskableCategorical(logits=nan_logits, masks=masks)
    with pytest.raises(RuntimeError, match="nan"), unchecked_distributions():
        distribution = MaskableCategorical(logits=nan_logits, masks=masks)  # not checked...
        distribution.sample()  # ...but torch will not sample from it
    with pytest.raises(ValueError, match="logits"):  # checked again after the block, even one left by an error
        MaskableCategorical(logits=nan_logits, masks=masks)
