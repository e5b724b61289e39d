"""The masked DQN (``algorithm: dqn``): greedy choice, exploration and TD target over the legal actions only; its run,
model file (``dqn:PATH``) and resume."""

import json
import shutil
import types
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors import safe_open
from safetensors.torch import save_file
from stable_baselines3.common.logger import Logger

from agents.learned.legal_q import greedy_actions
from agents.learned.model_files import METADATA_KEY, ModelLoadError, export_model
from agents.policies.guard import unguarded
from agents.registry import make_policy, make_table_policy
from agents.training.config import ConfigError, load_config
from agents.training.dqn_env import MASK, OBSERVATION, LegalActionsObservation
from agents.training.dqn_model import MaskedDQN, MaskedDQNPolicy
from agents.training.dqn_replay import REPLAY_NAME
from agents.training.envs import make_training_env
from train import main as train_main
from yacht_env.encoding import ENCODINGS

ROOT = Path(__file__).resolve().parents[2]
NUM_ACTIONS = 44  # Yacht's
OBS_WIDTH = 63  # the features encoding under Yacht's rules


def small_model(num_envs: int = 1, encoding: str = "features", **kwargs) -> MaskedDQN:
    config = load_config(None, ["algorithm=dqn", f"env.observation_encoding={encoding}", f"env.num_envs={num_envs}"])
    env = LegalActionsObservation(make_training_env(config.env, seed=0))
    settings_ = {"buffer_size": 1_000, "learning_starts": 0, "batch_size": 8, "seed": 0, "device": "cpu", **kwargs}
    return MaskedDQN(MaskedDQNPolicy, env, policy_kwargs={"net_arch": [32, 32]}, **settings_)


@pytest.fixture(scope="module")
def model():
    return small_model()


def masks_strategy(rows: int):
    """(rows, NUM_ACTIONS) 0/1 masks, each row with at least one legal action."""
    row = st.lists(st.booleans(), min_size=NUM_ACTIONS, max_size=NUM_ACTIONS).filter(any)
    return st.lists(row, min_size=rows, max_size=rows).map(lambda r: np.array(r, dtype=np.int8))


# -- (a) the greedy action -------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(masks=masks_strategy(6), seed=st.integers(0, 2**31))
def test_the_greedy_action_is_the_best_legal_action_whatever_the_mask(model, masks, seed):
    rng = np.random.default_rng(seed)
    observations = rng.random((len(masks), OBS_WIDTH), dtype=np.float32)
    actions, _ = model.predict({OBSERVATION: observations, MASK: masks}, deterministic=True)
    assert masks[np.arange(len(masks)), actions].all()
    with torch.no_grad():
        raw = model.q_net.q_net(torch.as_tensor(observations)).numpy()  # the unmasked values, by hand below
    best = np.where(masks != 0, raw, -np.inf).max(axis=1)
    np.testing.assert_array_equal(raw[np.arange(len(masks)), actions], best)


@settings(max_examples=200, deadline=None)
@given(masks=masks_strategy(4), q=st.lists(st.floats(-1e6, 1e6), min_size=4 * NUM_ACTIONS, max_size=4 * NUM_ACTIONS))
def test_greedy_actions_pick_the_first_legal_maximum(masks, q):
    values = torch.tensor(q, dtype=torch.float32).reshape(4, NUM_ACTIONS)
    actions = greedy_actions(values, torch.as_tensor(masks)).numpy()
    for row, action in enumerate(actions):
        legal = np.flatnonzero(masks[row])
        best = legal[np.argmax(values[row, legal].numpy())]
        assert masks[row, action] and action == best


# -- (b) exploration -------------------------------------------------------------------------------------------------


def uniform_counts_ok(actions: np.ndarray, legal: np.ndarray, draws: int) -> None:
    counts = np.bincount(actions, minlength=NUM_ACTIONS)
    assert counts[np.setdiff1d(np.arange(NUM_ACTIONS), legal)].sum() == 0
    expected, sd = draws / len(legal), np.sqrt(draws * (1 / len(legal)) * (1 - 1 / len(legal)))
    assert np.all(np.abs(counts[legal] - expected) < 5 * sd), counts[legal]


