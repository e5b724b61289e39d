"""Train a MaskablePPO agent on Yacht-v0 and evaluate it against the exact optimum (or, by the config's
``algorithm``, a planning agent, agents/training/plan_train.py, or a masked DQN, agents/training/dqn_train.py).

    python train.py --config configs/quick.yaml                    # a new run in runs/quick/
    python train.py --config configs/yahtzee_quick.yaml            # Yahtzee (env.rules: any of RULE_SETS)
    python train.py --config configs/ppo.yaml ppo.learning_rate=1e-4 name=lr-1e-4
    python train.py --resume runs/quick                             # continue after a crash or kill
    python train.py --sweep configs/sweep_quick.yaml                # many runs at once on Ray Tune
    python train.py --sweep configs/sweep_quick.yaml sweep.num_samples=1 ppo.total_timesteps=400000
                                                                    # sweep.KEY=VALUE: the sweep file; others: its base

A config is read as data (bounded YAML, every field checked), but a config that names a pickled
file (a ``ppo.init_from`` model, a ``ppo-zip:`` opponent) is refused unless ``--trust-pickles`` is
given: loading a stable-baselines3 zip unpickles it, which can run any code. The same paths given
as overrides on the command line are yours, and allowed. ``--resume`` loads the checkpoints of the
run folder you name. A config whose estimated memory or time exceeds the machine (agents/training/budget.py)
is refused in one line naming the field; ``--allow-large`` starts it anyway.

A run folder holds the resolved config (config.yaml), TensorBoard logs (tb/), checkpoints
(checkpoints/step_<N>.zip, every run.checkpoint_every steps, written atomically), the learning
curve (learning_curve.csv: steps, wall time, mean score, % of optimum, regret per decision), the
final model (model.zip, to resume or fine-tune; model.safetensors, the same network to play and
share: loading it runs no code) and the final evaluation (eval.json). Every env, evaluation and saved model
plays the config's rule set (``env.rules``), and the optimum is that rule set's. A run with its final model is
never trained again: ``--resume`` only finishes a final evaluation that was cut short.

A run at a table (``env.num_players`` > 1, e.g. configs/win_vs_optimal.yaml) is judged on
winning instead: its evaluations are tournaments of the model against ``env.opponents`` at that
table (agents.evaluation.tournament), and the curve and eval.json hold win rates and mean scores.

A sweep (agents/training/sweep.py) runs ``train`` below (PPO only) once per trial, on Ray Tune: each trial is
an ordinary run folder under runs/<sweep>/.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, ProgressBarCallback
from stable_baselines3.common.utils import set_random_seed

from agents.evaluate import Summary, evaluate_policies, print_table, save_json
from agents.evaluation.tournament import evaluate_model_at_table, print_tournament, save_tournament_json
from agents.learned.model_files import ModelLoadError, check_model_rules, export_model, model_rules, record_rules
from agents.learned.ppo import PPOPolicy, load_sb3_model
from agents.policies.guard import first_line
from agents.registry import default_policies, make_policy
from agents.solvers.optimal import expected_score
from agents.training.budget import check_budget
from agents.training.checkpoints import check_checkpoint_names, latest_checkpoint, load_sb3_checkpoint
from agents.training.config import MAX_ECHO, ConfigError, Schedule, TrainConfig, dump_config, load_config, shorten
from agents.training.curves import rewind_learning_curve
from agents.training.dqn_train import run_dqn
from agents.training.envs import make_training_env
from agents.training.lookahead_policy import LookaheadPolicy
from agents.training.lookahead_rollouts import keep_lookahead_in_rollouts
from agents.training.plan2_train import run_plan2
from agents.training.plan_train import plan_run_started, run_plan, solitaire_figures, table_figures
from agents.training.planN_train import run_planN
from yacht_env.atomic_files import remove_partial_files, write_atomically
from yacht_env.option_values import whole_number
from yacht_env.rules import rule_set

# -- command line --------------------------------------------------------------------------------


def parse_args(argv=None):
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", help="YAML config (see configs/)")
    source.add_argument("--resume", metavar="RUN_DIR", help="continue the run in this folder from its last checkpoint")
    source.add_argument(
        "--sweep",
        metavar="SWEEP_YAML",
        help="a sweep over configs on Ray Tune (see configs/sweep_quick.yaml); run it again to resume",
    )
    parser.add_argument(
        "--allow-large",
        action="store_true",
        help="start a run whose estimated memory or time exceeds this machine (agents/training/budget.py)",
    )
    parser.add_argument("--runs-dir", default="runs", help="where new run folders go (default runs/)")
    parser.add_argument(
        "--trust-pickles",
        action="store_true",
        help="allow a config file to name pickled models (ppo.init_from, ppo-zip: opponents): loading one can run code",
    )
    parser.add_argument("--ray-address", help="with --sweep: join this Ray cluster (default $RAY_ADDRESS, else Ray starts here)")
    parser.add_argument(
        "--ray-cpus",
        type=whole_number(least=1),
        help="with --sweep: CPUs of a Ray started here, 1 or more (default: all of this machine's)",
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config overrides, e.g. ppo.n_steps=512; with --sweep, sweep.KEY=VALUE sets a key of the sweep file",
    )
    return parser.parse_args(argv)


# -- checkpoints ----------------------------------------------------------------------------------


def save_model(model: MaskablePPO, path: Path) -> None:
    """Save through a temporary file and rename, so a kill mid-save never leaves a broken zip."""
    write_atomically(path, lambda handle: model.save(handle))


def check_learning_curve(run_dir: Path) -> None:
    """``ConfigError`` if the run's learning_curve.csv is empty or its rows are not steps and wall seconds."""
    curve = run_dir / "learning_curve.csv"
    if not curve.exists():
        return
    problem = f"{shorten(str(curve), 300)} cannot be continued"
    if not curve.is_file() or curve.stat().st_size > 100_000_000:
        raise ConfigError(f"{problem}: it is not a learning curve file (a CSV of at most 100 MB)")
    try:
        with curve.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except (UnicodeDecodeError, csv.Error) as error:
        raise ConfigError(f"{problem}: it is not a CSV text file ({first_line(error)[: 2 * MAX_ECHO]})") from None
    if not rows or rows[0][:2] != ["steps", "wall_seconds"]:
        raise ConfigError(
            f"{problem}: it does not start with the header steps,wall_seconds,... (move it aside to start a new one)"
        )
    for number, row in enumerate(rows[1:], 2):
        try:
            int(row[0]), float(row[1])
        except (ValueError, IndexError):
            raise ConfigError(f"{problem}: line {number} is {shorten(','.join(row))}, not steps,wall_seconds,...") from None


