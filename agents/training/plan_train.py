"""Training the planning agent (``algorithm: plan``): fitted value iteration on the agent's own games.

Each iteration plays ``plan.games_per_iteration`` self-play games with the planner under the current
value ``V`` (with ``plan.epsilon`` random decisions, :mod:`agents.training.plan_games`), then backs up
``V`` at the turn-start sheets those games visited: the target of a sheet ``x`` is ``(T V)(x)``, the
turn's expected points played best under ``V`` plus ``V`` of the sheet it leaves, computed exactly from
the dice probabilities (:mod:`agents.training.plan_values`). Why backups rather than sampled returns:
the dice are the rules, so the turn's expectation is exact and costs no more than the planner's own
decision; a Monte Carlo or TD target would add the noise of every roll (a game's score has a standard
deviation near 40 points) for nothing. The exact solution's values and choices enter nowhere: not in
the targets, the features, the initialisation (``V`` starts at 0) or the choice of checkpoint (the
final model is the last one); the evaluations against the optimum only measure.

The run folder is a PPO run's (train.py): config.yaml, tb/ (TensorBoard), checkpoints/step_<N>.safetensors
(N: games played; the value model's tensors), learning_curve.csv (steps = games), model.safetensors (the
plan file, :mod:`agents.learned.plan_files`, played as ``plan:PATH``) and eval.json. ``--resume`` continues from the
last checkpoint (the network's optimizer and the replay start afresh; the games' seeds follow from the
run's seed and the games played, so they do not repeat).
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import numpy as np

from agents.evaluate import evaluate_policies, print_table, save_json
from agents.learned.model_files import ModelLoadError, read_safetensors
from agents.learned.plan import PREFIX, PlanPolicy, TurnPlanner
from agents.learned.plan2_files import check_layers, num_features
from agents.learned.plan_files import check_games, check_values, read_plan_file, write_plan_file
from agents.registry import default_policies, make_policy
from agents.solvers.optimal import expected_score
from agents.training import checkpoints
from agents.training.config import TrainConfig, dump_config, shorten
from agents.training.curves import rewind_learning_curve
from agents.training.plan_games import GamePlayer
from agents.training.plan_values import NetValue, TabularValue
from yacht_env.atomic_files import remove_partial_files, write_atomically
from yacht_env.rules import RuleSet, rule_set

CHECKPOINT_KEY = "yacht_plan_checkpoint"


def value_model(config: TrainConfig, rules: RuleSet):
    """The fresh value model the config asks for (``auto``: a table without a sheet state, else a network)."""
    plan, player = config.plan, GamePlayer(rules)
    kind = plan.value_model if plan.value_model != "auto" else ("net" if rules.has_bonus_or_joker else "tabular")
    if kind == "tabular":
        return TabularValue(player)
    return NetValue(
        player,
        plan.net_arch,
        plan.learning_rate,
        plan.epochs,
        plan.batch_size,
        plan.replay_states,
        config.seed,
        plan.final_learning_rate,
        plan.features,
    )


def game_seed(seed: int, games_done: int) -> int:
    """The seed of the self-play games that start after ``games_done`` games of a run seeded ``seed``."""
    return int(np.random.SeedSequence([seed, games_done]).generate_state(1)[0])


def run_progress(games_done: int, games: int, deadline=None, wall=None) -> float:
    """The share of a run done, by its games or by its wall time (``wall`` seconds ending at ``deadline``), the further."""
    progress = games_done / games
    if deadline is not None and wall:
        progress = max(progress, 1.0 - (deadline - time.perf_counter()) / wall)
    return progress


def learn(model, games: int, games_per_iteration: int, epsilon: float, seed: int, games_done: int = 0, deadline=None, wall=None):
    """Iterate: play games under the model's ``V``, learn from their turn-start sheets. Yields ``(games_done, mean score)``.

    The share of the run done (by games, or by wall time when ``wall`` seconds end at ``deadline``) is handed to
    the model, whose learning rate may follow it.
    """
    player = model.player
    while games_done < games and (deadline is None or time.perf_counter() < deadline):
        count = min(games_per_iteration, games - games_done)
        states, scores = player.play_games(model.sheet_values(), count, epsilon, game_seed(seed, games_done))
        model.learn(states.reshape(-1), run_progress(games_done, games, deadline, wall))
        games_done += count
        yield games_done, float(scores.mean())


# -- checkpoints --------------------------------------------------------------------------------------


def save_checkpoint(run_dir: Path, model, games_done: int) -> Path:
    """The model's tensors and the games played, as checkpoints/step_<games>.safetensors (atomically)."""
    from safetensors.torch import save

    path = run_dir / "checkpoints" / f"step_{games_done}.safetensors"
    data = save(model.tensors(), metadata={CHECKPOINT_KEY: json.dumps({"games": games_done, "value_model": model.kind})})
    write_atomically(path, lambda handle: handle.write(data))
    return path


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The run's checkpoint of most games, or None; ``ConfigError`` for a checkpoint named otherwise."""
    return checkpoints.latest_checkpoint(run_dir, suffix=".safetensors", counts="games")