def test_exploration_draws_every_legal_action_uniformly_and_no_other(model):
    legal = np.array([0, 3, 17, 30, 43])
    draws = 5_000
    masks = np.zeros((draws, NUM_ACTIONS), dtype=np.int8)
    masks[:, legal] = 1
    observations = np.random.default_rng(1).random((draws, OBS_WIDTH), dtype=np.float32)
    model.exploration_rate = 1.0
    actions, _ = model.predict({OBSERVATION: observations, MASK: masks}, deterministic=False)
    uniform_counts_ok(actions, legal, draws)
    model.exploration_rate = 0.0  # no exploration: greedy again, one action for these equal observations
    same = np.repeat(observations[:1], 50, axis=0)
    greedy, _ = model.predict({OBSERVATION: same, MASK: masks[:50]}, deterministic=False)
    assert len(set(greedy.tolist())) == 1 and greedy[0] in legal


def test_the_warm_up_before_learning_starts_draws_among_the_legal_actions_only(model):
    legal = np.array([2, 5, 11])
    draws = 3_000
    masks = np.zeros((draws, NUM_ACTIONS), dtype=np.int8)
    masks[:, legal] = 1
    model._last_obs = {OBSERVATION: np.zeros((draws, OBS_WIDTH), dtype=np.float32), MASK: masks}
    actions, buffer_actions = model._sample_action(learning_starts=model.num_timesteps + 1, n_envs=draws)
    np.testing.assert_array_equal(actions, buffer_actions)
    uniform_counts_ok(np.asarray(actions), legal, draws)


def test_a_partial_exploration_rate_leaves_the_greedy_action_that_share_of_the_time(model):
    legal = np.array([1, 8, 20, 33])
    draws, rate = 8_000, 0.2
    masks = np.zeros((draws, NUM_ACTIONS), dtype=np.int8)
    masks[:, legal] = 1
    same = np.repeat(np.random.default_rng(2).random((1, OBS_WIDTH), dtype=np.float32), draws, axis=0)
    greedy, _ = model.predict({OBSERVATION: same[:1], MASK: masks[:1]}, deterministic=True)
    model.exploration_rate = rate
    try:
        actions, _ = model.predict({OBSERVATION: same, MASK: masks}, deterministic=False)
    finally:
        model.exploration_rate = 0.0
    away = rate * (1 - 1 / len(legal))  # an exploring draw may land on the greedy action too
    assert abs(np.mean(actions != greedy[0]) - away) < 5 * np.sqrt(away * (1 - away) / draws)
    assert np.isin(actions, legal).all()


def equal_observations_with_legal(legal: np.ndarray, draws: int, seed: int) -> dict:
    masks = np.zeros((draws, NUM_ACTIONS), dtype=np.int8)
    masks[:, legal] = 1
    same = np.repeat(np.random.default_rng(seed).random((1, OBS_WIDTH), dtype=np.float32), draws, axis=0)
    return {OBSERVATION: same, MASK: masks}


def test_predict_explores_unless_told_to_be_deterministic(model):
    """sb3's callers (collect_rollouts among them) may leave ``deterministic`` out: exploring is the default."""
    observations = equal_observations_with_legal(np.array([6, 12, 19, 40]), 200, seed=4)
    model.exploration_rate = 1.0
    try:
        actions, _ = model.predict(observations)
    finally:
        model.exploration_rate = 0.0
    # all 200 uniform draws among 4 legal actions landing on one action has chance 4 ** -199
    assert len(set(actions.tolist())) > 1