class Checkpoints(BaseCallback):
    """Saves the model every ``every`` steps as checkpoints/step_<N>.zip."""

    def __init__(self, run_dir: Path, every: int):
        super().__init__()
        self.folder = run_dir / "checkpoints"
        self.every = every
        self.next_at = 0

    def _on_training_start(self):
        self.next_at = (self.num_timesteps // self.every + 1) * self.every

    def _on_step(self):
        if self.num_timesteps >= self.next_at:
            save_model(self.model, self.folder / f"step_{self.num_timesteps}.zip")
            self.next_at += self.every
        return True


class PeriodicEvaluation(BaseCallback):
    """Every ``every`` steps: evaluate against the optimum (or at the table); log to TensorBoard and learning_curve.csv."""

    def __init__(self, config: TrainConfig, run_dir: Path, elapsed_before: float, on_evaluation=None):
        super().__init__()
        self.config = config
        self.on_evaluation = on_evaluation  # on_evaluation(steps, figures): a sweep reports to Ray Tune here
        self.curve = run_dir / "learning_curve.csv"
        self.elapsed_before = elapsed_before
        self.next_at = 0

    def _on_training_start(self):
        self.started = time.perf_counter()
        self.next_at = (self.num_timesteps // self.config.run.eval_every + 1) * self.config.run.eval_every

    def wall_time(self) -> float:
        """The run's wall time in seconds, counting the time before a resume."""
        return self.elapsed_before + time.perf_counter() - self.started

    def _on_step(self):
        if self.num_timesteps >= self.next_at:
            self.evaluate()
            self.next_at += self.config.run.eval_every
        return True

    def evaluate(self):
        """Evaluate the model, log the figures and append them to the learning curve."""
        run, env = self.config.run, self.config.env
        if env.num_players > 1:
            learner = evaluate_model_at_table(self.model, "ppo", env.opponents, run.eval_games, run.eval_seed, rules=env.rules)[
                0
            ].standings[0]
            figures = table_figures(learner)
        else:
            figures = solitaire_figures(evaluate_against_optimum(self.model, self.config, run.eval_games, run.eval_seed)[0])
        for key, value in figures.items():
            self.logger.record(f"eval/{key}", float(value))
        self.logger.dump(self.num_timesteps)
        new_file = not self.curve.exists()
        with self.curve.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new_file:
                writer.writerow(["steps", "wall_seconds", *figures])
            writer.writerow([self.num_timesteps, f"{self.wall_time():.1f}", *figures.values()])
        if self.on_evaluation is not None:
            self.on_evaluation(self.num_timesteps, {key: float(value) for key, value in figures.items()})


def evaluate_against_optimum(model, config: TrainConfig, games: int, seed: int, reference=(), name: str = "ppo") -> list[Summary]:
    """The model (and the named reference policies) on ``games`` common-random-number games of the
    config's rules, every decision graded by that rule set's exact optimum (agents.evaluate).
    """
    rules = rule_set(config.env.rules)
    policies = {name: PPOPolicy(model, name, rules=rules, encoding=config.env.observation_encoding)}
    policies.update({ref: make_policy(ref, rules=rules, seed=seed) for ref in reference})
    return evaluate_policies(policies, games, seed, rules)[0]


# -- the model ------------------------------------------------------------------------------------


def schedule(value: float | Schedule):
    """A constant, or SB3's callable of progress_remaining (1 -> 0) for a linear schedule.

    The callable closes over plain floats: SB3 pickles it into every saved model.
    """
    if isinstance(value, Schedule):
        start, end = float(value.start), float(value.end)
        return lambda remaining: end + (start - end) * remaining
    return float(value)


def new_model(config: TrainConfig, env, run_dir: Path) -> MaskablePPO:
    """A new MaskablePPO model for ``config``, playing in ``env`` and logging to ``run_dir``."""
    ppo = config.ppo
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[ppo.activation]
    policy_kwargs = {"net_arch": list(ppo.net_arch), "activation_fn": activation}
    if ppo.policy == "lookahead":
        policy = LookaheadPolicy
        policy_kwargs.update(
            temperature=ppo.lookahead_temperature, encoding=config.env.observation_encoding, rules=config.env.rules
        )
    else:
        policy = "MultiInputPolicy" if config.env.observation_encoding == "dict" else "MlpPolicy"
    model = MaskablePPO(
        policy,
        env,
        learning_rate=schedule(ppo.learning_rate),
        n_steps=ppo.n_steps,
        batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef if not isinstance(ppo.ent_coef, Schedule) else ppo.ent_coef.start,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        policy_kwargs=policy_kwargs,
        tensorboard_log=str(run_dir / "tb"),
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    record_rules(model, config.env.rules)  # saved in every checkpoint and exported to the model file
    keep_lookahead_in_rollouts(model)  # a look-ahead policy's q is computed once per sample, not once per epoch
    return model


@contextmanager
def unchecked_distributions():
    """Within: torch builds distributions without checking their parameters (restored after).

    PPO builds three categorical distributions for every minibatch (sb3-contrib's masking rebuilds
    them), and checking each for NaN logits was about 3% of the training time. It checks nothing
    that training relies on: a NaN still stops training, when torch refuses to sample from it.
    """
    checked = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        torch.distributions.Distribution.set_default_validate_args(checked)


class EntropySchedule(BaseCallback):
    """Anneals the entropy coefficient linearly (SB3 takes only a constant)."""

    def __init__(self, value: Schedule, total: int):
        super().__init__()
        self.value, self.total = value, total

    def _on_step(self):
        progress = min(self.num_timesteps / self.total, 1.0)
        self.model.ent_coef = self.value.start + (self.value.end - self.value.start) * progress
        return True


def steps_to_train(remaining: int, rollout_steps: int) -> int:
    """The steps ``learn`` takes to do ``remaining`` more: SB3 collects whole rollouts of
    ``rollout_steps`` (n_steps x num_envs) and stops after the one that reaches the total.
    """
    return -(-max(remaining, 0) // rollout_steps) * rollout_steps


class TrainingProgress(ProgressBarCallback):
    """SB3's progress bar, its total the steps the run will really take (see steps_to_train).

    SB3's own bar counts to ``ppo.total_timesteps`` and then runs past it (602,112/600,000).
    """

    def __init__(self, total: int):
        super().__init__()
        self.total = total

    def _on_training_start(self):
        from tqdm.rich import tqdm

        self.pbar = tqdm(total=self.total)


# -- main -----------------------------------------------------------------------------------------


def load_checkpoint(path: Path, config: TrainConfig, env, run_dir: Path) -> MaskablePPO:
    """A checkpoint of this run (a zip the run wrote itself, checked as :func:`load_sb3_checkpoint` checks it), with
    its learning rate rebuilt from the config.
    """
    model = load_sb3_checkpoint(MaskablePPO, path, env, run_dir, schedule(config.ppo.learning_rate))
    model._setup_lr_schedule()  # rebuilt from the config, not unpickled
    check_model_rules(model, repr(str(path)), config.env.rules)
    keep_lookahead_in_rollouts(model)
    return model


def start_from(model: MaskablePPO, path: str) -> None:
    """Copy the weights of the model at ``path`` (``ppo.init_from``) into ``model``; one line if they do not fit."""
    source = load_sb3_model(path)
    check_model_rules(source, f"ppo.init_from {path!r}", model_rules(model))
    if source.observation_space != model.observation_space:
        raise ModelLoadError(
            f"ppo.init_from {path!r} reads observations {source.observation_space}, "
            f"this run's env gives {model.observation_space}"
        )
    try:
        model.set_parameters(source.get_parameters(), exact_match=True, device="cpu")
    except (RuntimeError, ValueError) as error:
        raise ModelLoadError(f"ppo.init_from {path!r} has another network than this run: {first_line(error)}") from None


def finish(config: TrainConfig, run_dir: Path, model: MaskablePPO) -> None:
    """The final model (model.zip, then model.safetensors to play and share) and the final evaluation (eval.json)."""
    if not (run_dir / "model.zip").exists():
        save_model(model, run_dir / "model.zip")
    export_model(model, run_dir / "model.safetensors")
    print(f"model: {run_dir / 'model.zip'} (to resume or fine-tune), {run_dir / 'model.safetensors'} (to play and share)")

    # Final evaluation: against the optimum on common random numbers, or at the table for a table run.
    games, seed, name = config.run.final_eval_games, config.run.eval_seed, f"ppo:{run_dir / 'model.safetensors'}"
    if config.env.num_players > 1:
        result, _ = evaluate_model_at_table(model, name, config.env.opponents, games, seed, rules=config.env.rules)
        print_tournament(result)
        save_tournament_json(run_dir / "eval.json", result)
        return
    summaries = evaluate_against_optimum(model, config, games, seed, reference=default_policies(), name=name)
    optimum = expected_score(config.env.rules)
    print(f"rules: {config.env.rules}")
    rules = rule_set(config.env.rules)
    print_table(summaries, optimum, games, seed, rules)
    save_json(run_dir / "eval.json", summaries, optimum, games, seed, rules=rules)


# -- main -----------------------------------------------------------------------------------------


def main(argv=None):
    """Run the command line: a training run, a resume, or a sweep."""
    args = parse_args(argv)
    if args.sweep:  # one `train` per trial, on Ray Tune
        from agents.training.sweep import main_sweep

        return main_sweep(args.sweep, train, args.runs_dir, args.overrides, args.ray_address, args.ray_cpus, args.allow_large)
    if args.ray_address or args.ray_cpus is not None:
        sys.exit("error: --ray-address and --ray-cpus go with --sweep")

    # 1. The config and the run folder: a new run, or the one being resumed. Nothing is written
    #    until the config, the envs and the model are known to work.
    try:
        if args.resume:
            run_dir = Path(args.resume)
            if not run_dir.is_dir():
                raise ConfigError(f"--resume {args.resume!r}: there is no run folder there (train.py --config makes one)")
            if not (run_dir / "config.yaml").is_file():
                raise ConfigError(f"--resume {args.resume!r}: the folder holds no config.yaml, so it is not a run folder")
            config = load_config(run_dir / "config.yaml", args.overrides)
            check_checkpoint_names(run_dir)
            check_learning_curve(run_dir)
        else:
            config = load_config(args.config, args.overrides)
            run_dir = Path(args.runs_dir) / config.name
            check_checkpoint_names(run_dir)
            if latest_checkpoint(run_dir) or (run_dir / "model.zip").exists() or plan_run_started(run_dir):
                raise ConfigError(
                    f"run folder {str(run_dir)!r} already holds a run: resume it with --resume {run_dir}, or set name=..."
                )
        check_init_from(config)
        if not args.trust_pickles:
            check_no_pickles(config, args.overrides)
        if not args.allow_large:
            check_budget(config)
    except ConfigError as error:
        sys.exit(f"error: {error}")
    if config.algorithm in ("plan", "plan2", "planN", "dqn"):
        run = {"plan": run_plan, "plan2": run_plan2, "planN": run_planN, "dqn": run_dqn}[config.algorithm]
        try:
            return run(config, run_dir, resume=bool(args.resume))
        except (ConfigError, ModelLoadError) as error:
            sys.exit(f"error: {error}")

    # A run with its final model is never trained again; killed during its final evaluation, it finishes that.
    if args.resume and (run_dir / "model.zip").exists():
        if (run_dir / "eval.json").exists() and (run_dir / "model.safetensors").exists():
            print(f"{run_dir} is finished (model.zip, model.safetensors, eval.json): nothing to resume")
            return
        print(f"{run_dir} has its final model: finishing its final evaluation, without training")
        try:
            model = load_checkpoint(run_dir / "model.zip", config, None, run_dir)
        except ModelLoadError as error:
            sys.exit(f"error: {error}")
        torch.set_num_threads(config.run.torch_threads)
        finish(config, run_dir, model)
        return
    try:
        train(config, run_dir, resume=bool(args.resume))
    except ModelLoadError as error:
        sys.exit(f"error: {error}")


def check_init_from(config: TrainConfig) -> None:
    """``ConfigError`` if ``ppo.init_from`` names no file."""
    if config.ppo.init_from and not Path(config.ppo.init_from).is_file():
        raise ConfigError(f"ppo.init_from {config.ppo.init_from!r} is not a model file (a model.zip saved by train.py)")


def check_no_pickles(config: TrainConfig, overrides: list[str]) -> None:
    """``ConfigError`` if the config file (not an override typed on the command line) names a pickled model."""
    typed = {override.split("=", 1)[0].strip() for override in overrides}
    named = []
    if config.ppo.init_from and not typed & {"ppo", "ppo.init_from"}:
        named.append(f"ppo.init_from {shorten(config.ppo.init_from, 300)}")
    if not typed & {"env", "env.opponents"}:
        named += [f"env.opponents {shorten(name, 300)}" for name in config.env.opponents if name.startswith("ppo-zip:")]
    if named:
        raise ConfigError(
            f"the config names a pickled model ({'; '.join(named)}): loading one can run any code; "
            "pass --trust-pickles if you trust the file, or give a ppo: model (.safetensors) instead"
        )


def train(config: TrainConfig, run_dir: Path, resume: bool = False, on_evaluation=None) -> None:
    """Train ``config`` in ``run_dir`` (from its last checkpoint if ``resume``), then evaluate the model.

    Nothing is written to ``run_dir`` until the envs and the model are built; a checkpoint or
    ``ppo.init_from`` model that does not fit raises ``ModelLoadError``. ``on_evaluation(steps,
    figures)`` is called after each periodic evaluation (a sweep reports to Ray Tune there).
    """
    # 2. Seeds and envs.
    torch.set_num_threads(config.run.torch_threads)
    set_random_seed(config.seed)
    random.seed(config.seed)
    np.random.seed(config.seed)
    env = make_training_env(config.env, seed=config.seed)

    # 3. The model: fresh, or the last checkpoint with its step count.
    if resume:
        for stale in remove_partial_files(run_dir):
            print(f"removed {stale}, left by a write that was killed")
    checkpoint = latest_checkpoint(run_dir) if resume else None
    elapsed_before = 0.0
    if checkpoint is not None:
        model = load_checkpoint(checkpoint, config, env, run_dir)
    else:
        model = new_model(config, env, run_dir)
        if config.ppo.init_from:  # fine-tuning, e.g. a win-seeking agent from one that learnt to score
            start_from(model, config.ppo.init_from)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(run_dir / "config.yaml", lambda handle: handle.write(dump_config(config).encode()))
    if checkpoint is not None:
        elapsed_before = rewind_learning_curve(run_dir, model.num_timesteps)
        print(f"resuming {run_dir} from {checkpoint.name} ({model.num_timesteps:,} steps done)")
    remaining = config.ppo.total_timesteps - model.num_timesteps

    # 4. Train, with checkpoints and periodic evaluation.
    callbacks = [
        Checkpoints(run_dir, config.run.checkpoint_every),
        PeriodicEvaluation(config, run_dir, elapsed_before, on_evaluation),
    ]
    if isinstance(config.ppo.ent_coef, Schedule):
        callbacks.append(EntropySchedule(config.ppo.ent_coef, config.ppo.total_timesteps))
    if config.run.progress_bar:
        callbacks.append(TrainingProgress(steps_to_train(remaining, model.n_steps * model.n_envs)))
    steps_before, started = model.num_timesteps, time.perf_counter()
    if remaining > 0:
        with unchecked_distributions():
            model.learn(
                total_timesteps=remaining,
                callback=CallbackList(callbacks),
                reset_num_timesteps=checkpoint is None,
                tb_log_name="ppo",
            )
    seconds = time.perf_counter() - started
    save_model(model, run_dir / "model.zip")
    done = model.num_timesteps - steps_before
    print(f"trained {done:,} steps in {seconds:.0f} s ({done / max(seconds, 1e-9):,.0f} steps/s), {model.num_timesteps:,} in all")

    # 5. The model to play and share, and the final evaluation.
    finish(config, run_dir, model)


if __name__ == "__main__":
    main()
