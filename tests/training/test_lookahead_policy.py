"""The look-ahead policy: a fresh one plays greedy, it trains, saves and loads like any MaskablePPO policy."""

import numpy as np
import pytest
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO

from agents.registry import make_policy
from agents.solvers.optimal import solve_myopic
from agents.training.lookahead_policy import ILLEGAL_INPUT, Q_SCALE, LookaheadPolicy, OneTurnLookahead
from tests.training.test_train import TINY, run_train
from yacht_env.encoding import make_encoding
from yacht_env.rules import YACHT
from yacht_env.vector_env import YachtVectorEnv


def random_positions(count, seed):
    """Positions reached by random play, with their encoded observations and masks."""
    env = YachtVectorEnv(num_envs=count, observation_encoding="features")
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(rng.integers(0, 25)):
        masks = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, _, _, _, info = env.step(actions)
    return obs, info["action_mask"]


@pytest.mark.parametrize("encoding", ["flat", "features", "onehot"])
def test_features_are_the_observation_then_the_one_turn_q(encoding):
    env = YachtVectorEnv(num_envs=64, observation_encoding=encoding)
    obs, info = env.reset(seed=3)
    extractor = OneTurnLookahead(env.single_observation_space, encoding=encoding)
    features = extractor(th.as_tensor(obs)).numpy()
    hands, rolls, open_bits = make_encoding(encoding, YACHT).decode_batch(obs)
    q = solve_myopic(YACHT).q_values_batch(hands, rolls, open_bits)
    assert features.shape == (64, obs.shape[1] + 44)
    np.testing.assert_array_equal(features[:, : obs.shape[1]], obs)
    legal = info["action_mask"].astype(bool)
    np.testing.assert_array_equal(np.isfinite(q), legal)  # q is -inf exactly where the env masks the action
    np.testing.assert_allclose(features[:, obs.shape[1] :][legal], q[legal] / Q_SCALE, rtol=1e-6)
    assert (features[:, obs.shape[1] :][~legal] == ILLEGAL_INPUT).all()


def test_a_finished_game_has_no_legal_q():
    encoding = make_encoding("features", YACHT)
    finished = encoding.encode_batch(np.array([0]), np.array([0]), np.array([0]))
    extractor = OneTurnLookahead(encoding.space, encoding="features")
    assert np.isneginf(extractor.one_turn_q(th.as_tensor(finished))).all()


def test_wrong_encoding_is_named():
    with pytest.raises(ValueError, match="'flat' encoding"):
        OneTurnLookahead(make_encoding("features", YACHT).space, encoding="flat")


def fresh_model(temperature):
    env = YachtVectorEnv(num_envs=1, observation_encoding="features")
    space, actions = env.single_observation_space, spaces.Discrete(44)
    policy = LookaheadPolicy(space, actions, lambda _: 1e-3, temperature=temperature, encoding="features", net_arch=[16])
    with th.no_grad():  # no learned correction: the prior alone decides
        policy.action_net.weight.zero_()
        policy.action_net.bias.zero_()
    return policy


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_a_learned_correction_it_plays_greedy(seed):
    obs, masks = random_positions(200, seed)
    policy = fresh_model(temperature=0.3)
    actions, _ = policy.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    q = solve_myopic(YACHT).q_values_batch(*make_encoding("features", YACHT).decode_batch(obs))
    chosen = q[np.arange(len(actions)), actions]
    np.testing.assert_allclose(chosen, q.max(axis=1), atol=1e-4)  # a greedy action (ties may go either way)


def test_temperature_sets_how_sharply_it_prefers_higher_q():
    obs, masks = random_positions(50, 5)
    obs_t = th.as_tensor(obs)
    masks_t = masks.astype(bool)
    probs = {t: fresh_model(t).get_distribution(obs_t, masks_t).distribution.probs.detach().numpy() for t in (0.3, 3.0)}
    q = solve_myopic(YACHT).q_values_batch(*make_encoding("features", YACHT).decode_batch(obs))
    best = q.argmax(axis=1)
    rows = np.arange(len(best))
    assert (probs[0.3][rows, best] >= probs[3.0][rows, best] - 1e-6).all()
    expected = np.exp((q - q.max(axis=1, keepdims=True)) / 3.0)  # softmax of q / temperature over legal actions
    np.testing.assert_allclose(probs[3.0], expected / expected.sum(axis=1, keepdims=True), atol=1e-4)
    assert (probs[3.0][~masks_t] == 0).all()


def test_the_rollouts_actions_are_drawn_from_the_distribution_unless_asked_for_the_best():
    obs, masks = random_positions(50, 5)
    policy = fresh_model(temperature=3.0)
    probs = policy.get_distribution(th.as_tensor(obs), masks.astype(bool)).distribution.probs.detach().numpy()
    row = int(np.argmax(np.sort(probs, axis=1)[:, -2]))  # the position whose second likeliest action is likeliest
    assert probs[row].max() < 0.9
    many, legal = th.as_tensor(np.repeat(obs[row : row + 1], 400, axis=0)), np.repeat(masks[row : row + 1], 400, axis=0)
    th.manual_seed(0)
    drawn, _, _ = policy(many, action_masks=legal)  # as MaskablePPO calls it while collecting rollouts
    counts = np.bincount(drawn.numpy(), minlength=probs.shape[1])
    assert counts[~masks[row].astype(bool)].sum() == 0 and (counts > 0).sum() > 1
    assert abs(counts.max() / 400 - probs[row].max()) < 0.1
    best, _, _ = policy(many, deterministic=True, action_masks=legal)
    assert set(best.tolist()) == {int(np.argmax(probs[row]))}


def test_bad_temperature_is_named():
    with pytest.raises(ValueError, match="temperature must be > 0, got 0"):
        LookaheadPolicy(make_encoding("features", YACHT).space, spaces.Discrete(44), lambda _: 1e-3, temperature=0)


def test_tiny_lookahead_run_saves_a_model_that_loads_and_plays(tmp_path):
    run_train(
        "--config",
        "configs/quick.yaml",
        "--runs-dir",
        str(tmp_path),
        "name=lookahead",
        *TINY,
        "ppo.policy=lookahead",
        "ppo.lookahead_temperature=0.5",
    )
    path = tmp_path / "lookahead" / "model.zip"
    model = MaskablePPO.load(path, device="cpu")
    assert isinstance(model.policy, LookaheadPolicy) and model.policy.temperature == 0.5
    policy = make_policy(f"ppo:{path.with_suffix('.safetensors')}", encoding="flat")  # re-encodes for the model's own encoding
    obs, masks = random_positions(100, 9)
    flat = make_encoding("flat", YACHT)
    actions = policy.act_batch(flat.encode_batch(*make_encoding("features", YACHT).decode_batch(obs)), masks)
    assert masks[np.arange(100), actions].all()