def test_a_deterministic_prediction_is_greedy_whatever_the_exploration_rate(model):
    observations = equal_observations_with_legal(np.array([7, 14, 21, 28]), 200, seed=5)
    greedy, _ = model.predict(observations, deterministic=True)  # at the fixture's rate 0
    model.exploration_rate = 1.0
    try:
        actions, _ = model.predict(observations, deterministic=True)
    finally:
        model.exploration_rate = 0.0
    assert len(set(greedy.tolist())) == 1
    np.testing.assert_array_equal(actions, greedy)


def test_a_prediction_at_exploration_rate_0_draws_nothing_from_the_exploration_stream(model):
    """The stream is saved with the model for a resumed run to draw on where it stopped: steps that cannot explore
    leave it where it was, so the exploring draws that follow them are the same however many there were."""
    observations = equal_observations_with_legal(np.array([3, 10, 36]), 50, seed=6)
    model.exploration_rate = 0.0
    before = model.exploration_rng.bit_generator.state
    model.predict(observations, deterministic=False)
    assert model.exploration_rng.bit_generator.state == before


def test_from_the_step_learning_starts_on_the_actions_are_the_policy_s_own(model):
    legal = np.array([4, 9, 26])
    draws = 200
    masks = np.zeros((draws, NUM_ACTIONS), dtype=np.int8)
    masks[:, legal] = 1
    same = np.repeat(np.random.default_rng(3).random((1, OBS_WIDTH), dtype=np.float32), draws, axis=0)
    greedy, _ = model.predict({OBSERVATION: same[:1], MASK: masks[:1]}, deterministic=True)
    model.exploration_rate = 0.0
    model._last_obs = {OBSERVATION: same, MASK: masks}
    steps = model.num_timesteps
    model.num_timesteps = 100
    try:
        for learning_starts in (100, 40):  # the step itself, and long after it
            actions, _ = model._sample_action(learning_starts=learning_starts, n_envs=draws)
            assert (np.asarray(actions) == greedy[0]).all()
    finally:
        model.num_timesteps = steps


# -- (c) the TD target -----------------------------------------------------------------------------------------------


def test_the_td_target_is_the_reward_plus_gamma_times_the_best_legal_next_value(monkeypatch):
    """SB3's own train() step, on a batch whose targets are computed here by hand from the target network's raw values."""
    model = small_model(gamma=0.9)
    rng = np.random.default_rng(3)
    rows = 8
    next_masks = (rng.random((rows, NUM_ACTIONS)) < 0.15).astype(np.int8)
    next_masks[:, 0] = 0  # the target net's favourite may well be illegal: checked below that it is somewhere
    next_masks[np.arange(rows), rng.integers(1, NUM_ACTIONS, rows)] = 1
    dones = np.array([0, 0, 0, 1, 0, 0, 1, 0], dtype=np.float32)
    next_masks[6] = 0  # a game's end: nothing is legal, and the target is the reward alone
    for row in range(rows):
        obs = {OBSERVATION: rng.random((1, OBS_WIDTH), dtype=np.float32), MASK: np.ones((1, NUM_ACTIONS), np.int8)}
        nxt = {OBSERVATION: rng.random((1, OBS_WIDTH), dtype=np.float32), MASK: next_masks[row : row + 1]}
        model.replay_buffer.add(obs, nxt, np.array([[row]]), np.array([rng.normal()]), dones[row : row + 1], [{}])
    with torch.no_grad():  # nudged so that the unmasked maximum is often an illegal action
        model.q_net_target.q_net[-1].bias[0] += 10.0
    seen = {}
    sample, loss = model.replay_buffer.sample, torch.nn.functional.smooth_l1_loss

    def sampled(*args, **kwargs):  # the batch SB3 draws, kept to compute its targets here
        seen["batch"] = sample(*args, **kwargs)
        return seen["batch"]

    def huber(q, target):  # the targets SB3 computed, kept; the loss as it is
        seen["target"] = target
        return loss(q, target)

    monkeypatch.setattr(model.replay_buffer, "sample", sampled)
    monkeypatch.setattr(torch.nn.functional, "smooth_l1_loss", huber)
    model.set_logger(Logger(None, []))
    model.train(gradient_steps=1, batch_size=64)
    batch, target = seen["batch"], seen["target"].numpy().reshape(-1)
    with torch.no_grad():
        raw = model.q_net_target.q_net(batch.next_observations[OBSERVATION].float()).numpy()
    masks = batch.next_observations[MASK].numpy() != 0
    rewards, done = batch.rewards.numpy().reshape(-1), batch.dones.numpy().reshape(-1)
    best_legal = np.array([raw[i][masks[i]].max() if masks[i].any() else np.nan for i in range(len(raw))])
    expected = np.where(done == 1, rewards, rewards + 0.9 * best_legal)
    np.testing.assert_allclose(target, expected.astype(np.float32), rtol=1e-6, atol=1e-6)
    assert (done == 1).any() and (done == 0).any()
    assert (raw.max(axis=1) > best_legal)[done == 0].any()  # the unmasked max would have given other targets


