"""Plain PPO on ``Yacht-v0`` with no action masks: learning curves of the score and of illegal actions.

Stable-Baselines3's ``PPO`` with ``MlpPolicy`` and its default hyperparameters sees only the
observation: nothing stops it from picking an illegal action (re-rolling with no rolls left,
scoring a row that is already written). The env ignores such an action, subtracts
``illegal_action_penalty`` from the reward and truncates the episode after ``max_illegal_actions``
of them. This script trains one such agent and writes, every ``log_every`` steps,

- ``score``: the mean points written per game (``info["total"]`` when the episode ends; a truncated
  game counts with the points it had), over the games that ended in the window;
- ``illegal_rate``: the share of the window's actions that were illegal;
- ``truncated``: the share of the window's games cut off by ``max_illegal_actions``.

Run it (2M steps took 74 minutes with two runs side by side on a shared two-core machine)::

    python -m examples.ppo_unmasked --out runs/unmasked-defaults                      # the env's defaults
    python -m examples.ppo_unmasked --out runs/unmasked-tuned --illegal-action-penalty 10 --max-illegal-actions 5
    python -m examples.ppo_unmasked --plot runs/unmasked-defaults runs/unmasked-tuned --plot-out docs/ppo_unmasked.png

Each run writes ``curve.csv`` and ``result.json`` (the final evaluations) to ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from yacht_env.option_values import decimal_number, whole_number


@dataclass
class Args:
    """The run's settings, one command-line flag each."""

    out: Path
    """Folder for curve.csv, result.json and the model."""
    total_timesteps: int = 2_000_000
    """Environment steps to train for."""
    illegal_action_penalty: float = 1.0
    """Points subtracted per illegal action (the env's default is 1.0)."""
    max_illegal_actions: int = 100
    """Illegal actions before the env truncates the game (the env's default is 100)."""
    n_envs: int = 8
    """Games played side by side (``make_vec_env``'s ``n_envs``)."""
    batch_size: int = 512
    """PPO minibatch size. SB3's default of 64 takes 2,560 gradient steps per 16,384-step rollout;
    512 takes 320, so that 2M steps fit in about an hour on two CPU cores."""
    seed: int = 0
    """Seeds the envs, the network and the evaluation games."""
    log_every: int = 50_000
    """Steps per point of the learning curve."""
    eval_games: int = 1000
    """Games of each final evaluation (deterministic and sampled actions)."""


CURVE_FIELDS = ["timesteps", "games", "score", "illegal_rate", "truncated", "seconds"]


class CurveLogger:
    """Collects per-game totals and illegal actions from the infos PPO sees; one CSV row per window."""

    def __init__(self, n_envs: int, log_every: int, path: Path):
        self.log_every = log_every
        self.path = path
        self.illegal_in_game = np.zeros(n_envs, dtype=np.int64)
        self.started = time.perf_counter()
        self._reset_window()
        with path.open("w", newline="") as file:
            csv.writer(file).writerow(CURVE_FIELDS)

    def _reset_window(self):
        self.scores: list[int] = []
        self.truncations = 0
        self.window_actions = 0
        self.window_illegal = 0

    def on_step(self, timesteps: int, infos, dones) -> None:
        """Count the step's actions, illegal actions and ended games into the current window."""
        for i, (info, done) in enumerate(zip(infos, dones)):
            self.window_actions += 1
            if info["illegal_action"]:
                self.illegal_in_game[i] += 1
                self.window_illegal += 1
            if done:
                self.scores.append(info["total"])
                self.truncations += bool(info.get("TimeLimit.truncated", False))
                self.illegal_in_game[i] = 0
        if self.window_actions >= self.log_every:
            row = [
                timesteps,
                len(self.scores),
                round(float(np.mean(self.scores)), 3) if self.scores else "",
                round(self.window_illegal / self.window_actions, 5),
                round(self.truncations / len(self.scores), 5) if self.scores else "",
                round(time.perf_counter() - self.started, 1),
            ]
            with self.path.open("a", newline="") as file:
                csv.writer(file).writerow(row)
            print(dict(zip(CURVE_FIELDS, row)), flush=True)
            self._reset_window()


def make_env_kwargs(args: Args) -> dict:
    """The env settings the run varies: the illegal-action penalty and cap."""
    return {"illegal_action_penalty": args.illegal_action_penalty, "max_illegal_actions": args.max_illegal_actions}


def evaluate(model, args: Args, deterministic: bool) -> dict:
    """``eval_games`` games of the trained policy (its most likely action, or sampled): mean score,
    illegal rate, truncated share. A deterministic policy that picks an illegal action picks it
    again (the ignored action leaves the state as it was) until ``max_illegal_actions`` ends the game.
    """
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("Yacht-v0", n_envs=args.n_envs, seed=args.seed + 10_000, env_kwargs=make_env_kwargs(args))
    scores, truncated, actions, illegal = [], 0, 0, 0
    obs = venv.reset()
    while len(scores) < args.eval_games:
        action, _ = model.predict(obs, deterministic=deterministic)
        obs, _, dones, infos = venv.step(action)
        actions += len(infos)
        for info, done in zip(infos, dones):
            illegal += info["illegal_action"]
            if done:
                scores.append(info["total"])
                truncated += bool(info.get("TimeLimit.truncated", False))
    venv.close()
    scores = np.array(scores[: args.eval_games], dtype=float)
    return {
        "games": len(scores),
        "score_mean": round(float(scores.mean()), 2),
        "score_ci95": round(float(1.96 * scores.std(ddof=1) / np.sqrt(len(scores))), 2),
        "illegal_rate": round(illegal / actions, 5),
        "truncated": round(truncated / len(scores), 4),
    }


