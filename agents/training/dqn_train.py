"""Training a masked DQN (``algorithm: dqn``): stable-baselines3's DQN on the legal actions only, alone or at a table.

The model is :mod:`agents.training.dqn_model` (greedy choice, exploration and TD target over the legal actions) in
the env of :mod:`agents.training.dqn_env` (observations that carry their legal actions into the replay buffer).

The run folder is a PPO run's (train.py): config.yaml, tb/ (TensorBoard), checkpoints/step_<N>.zip (every
``run.checkpoint_every`` steps and at the end, written atomically) with checkpoints/replay.npz (the replay buffer of
the latest one, :mod:`agents.training.dqn_replay`), learning_curve.csv, model.safetensors (the online Q network as an
inference model file of policy ``"q"``, :mod:`agents.learned.model_files`, played as ``dqn:PATH``) and eval.json.
Every evaluation, periodic or final, plays the Q network as the file is played (``dqn:PATH``): alone against the
optimum, or at the config's table against its opponents (win rate and mean score, as a PPO run at a table).
``--resume`` continues from the last checkpoint: the network, its target, the optimizer, the step count, the
exploration's random state and the replay buffer, with the learning rate rebuilt from the config; a run that has its
model.safetensors only finishes its final evaluation.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np

from agents.evaluate import evaluate, evaluate_policies, print_table, save_json
from agents.evaluation.tournament import evaluate_model_at_table, print_tournament, save_tournament_json, tournament
from agents.learned.dqn import PREFIX, DQNPolicy
from agents.learned.model_files import (
    InferenceModel,
    ModelLoadError,
    check_model_rules,
    export_model,
    model_metadata,
    record_rules,
)
from agents.registry import default_policies
from agents.solvers.optimal import expected_score
from agents.training.checkpoints import latest_checkpoint, load_sb3_checkpoint
from agents.training.config import TrainConfig, dump_config
from agents.training.curves import rewind_learning_curve
from agents.training.dqn_env import LegalActionsObservation
from agents.training.dqn_model import MaskedDQN, MaskedDQNPolicy
from agents.training.dqn_replay import load_replay, save_replay
from agents.training.envs import make_training_env
from agents.training.plan_train import append_curve, run_planning, solitaire_figures, table_figures
from yacht_env.atomic_files import remove_partial_files, write_atomically
from yacht_env.extras import needs_extra
from yacht_env.rules import rule_set

with needs_extra("train"):
    import torch
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList
    from stable_baselines3.common.utils import set_random_seed

LOG_INTERVAL = 100  # games between the TensorBoard records of the rollouts (SB3 logs every 4 by default)


def new_model(config: TrainConfig, env, run_dir: Path) -> MaskedDQN:
    """A new masked DQN for ``config``, playing in ``env`` and logging to ``run_dir``."""
    dqn = config.dqn
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[dqn.activation]
    model = MaskedDQN(
        MaskedDQNPolicy,
        env,
        learning_rate=dqn.learning_rate,
        buffer_size=dqn.buffer_size,
        learning_starts=dqn.learning_starts,
        batch_size=dqn.batch_size,
        gamma=dqn.gamma,
        train_freq=dqn.train_freq,
        gradient_steps=dqn.gradient_steps,
        target_update_interval=dqn.target_update_interval,
        exploration_fraction=dqn.exploration_fraction,
        exploration_final_eps=dqn.exploration_final_eps,
        policy_kwargs={"net_arch": list(dqn.net_arch), "activation_fn": activation},
        tensorboard_log=str(run_dir / "tb"),
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    record_rules(model, config.env.rules)  # saved in every checkpoint and exported to the model file
    return model


# -- checkpoints --------------------------------------------------------------------------------------


def save_checkpoint(model: MaskedDQN, run_dir: Path) -> Path:
    """The model as checkpoints/step_<N>.zip and its replay buffer as checkpoints/replay.npz, each atomically.

    The buffer first: a kill between the two leaves the previous checkpoint with a buffer of a later one, which a
    resume recognizes (its ``steps``) and does not use.
    """
    folder, steps = run_dir / "checkpoints", model.num_timesteps
    save_replay(model.replay_buffer, folder, steps)
    path = folder / f"step_{steps}.zip"
    write_atomically(path, lambda handle: model.save(handle))  # type: ignore[arg-type]  # SB3 writes to any binary file
    return path


def load_checkpoint(path: Path, config: TrainConfig, env, run_dir: Path) -> MaskedDQN:
    """A checkpoint of this run (a zip the run wrote itself, and its replay buffer), with the learning rate rebuilt
    from the config; ``ModelLoadError`` in one line if it cannot be resumed.
    """
    model = load_sb3_checkpoint(MaskedDQN, path, env, run_dir, config.dqn.learning_rate)
    if not isinstance(model.policy, MaskedDQNPolicy):
        raise ModelLoadError(
            f"checkpoint {str(path)!r} cannot be resumed: it holds a {type(model.policy).__name__}, not a masked DQN"
        )
    model._setup_lr_schedule()  # rebuilt from the config, not unpickled
    check_model_rules(model, repr(str(path)), config.env.rules)
    if not load_replay(model.replay_buffer, path.parent, model.num_timesteps):
        print(f"no replay buffer saved with {path.name}: the run continues with an empty one")
    return model


class Checkpoints(BaseCallback):
    """A checkpoint (:func:`save_checkpoint`) every ``every`` steps."""

    def __init__(self, run_dir: Path, every: int):
        super().__init__()
        self.run_dir, self.every, self.next_at = run_dir, every, 0

    def _on_training_start(self):
        self.next_at = (self.num_timesteps // self.every + 1) * self.every

    def _on_step(self):
        if self.num_timesteps >= self.next_at:
            save_checkpoint(self.model, self.run_dir)
            self.next_at = (self.num_timesteps // self.every + 1) * self.every
        return True


# -- evaluation ---------------------------------------------------------------------------------------


def q_policy(model: MaskedDQN, config: TrainConfig, name: str = "dqn") -> DQNPolicy:
    """The model's online Q network as the policy a ``dqn:`` file of it plays (the same tensors, read the same way)."""
    return DQNPolicy(q_network(model), name, rules=config.env.rules, encoding=config.env.observation_encoding)