# -- config, budget ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["env.observation_encoding=dict"], "algorithm 'dqn' trains on a Box observation: needs an encoding other than dict"),
        (["env.num_players=2", "env.opponents=[optimal]", "env.observation_encoding=dict"], "algorithm 'dqn' trains on a Box"),
        (["dqn.exploration_fraction=0"], "dqn.exploration_fraction: Input should be greater than 0"),
        (["dqn.exploration_final_eps=1.5"], "dqn.exploration_final_eps: Input should be less than or equal to 1"),
        (["dqn.buffer_size=0"], "dqn.buffer_size: Input should be greater than or equal to 1"),
        (["dqn.net_arch=[0]"], "layer widths must be >= 1"),
        (["dqn.gamma=0"], "dqn.gamma: Input should be greater than 0"),
        (["dqn.epsilon=1"], "unknown key 'dqn.epsilon'"),
    ],
)
def test_bad_dqn_configs_are_refused_in_one_line(overrides, message):
    with pytest.raises(ConfigError, match=message) as error:
        load_config(None, ["algorithm=dqn", *overrides])
    assert "\n" not in str(error.value)


def test_the_benchmark_trains_whole_rounds_within_the_budget():
    from agents.benchmark.run import budget_overrides
    from agents.benchmark.tracks import track

    config = load_config(ROOT / "configs" / "benchmark" / "dqn.yaml", ["dqn.train_freq=3"])
    fixed = track("yacht-solo-20k")
    overrides, unit, units, steps = budget_overrides(config, fixed)
    rounds = 3 * config.env.num_envs
    assert overrides == [f"dqn.total_timesteps={steps}"] and unit == "env_steps" and units == steps
    assert steps % rounds == 0 and fixed.budget - rounds < steps <= fixed.budget


# -- a real run: the model file, bad files, resume ---------------------------------------------------------------------

TINY = [
    "algorithm=dqn", "env.observation_encoding=features", "env.num_envs=4", "dqn.total_timesteps=2000",
    "dqn.learning_starts=400", "dqn.buffer_size=3000", "dqn.batch_size=32", "dqn.net_arch=[32,32]",
    "dqn.target_update_interval=500", "run.checkpoint_every=1000", "run.eval_every=1000", "run.eval_games=4",
    "run.final_eval_games=4", "run.progress_bar=false",
]  # fmt: skip


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("dqn")
    config = root / "tiny.yaml"
    config.write_text("name: tiny\n")
    train_main(["--config", str(config), "--runs-dir", str(root), *TINY])
    return root / "tiny"