def train(args: Args) -> dict:
    """Train plain PPO for ``args.total_timesteps`` steps; write the curve, the model and result.json."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    import yacht_env  # noqa: F401  (registers Yacht-v0)

    torch.set_num_threads(1)  # small MLP: threads cost more than they give
    args.out.mkdir(parents=True, exist_ok=True)
    venv = make_vec_env("Yacht-v0", n_envs=args.n_envs, seed=args.seed, env_kwargs=make_env_kwargs(args))
    logger = CurveLogger(args.n_envs, args.log_every, args.out / "curve.csv")

    class Curve(BaseCallback):
        def _on_step(self) -> bool:
            logger.on_step(self.num_timesteps, self.locals["infos"], self.locals["dones"])
            return True

    model = PPO("MlpPolicy", venv, batch_size=args.batch_size, seed=args.seed, verbose=0, device="cpu")
    started = time.perf_counter()
    model.learn(total_timesteps=args.total_timesteps, callback=Curve())
    seconds = time.perf_counter() - started
    model.save(args.out / "model.zip")
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(args).items()}
    result = {"args": settings, "train_seconds": round(seconds, 1)}
    result["eval_deterministic"] = evaluate(model, args, deterministic=True)
    result["eval_sampled"] = evaluate(model, args, deterministic=False)
    (args.out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


def plot(runs: list[Path], out: Path) -> None:
    """Score and illegal-action rate against steps, one line per run (labelled by its settings)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_score, ax_illegal) = plt.subplots(1, 2, figsize=(10, 3.8))
    for run in runs:
        with (run / "curve.csv").open() as file:
            rows = [row for row in csv.DictReader(file) if row["score"]]
        settings = json.loads((run / "result.json").read_text())["args"] if (run / "result.json").exists() else {}
        label = run.name
        if settings:
            label = f"penalty {settings['illegal_action_penalty']:g}, max illegal {settings['max_illegal_actions']}"
        steps = [int(row["timesteps"]) / 1e6 for row in rows]
        ax_score.plot(steps, [float(row["score"]) for row in rows], label=label)
        ax_illegal.plot(steps, [float(row["illegal_rate"]) for row in rows], label=label)
    ax_score.set(xlabel="steps (millions)", ylabel="points per game", title="Score (sum of legal points)")
    ax_illegal.set(xlabel="steps (millions)", ylabel="share of actions", title="Illegal actions", yscale="log")
    for ax in (ax_score, ax_illegal):
        ax.grid(alpha=0.3)
    ax_score.legend(fontsize=8)
    fig.suptitle("Plain PPO (MlpPolicy, SB3 defaults but batch size 512, 8 envs) on Yacht-v0, no action masks", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")


def parse_args(argv=None) -> tuple[Args | None, argparse.Namespace]:
    """The command line as :class:`Args` (None when only a plot is asked for) and the raw namespace."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="folder for curve.csv, result.json and model.zip")
    # the numbers a person types, in ASCII (yacht_env.option_values)
    read: dict[type, Callable[[str], float]] = {int: whole_number(), float: decimal_number()}
    for name, field in Args.__dataclass_fields__.items():
        if name != "out":
            parser.add_argument("--" + name.replace("_", "-"), type=read[type(field.default)], default=field.default)
    parser.add_argument("--plot", type=Path, nargs="+", metavar="RUN", help="plot these run folders instead of training")
    parser.add_argument("--plot-out", type=Path, default=Path("ppo_unmasked.png"))
    namespace = parser.parse_args(argv)
    if namespace.plot:
        return None, namespace
    if namespace.out is None:
        parser.error("--out is required to train (or pass --plot RUN...)")
    values = {name: getattr(namespace, name) for name in Args.__dataclass_fields__}
    if min(values["total_timesteps"], values["n_envs"], values["batch_size"], values["log_every"], values["eval_games"]) < 1:
        parser.error("--total-timesteps, --n-envs, --batch-size, --log-every and --eval-games must be positive")
    return Args(**values), namespace


def main(argv=None) -> None:
    """``python -m examples.ppo_unmasked``: train, or plot earlier runs' curves."""
    args, namespace = parse_args(argv)
    if args is None:
        missing = [str(run) for run in namespace.plot if not (run / "curve.csv").exists()]
        if missing:
            sys.exit(f"no curve.csv in {', '.join(missing)}: train there first with --out")
        plot(namespace.plot, namespace.plot_out)
        return
    try:
        train(args)
    except ValueError as error:  # a bad env setting: the env's one-line message
        sys.exit(f"error: {error}")


if __name__ == "__main__":
    main()