def q_network(model: MaskedDQN) -> InferenceModel:
    """The model's online Q network as a model file holds it (the same tensors, read the same way)."""
    metadata, tensors = model_metadata(model)
    return InferenceModel(metadata, tensors)


def evaluation_figures(model: MaskedDQN, config: TrainConfig, games: int, seed: int) -> dict[str, str]:
    """The Q network's figures on ``games`` games: against the optimum alone, or its win rate and mean score at the
    config's table (train.py's figures for either).
    """
    env = config.env
    if env.num_players > 1:
        result = evaluate_model_at_table(q_network(model), "dqn", list(env.opponents), games, seed, rules=env.rules)[0]
        return table_figures(result.standings[0])
    rules = rule_set(env.rules)
    return solitaire_figures(evaluate_policies({"dqn": q_policy(model, config)}, games, seed, rules)[0][0])


class PeriodicEvaluation(BaseCallback):
    """Every ``run.eval_every`` steps: the Q network's figures (:func:`evaluation_figures`); logged to TensorBoard and
    learning_curve.csv.
    """

    def __init__(self, config: TrainConfig, run_dir: Path, elapsed_before: float):
        super().__init__()
        self.config, self.run_dir, self.elapsed_before = config, run_dir, elapsed_before
        self.next_at, self.started = 0, time.perf_counter()

    def _on_training_start(self):
        self.started = time.perf_counter()
        self.next_at = (self.num_timesteps // self.config.run.eval_every + 1) * self.config.run.eval_every

    def _on_step(self):
        if self.num_timesteps >= self.next_at:
            run = self.config.run
            figures = evaluation_figures(self.model, self.config, run.eval_games, run.eval_seed)
            for key, value in figures.items():
                self.logger.record(f"eval/{key}", float(value))
            self.logger.dump(self.num_timesteps)
            wall = self.elapsed_before + time.perf_counter() - self.started
            append_curve(self.run_dir, self.num_timesteps, wall, figures)
            self.next_at = (self.num_timesteps // run.eval_every + 1) * run.eval_every
        return True


# -- the run ------------------------------------------------------------------------------------------


def run_dqn(config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
    """train.py's DQN run: train (or resume), or only finish the final evaluation of a run that has its model."""
    run_planning(config, run_dir, resume, train_dqn, finish_dqn)


def train_dqn(config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
    """Train ``config`` in ``run_dir`` (from its last checkpoint if ``resume``), export the Q network, evaluate it.

    Nothing is written to ``run_dir`` until the env and the model are built.
    """
    torch.set_num_threads(config.run.torch_threads)
    set_random_seed(config.seed)
    random.seed(config.seed)
    np.random.seed(config.seed)
    env = LegalActionsObservation(make_training_env(config.env, seed=config.seed))
    if resume:
        for stale in remove_partial_files(run_dir):
            print(f"removed {stale}, left by a write that was killed")
    checkpoint = latest_checkpoint(run_dir) if resume else None
    model = load_checkpoint(checkpoint, config, env, run_dir) if checkpoint else new_model(config, env, run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(run_dir / "config.yaml", lambda handle: handle.write(dump_config(config).encode()))
    elapsed_before = 0.0
    if checkpoint is not None:
        elapsed_before = rewind_learning_curve(run_dir, model.num_timesteps)
        print(f"resuming {run_dir} from {checkpoint.name} ({model.num_timesteps:,} steps done)")
    remaining = config.dqn.total_timesteps - model.num_timesteps
    steps_before, started = model.num_timesteps, time.perf_counter()
    if remaining > 0:
        callbacks = CallbackList(
            [Checkpoints(run_dir, config.run.checkpoint_every), PeriodicEvaluation(config, run_dir, elapsed_before)]
        )
        model.learn(
            remaining,
            callback=callbacks,
            log_interval=LOG_INTERVAL,
            tb_log_name="dqn",
            reset_num_timesteps=checkpoint is None,
            progress_bar=config.run.progress_bar,
        )
        save_checkpoint(model, run_dir)  # the end: a kill during the export or the evaluation resumes from here
    seconds, done = time.perf_counter() - started, model.num_timesteps - steps_before
    print(f"trained {done:,} steps in {seconds:.0f} s ({done / max(seconds, 1e-9):,.0f} steps/s), {model.num_timesteps:,} in all")
    export_model(model, run_dir / "model.safetensors")
    finish_dqn(config, run_dir)


def finish_dqn(config: TrainConfig, run_dir: Path) -> None:
    """The final evaluation of the run's model file, played as ``dqn:PATH`` beside the default policies (eval.json)."""
    path = run_dir / "model.safetensors"
    name = f"{PREFIX}{path}"
    print(f"model: {path} (play it as {name})")
    games, seed, rules = config.run.final_eval_games, config.run.eval_seed, rule_set(config.env.rules)
    if config.env.num_players > 1:  # at the table it was trained at, against its opponents
        result, _ = tournament([name, *config.env.opponents], games, seed, rules=rules)
        print_tournament(result)
        save_tournament_json(run_dir / "eval.json", result)
        return
    summaries = evaluate([name, *default_policies()], games, seed, rules)[0]
    print(f"rules: {config.env.rules}")
    print_table(summaries, expected_score(rules), games, seed, rules)
    save_json(run_dir / "eval.json", summaries, expected_score(rules), games, seed, rules=rules)