def load_checkpoint(path: Path, model) -> int:
    """Restore ``model`` from a checkpoint of this run; returns the games it had played.

    The file is read as a model file is (:func:`agents.learned.model_files.read_safetensors`: a regular file
    within the size bound, bounded JSON), its games as a plan file's, and the restored model is held to the
    checks of the file it will be saved as (a plan file's values, a plan2 file's layers). ``ModelLoadError``
    in one line if anything does not fit the run.
    """
    try:
        return _restore(path, model, "the file")
    except ModelLoadError as error:
        raise ModelLoadError(f"checkpoint {str(path)!r} cannot be resumed: {error}") from None


def _restore(path: Path, model, where: str) -> int:
    meta, tensors = read_safetensors(path, where, CHECKPOINT_KEY, "checkpoint")
    if not isinstance(meta, dict) or set(meta) != {"games", "value_model"}:
        raise ModelLoadError(f"{where}: its metadata must hold games and value_model, got {shorten(meta)}")
    games = check_games(meta["games"], where)
    if meta["value_model"] != model.kind:
        raise ModelLoadError(f"it holds a {shorten(meta['value_model'])} value model, this run's is {model.kind!r}")
    try:
        model.restore(tensors)
    except (KeyError, ValueError, RuntimeError, TypeError) as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelLoadError(f"its tensors do not fit this run's model ({shorten(detail, 300)})") from None
    check_restored(model, where)
    return games


def check_restored(model, where: str) -> None:
    """``ModelLoadError`` if the restored model would not pass as the file it is saved as at the run's end."""
    if model.kind in ("net2", "netN"):
        import torch

        from agents.learned import planN_files
        from yacht_env.game import MAX_PLAYERS

        tensors = {}
        for i, (weight, bias) in enumerate(model.layers()):
            tensors[f"layers.{i}.weight"], tensors[f"layers.{i}.bias"] = torch.from_numpy(weight), torch.from_numpy(bias)
        if model.kind == "net2":
            check_layers(tensors, num_features(model.rules), where)
        else:  # one share of the win per seat
            check_layers(tensors, planN_files.num_features(model.rules, model.has_prior), where, outputs=MAX_PLAYERS)
            weight = float(model.lead_weight.detach())
            if not np.isfinite(weight) or abs(weight) > planN_files.MAX_WEIGHT:
                raise ModelLoadError(
                    f"{where}: its lead_weight must be finite and at most {planN_files.MAX_WEIGHT:g}, got {weight!r}"
                )
    else:
        check_values(model.sheet_values(), where)


# -- evaluation and the learning curve ------------------------------------------------------------------


def evaluate_values(values: np.ndarray, rules: RuleSet, games: int, seed: int, name: str = "plan", reference=()):
    """The planner under ``values`` (and the named reference policies) on common-random-number games, graded by the optimum."""
    policies = {name: PlanPolicy(TurnPlanner(rules, values), name, rules=rules)}
    policies.update({ref: make_policy(ref, rules=rules, seed=seed) for ref in reference})
    return evaluate_policies(policies, games, seed, rules)[0]


def append_curve(run_dir: Path, games_done: int, wall: float, figures: dict) -> None:
    """One row of learning_curve.csv (its header first, for a new file)."""
    curve = run_dir / "learning_curve.csv"
    new_file = not curve.exists()
    with curve.open("a", newline="") as handle:
        writer = csv.writer(handle)
        if new_file:
            writer.writerow(["steps", "wall_seconds", *figures])
        writer.writerow([games_done, f"{wall:.1f}", *figures.values()])


def periodic_figures(values, config: TrainConfig, rules: RuleSet) -> dict:
    """Mean score, % of optimum and regret per decision of the planner under ``values`` on the evaluation games."""
    return solitaire_figures(evaluate_values(values, rules, config.run.eval_games, config.run.eval_seed)[0])


def solitaire_figures(summary) -> dict[str, str]:
    """A solitaire evaluation's learning-curve figures, as every algorithm's curve writes them."""
    return {
        "mean_score": f"{summary.mean:.3f}",
        "percent_of_optimal": f"{summary.percent_of_optimal:.3f}",
        "regret_per_decision": f"{summary.regret_per_decision:.5f}",
    }


def standing_figures(standing) -> dict[str, str]:
    """A table planner's learning-curve figures: its win rate with the 95% interval, and its mean score."""
    low, high = standing.win_rate_ci95
    return {
        "win_rate": f"{standing.win_rate:.4f}",
        "win_rate_low": f"{low:.4f}",
        "win_rate_high": f"{high:.4f}",
        "mean_score": f"{standing.mean_score:.3f}",
    }


def table_figures(standing) -> dict[str, str]:
    """A table evaluation's learning-curve figures (the learner's standing), as every algorithm's curve writes them."""
    return {"win_rate": f"{standing.win_rate:.4f}", "mean_score": f"{standing.mean_score:.3f}"}


# -- the run --------------------------------------------------------------------------------------------