def test_a_tiny_run_logs_each_evaluation_s_figures_to_tensorboard_as_its_learning_curve_holds_them(tiny_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with (tiny_run / "learning_curve.csv").open() as handle:
        header, *rows = [line.strip().split(",") for line in handle]
    (folder,) = {path.parent for path in (tiny_run / "tb").rglob("events.out.tfevents.*")}
    events = EventAccumulator(str(folder))
    events.Reload()
    for column, key in enumerate(header[2:], start=2):
        logged = [(event.step, event.value) for event in events.Scalars(f"eval/{key}")]
        assert logged == [(int(row[0]), pytest.approx(float(row[column]), abs=1e-4)) for row in rows]
    assert [int(row[0]) for row in rows] == [1000, 2000] and len(header) > 2


def play_a_game(policy, seed: int = 5, encoding: str = "features") -> int:
    env = gym.make("Yacht-v0", observation_encoding=encoding)
    observation, info = env.reset(seed=seed)
    decisions, done = 0, False
    while not done:
        mask = env.unwrapped.action_masks()
        action = policy.act(observation, mask)
        assert mask[action], f"illegal action {action}"
        observation, _, terminated, truncated, _ = env.step(action)
        decisions, done = decisions + 1, terminated or truncated
    return decisions


def test_a_tiny_run_writes_a_model_file_that_dqn_plays_legally(tiny_run):
    path = tiny_run / "model.safetensors"
    assert {"config.yaml", "learning_curve.csv", "eval.json", "model.safetensors"} <= {p.name for p in tiny_run.iterdir()}
    with safe_open(str(path), framework="pt") as handle:
        meta = json.loads(handle.metadata()[METADATA_KEY])
    assert meta["policy"] == "q" and meta["format_version"] == 3 and meta["net_arch"] == [32, 32]
    policy = make_policy(f"dqn:{path}", encoding="features")
    assert play_a_game(policy) >= 12 and policy.replaced is None  # every decision its own, none the fallback's
    assert unguarded(policy).action_probabilities(None, None) is None
    evaluated = json.loads((tiny_run / "eval.json").read_text())
    assert f"dqn:{path}" in json.dumps(evaluated)


@pytest.mark.parametrize("encoding", [name for name in ENCODINGS if name != "dict"])
def test_a_q_network_on_every_box_encoding_is_exported_to_a_file_dqn_plays(tmp_path, encoding):
    path = export_model(small_model(encoding=encoding), tmp_path / f"{encoding}.safetensors")
    policy = make_policy(f"dqn:{path}", encoding=encoding)
    assert play_a_game(policy, encoding=encoding) >= 12 and policy.replaced is None


def test_a_table_run_trains_a_q_network_that_reads_the_table_and_is_judged_at_it(tmp_path):
    runs = tmp_path / "runs"
    config = tmp_path / "table.yaml"
    config.write_text("name: table\n")
    table = ["env.num_players=2", "env.opponents=[greedy]", "env.vectorized=false", "dqn.total_timesteps=1200"]
    train_main(["--config", str(config), "--runs-dir", str(runs), *TINY, *table])
    path = runs / "table" / "model.safetensors"
    with safe_open(str(path), framework="pt") as handle:
        meta = json.loads(handle.metadata()[METADATA_KEY])
    assert meta["policy"] == "q" and meta["num_players"] == 2  # it reads the other seat's totals and open rows
    result = json.loads((runs / "table" / "eval.json").read_text())
    assert result["table"] == [f"dqn:{path}", "greedy"] and result["games"] == 4
    assert sum(seat["win_rate"] for seat in result["standings"]) == pytest.approx(1.0)
    with (runs / "table" / "learning_curve.csv").open() as handle:
        header = handle.readline().strip().split(",")
    assert header == ["steps", "wall_seconds", "win_rate", "mean_score"]
    # by name, at a table of two it reads the table; alone, or at a table of three, it is refused in one line
    policy = make_table_policy(f"dqn:{path}", 2)
    assert unguarded(policy).table_encoding.num_players == 2
    advice = f"trained at a table of 2 .*: play it at a table of 2, e.g. python -m agents.evaluate --table dqn:{path},optimal$"
    for build, message in (
        (lambda: make_policy(f"dqn:{path}"), advice),
        (lambda: make_table_policy(f"dqn:{path}", 3), "is no table observation of 3 players"),
    ):
        with pytest.raises(ModelLoadError, match=message) as error:
            build()
        assert "\n" not in str(error.value)


def test_each_prefix_refuses_the_other_kind_of_network_in_one_line(tiny_run):
    path = tiny_run / "model.safetensors"
    with pytest.raises(ModelLoadError, match=r"is a Q network .* play it as dqn:") as error:
        make_policy(f"ppo:{path}")
    assert "\n" not in str(error.value)
    with pytest.raises(ModelLoadError, match="is a policy network, which dqn: does not play: play it as ppo:"):
        make_policy(f"dqn:{ROOT / 'models' / 'ppo.safetensors'}")


def rewrite(source: Path, target: Path, change) -> Path:
    with safe_open(str(source), framework="pt") as handle:
        meta = json.loads(handle.metadata()[METADATA_KEY])
        tensors = {name: handle.get_tensor(name) for name in handle.keys()}
    change(meta, tensors)
    save_file(tensors, str(target), metadata={METADATA_KEY: json.dumps(meta)})
    return target


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda meta, tensors: meta.update(format_version=2), "policy 'q' needs format_version 3 or later, got 2"),
        (lambda meta, tensors: meta.update(observation_encoding="dict"), "a q policy reads a Box observation"),
        # a table's observation is wider than the solitaire one the network was trained on
        (lambda meta, tensors: meta.update(num_players=2), r"policy.0.weight has shape \(32, 63\), expected \(32, 77\)"),
        (lambda meta, tensors: meta.update(lookahead_temperature=0.3), "lookahead_temperature must be null for policy 'q'"),
        (lambda meta, tensors: meta.update(format_version=4), "format_version 4 is newer"),
        (lambda meta, tensors: tensors.update({"action.weight": tensors["action.weight"][:40]}), r"action.weight has shape \(40"),
        (lambda meta, tensors: tensors.update({"action.bias": tensors["action.bias"] * float("inf")}), "NaN or infinite"),
    ],
)
def test_tampered_model_files_are_refused_in_one_line(tiny_run, tmp_path, change, message):
    path = rewrite(tiny_run / "model.safetensors", tmp_path / "bad.safetensors", change)
    with pytest.raises(ModelLoadError, match=message) as error:
        make_policy(f"dqn:{path}")
    assert str(path) in str(error.value) and "\n" not in str(error.value)