def plan_run_started(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a planning run already (a checkpoint or its final model)."""
    return (run_dir / "model.safetensors").exists() or latest_checkpoint(run_dir) is not None


def run_plan(config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
    """train.py's planning run: train (or resume), or only finish the final evaluation of a run that has its model."""
    run_planning(config, run_dir, resume, train_plan, finish_plan)


def run_planning(config: TrainConfig, run_dir: Path, resume: bool, train, finish) -> None:
    """A planning run of either kind: ``train(config, run_dir, resume)``, or, for a run that has its final model,
    only ``finish(config, run_dir)`` (its final evaluation) when that was cut short; a finished run is left alone.
    """
    if resume and (run_dir / "model.safetensors").exists():
        if (run_dir / "eval.json").exists():
            print(f"{run_dir} is finished (model.safetensors, eval.json): nothing to resume")
            return
        print(f"{run_dir} has its final model: finishing its final evaluation, without training")
        finish(config, run_dir)
        return
    train(config, run_dir, resume)


def drive_run(config: TrainConfig, run_dir: Path, resume: bool, model, iterate, figures, board: str) -> int:
    """The loop both planning runs share; returns the games played in all.

    Restores ``model`` from the run's last checkpoint when resuming, writes the config, then runs
    ``iterate(games_done, deadline, wall)`` (yielding ``(games_done, {scalar: value})`` after each iteration)
    until it stops, with a checkpoint every ``run.checkpoint_every`` games and ``figures()`` (a row of the
    learning curve) every ``run.eval_every``; TensorBoard logs go to ``tb/<board>``. A last checkpoint closes it.
    """
    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.set_num_threads(config.run.torch_threads)
    games_done, elapsed_before = 0, 0.0
    checkpoint = latest_checkpoint(run_dir) if resume else None
    if resume:
        for stale in remove_partial_files(run_dir):
            print(f"removed {stale}, left by a write that was killed")
    if checkpoint is not None:
        games_done = load_checkpoint(checkpoint, model)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(run_dir / "config.yaml", lambda handle: handle.write(dump_config(config).encode()))
    if checkpoint is not None:
        elapsed_before = rewind_learning_curve(run_dir, games_done)
        print(f"resuming {run_dir} from {checkpoint.name} ({games_done:,} games done)")
    plan, run = config.plan, config.run
    writer = SummaryWriter(str(run_dir / "tb" / board))
    started = time.perf_counter()
    wall = None if plan.max_wall_minutes is None else 60 * plan.max_wall_minutes
    deadline = None if wall is None else started + wall - elapsed_before
    next_eval = (games_done // run.eval_every + 1) * run.eval_every
    next_checkpoint = (games_done // run.checkpoint_every + 1) * run.checkpoint_every
    first = games_done
    for games_done, scalars in iterate(games_done, deadline, wall):
        for key, value in scalars.items():
            writer.add_scalar(key, value, games_done)
        if games_done >= next_checkpoint:
            save_checkpoint(run_dir, model, games_done)
            next_checkpoint = (games_done // run.checkpoint_every + 1) * run.checkpoint_every
        if games_done >= next_eval:
            row = figures()
            for key, value in row.items():
                writer.add_scalar(f"eval/{key}", float(value), games_done)
            append_curve(run_dir, games_done, elapsed_before + time.perf_counter() - started, row)
            print(f"{games_done:,} games, {elapsed_before + time.perf_counter() - started:.0f} s: {row}")
            next_eval = (games_done // run.eval_every + 1) * run.eval_every
    writer.close()
    save_checkpoint(run_dir, model, games_done)
    print(f"trained {games_done - first:,} games in {time.perf_counter() - started:.0f} s, {games_done:,} in all")
    return games_done


def train_plan(config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
    """Train the planning agent of ``config`` in ``run_dir`` (from its last checkpoint if ``resume``), then evaluate it."""
    rules = rule_set(config.env.rules)
    model = value_model(config, rules)
    plan = config.plan

    def iterate(games_done, deadline, wall):
        played = learn(model, plan.total_games, plan.games_per_iteration, plan.epsilon, config.seed, games_done, deadline, wall)
        return ((games, {"train/self_play_mean_score": mean}) for games, mean in played)

    figures = lambda: periodic_figures(model.sheet_values(), config, rules)
    games_done = drive_run(config, run_dir, resume, model, iterate, figures, "plan")
    write_plan_file(run_dir / "model.safetensors", model.sheet_values(), rules, model.kind, games_done)
    finish_plan(config, run_dir)


def finish_plan(config: TrainConfig, run_dir: Path) -> None:
    """The final evaluation of the run's plan file (eval.json), against the default policies on common random numbers."""
    rules = rule_set(config.env.rules)
    path = run_dir / "model.safetensors"
    print(f"model: {path} (play it as {PREFIX}{path})")
    _, values = read_plan_file(path)
    games, seed = config.run.final_eval_games, config.run.eval_seed
    summaries = evaluate_values(values, rules, games, seed, f"{PREFIX}{path}", reference=default_policies())
    print(f"rules: {config.env.rules}")
    print_table(summaries, expected_score(rules), games, seed, rules)
    save_json(run_dir / "eval.json", summaries, expected_score(rules), games, seed, rules=rules)