def test_a_cut_model_file_is_refused_in_one_line_by_the_evaluation(tiny_run, tmp_path, capsys):
    from agents.evaluate import main as evaluate_main

    cut = tmp_path / "cut.safetensors"
    cut.write_bytes((tiny_run / "model.safetensors").read_bytes()[:500])
    try:
        code = evaluate_main(["--policy", f"dqn:{cut}", "--games", "4", "--no-progress"])
    except SystemExit as stop:
        code = stop.code
    error = capsys.readouterr().err.strip()
    assert code == 2 and str(cut) in error and len(error.splitlines()) == 1 and "Traceback" not in error, error


def test_the_figures_of_a_table_evaluation_are_the_learner_s_not_its_opponent_s(tmp_path):
    from agents.evaluation.tournament import evaluate_model_at_table
    from agents.training import dqn_train

    (tmp_path / "table.yaml").write_text("name: table\n")
    table = ["env.num_players=2", "env.opponents=[greedy]", "env.vectorized=false"]
    config = load_config(tmp_path / "table.yaml", [*TINY, *table])
    model = dqn_train.new_model(config, LegalActionsObservation(make_training_env(config.env, seed=0)), tmp_path)
    figures = dqn_train.evaluation_figures(model, config, 8, 11)
    result = evaluate_model_at_table(dqn_train.q_network(model), "dqn", ["greedy"], 8, 11, rules=config.env.rules)[0]
    by_policy = {standing.policy: standing for standing in result.standings}
    assert figures == {"win_rate": f"{by_policy['dqn'].win_rate:.4f}", "mean_score": f"{by_policy['dqn'].mean_score:.3f}"}
    assert figures["mean_score"] != f"{by_policy['greedy'].mean_score:.3f}"  # the seats' figures tell them apart


def test_checkpoints_and_evaluations_fall_at_each_multiple_of_their_period_fresh_or_resumed_and_wall_time_counts_from_zero(
    tmp_path, monkeypatch, capsys
):
    from agents.training import dqn_train

    monkeypatch.setattr(dqn_train, "time", types.SimpleNamespace(perf_counter=lambda: 1234.5))  # a clock standing still
    (tmp_path / "tiny.yaml").write_text("name: tiny\n")
    periods = ["run.checkpoint_every=250", "run.eval_every=250"]  # 4 envs: steps of 4 pass 250 and 750
    train_main(
        ["--config", str(tmp_path / "tiny.yaml"), "--runs-dir", str(tmp_path), *TINY, "dqn.total_timesteps=1000", *periods]
    )
    saved = sorted(int(path.stem.split("_")[1]) for path in (tmp_path / "tiny" / "checkpoints").glob("step_*.zip"))
    assert saved[:-1] == [252, 500, 752, 1000] and saved[-1] >= 1000  # the first step at or past each; the last, at the end
    rows = (tmp_path / "tiny" / "learning_curve.csv").read_text().splitlines()[1:]
    assert [row.split(",")[:2] for row in rows] == [[str(step), "0.0"] for step in (252, 500, 752, 1000)]
    done = saved[-1]  # in no time on this clock: the rate is counted over a nanosecond, not divided by zero
    assert f"trained {done:,} steps in 0 s ({done * 10**9:,} steps/s), {done:,} in all\n" in capsys.readouterr().out

    def checkpoints():
        return {
            path.name: (path.stat().st_ino, path.stat().st_mtime_ns) for path in (tmp_path / "tiny" / "checkpoints").iterdir()
        }

    def unfinish():  # killed before its export: a resume trains on
        (tmp_path / "tiny" / "model.safetensors").unlink()
        (tmp_path / "tiny" / "eval.json").unlink()

    for total in (500, saved[-1]):  # fewer steps than done, or as many: nothing to train, and no checkpoint written again
        unfinish()
        before = checkpoints()
        train_main(["--resume", str(tmp_path / "tiny"), f"dqn.total_timesteps={total}"])
        assert checkpoints() == before and "trained 0 steps in 0 s" in capsys.readouterr().out
    unfinish()
    train_main(["--resume", str(tmp_path / "tiny"), "dqn.total_timesteps=1300"])  # from a step past a multiple
    resumed = sorted(int(name[5:-4]) for name in checkpoints().keys() - before.keys() if name.startswith("step_"))
    assert resumed[:-1] == [1252] and resumed[-1] >= 1300  # the first step at or past 1250, then the end


def test_a_checkpoint_of_an_unmasked_dqn_is_refused_in_one_line_naming_its_policy(tiny_run, tmp_path):
    from stable_baselines3 import DQN

    import agents.training.dqn_train as dqn_train

    config = load_config(tiny_run / "config.yaml")
    env = LegalActionsObservation(make_training_env(config.env, seed=0))
    checkpoint = tmp_path / "step_100.zip"
    DQN("MultiInputPolicy", env, buffer_size=10, device="cpu").save(checkpoint)  # SB3's own DQN: illegal actions unmasked
    with pytest.raises(ModelLoadError) as refused:
        dqn_train.load_checkpoint(checkpoint, config, env, tmp_path)
    assert (
        str(refused.value) == f"checkpoint {str(checkpoint)!r} cannot be resumed: it holds a MultiInputPolicy, not a masked DQN"
    )


@pytest.mark.parametrize("error", [ValueError, OSError])
def test_a_checkpoint_whose_loader_fails_in_several_lines_is_told_by_its_first_line(tiny_run, tmp_path, monkeypatch, error):
    """The loader's first line says what went wrong; what follows it (a stack of causes, a hint) is left out."""
    import agents.training.dqn_train as dqn_train
    from agents.training.checkpoints import latest_checkpoint

    def fails(*args, **kwargs):
        raise error("the zip holds no policy\n  while reading policy.pth\n  (a file of 0 bytes)")

    monkeypatch.setattr(dqn_train.MaskedDQN, "load", fails)
    config = load_config(tiny_run / "config.yaml")
    checkpoint = latest_checkpoint(tiny_run)
    with pytest.raises(ModelLoadError) as refused:
        dqn_train.load_checkpoint(checkpoint, config, None, tmp_path)
    assert str(refused.value) == f"checkpoint {str(checkpoint)!r} cannot be resumed: the zip holds no policy"


def test_resume_continues_from_the_checkpoint_with_its_replay_buffer(tiny_run, tmp_path, capsys):
    from agents.training.checkpoints import latest_checkpoint
    from agents.training.dqn_train import load_checkpoint

    run = tmp_path / "tiny"
    shutil.copytree(tiny_run, run)
    (run / "model.safetensors").unlink()  # killed before its export: the run is not finished
    (run / "eval.json").unlink()
    checkpoint = latest_checkpoint(run)
    config = load_config(run / "config.yaml")
    restored = load_checkpoint(checkpoint, config, LegalActionsObservation(make_training_env(config.env, seed=0)), run)
    with np.load(run / "checkpoints" / REPLAY_NAME) as saved:
        assert restored.num_timesteps == int(saved["steps"]) == 2000 and restored.replay_buffer.pos == int(saved["pos"])
        rows = int(saved["pos"])
        np.testing.assert_array_equal(restored.replay_buffer.observations[MASK][:rows], saved[f"observations.{MASK}"])
    leftover = run / "checkpoints" / ".step_2500.zip.abc123.partial"
    leftover.write_bytes(b"PK\x03\x04 half a checkpoint")  # what a kill mid-save leaves behind
    capsys.readouterr()
    train_main(["--resume", str(run), "dqn.total_timesteps=3000"])
    out = capsys.readouterr().out
    assert "resuming" in out and "(2,000 steps done)" in out and "empty one" not in out
    assert f"removed {leftover}, left by a write that was killed" in out and not leftover.exists()
    steps = [int(line.split(",")[0]) for line in (run / "learning_curve.csv").read_text().splitlines()[1:]]
    assert steps == [1000, 2000, 3000] and latest_checkpoint(run).name == "step_3008.zip"
    assert (run / "model.safetensors").is_file()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda path: path.mkdir(), "is not a regular file (a folder): give a file"),
        (lambda path: path.write_bytes(b"PK\x03\x04 cut short"), "wasn't a zip-file"),
    ],
    ids=["a folder", "no zip"],
)
def test_a_checkpoint_that_cannot_be_read_stops_the_resume_in_one_line_naming_why(tiny_run, tmp_path, make, message):
    run = tmp_path / "tiny"
    shutil.copytree(tiny_run, run)
    (run / "model.safetensors").unlink()
    make(run / "checkpoints" / "step_9000.zip")  # the latest checkpoint
    with pytest.raises(SystemExit) as stop:
        train_main(["--resume", str(run)])
    said = str(stop.value)
    assert "step_9000.zip' cannot be resumed: " in said and message in said and "\n" not in said


def test_a_tampered_replay_buffer_stops_the_resume_in_one_line(tiny_run, tmp_path):
    run = tmp_path / "tiny"
    shutil.copytree(tiny_run, run)
    (run / "model.safetensors").unlink()
    replay = run / "checkpoints" / REPLAY_NAME
    with np.load(replay) as saved:
        arrays = {name: saved[name] for name in saved.files}
    arrays[f"observations.{MASK}"] = arrays[f"observations.{MASK}"].astype(np.float64)
    with replay.open("wb") as handle:
        np.savez(handle, **arrays)
    with pytest.raises(SystemExit) as stop:
        train_main(["--resume", str(run)])
    assert "array observations.action_mask is float64" in str(stop.value) and "\n" not in str(stop.value)
