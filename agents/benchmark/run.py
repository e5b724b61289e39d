"""``python -m agents.benchmark run``: train a config (or take a policy as it is) on a track, evaluate it, write its results.

    python -m agents.benchmark run --track yacht-solo-1m --config configs/benchmark/ppo_recipe.yaml --method ppo-recipe
    python -m agents.benchmark run --track yacht-solo-1m --policy ppo:runs/mine/model.safetensors --method mine
    python -m agents.benchmark run --track yacht-duel-1m --config configs/benchmark/ppo_duel.yaml --method ppo-duel

With ``--config``, each training seed of the track (``--seeds`` picks some of them) is one ``train.py`` run in
``RUNS_DIR/TRACK/METHOD/seed<N>``, its config set to the track: the seed, the rules, the table, and the budget (PPO:
``ppo.total_timesteps``, whole rollouts within the budget; a masked DQN: ``dqn.total_timesteps``, whole rounds of
``dqn.train_freq`` steps of every env within the budget; a planning agent: ``plan.total_games``, the games whose
most env steps fit the budget); the run's own evaluations are cut to the fewest games, on deals far from the
track's. A config whose algorithm trains for another table than the track's is refused before any training. The
trained model, played as the registry's ``ALGORITHM:PATH``, is then evaluated on the track's deals and its results
file written to ``OUT/TRACK/METHOD/seed<N>.json``. A seed whose results file exists is skipped, and a run folder left
by a kill is resumed (``train.py --resume``): run the same command again to continue (a folder started with another
config or other overrides is refused, naming the settings that changed). With ``--policy``, the policy
(any name of :mod:`agents.registry`: a checkpoint is ``ppo:PATH``) is evaluated as it is, once, under ``--seeds``'
first seed.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import resource
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from agents.benchmark.results import (
    FORMAT,
    METHOD_PATTERN,
    VERSION,
    Evaluation,
    ResultsError,
    RunResult,
    Training,
    Unit,
    normalized_regret,
    read_results,
    write_results,
)
from agents.benchmark.tracks import TRACKS, TRAINING_SEEDS, Track, track
from agents.registry import find_policy
from agents.training.config import ConfigError, TrainConfig, load_config
from yacht_env.echo import echoed
from yacht_env.option_values import WHOLE
from yacht_env.rules import rule_set

TRAIN_PY = Path(__file__).resolve().parents[2] / "train.py"


class BenchmarkError(ValueError):
    """A benchmark run that cannot start or finish; the message is one line."""


def evaluate_on_track(fixed: Track, policy: str) -> Evaluation:
    """The policy on the track's deals: the mean figure, regret and normalized regret with their 95% intervals."""
    started = time.perf_counter()
    optimum = fixed.optimum()
    if fixed.seats == 1:
        from agents.evaluate import evaluate

        summary = evaluate([policy], fixed.games, fixed.eval_seed, rule_set(fixed.rules))[0][0]
        mean, mean_ci = summary.mean, summary.ci95
        regret, regret_ci = summary.regret_per_game, summary.regret_per_game_ci95
        replaced = summary.replaced_games
        scaled = (regret_ci[0] / optimum, regret_ci[1] / optimum)
    else:
        from agents.evaluation.tournament import tournament

        standing = tournament([policy, "optimal"], fixed.games, fixed.eval_seed, fixed.rules)[0].standings[0]
        mean, mean_ci, regret, regret_ci = standing.win_rate, standing.win_rate_ci95, None, None
        replaced = standing.replaced_games
        scaled = (1.0 - mean_ci[1] / optimum, 1.0 - mean_ci[0] / optimum)
    return Evaluation(
        rules=fixed.rules,
        seats=fixed.seats,
        games=fixed.games,
        seed=fixed.eval_seed,
        metric="score" if fixed.seats == 1 else "win_share",
        optimum=optimum,
        mean=mean,
        mean_ci95=tuple(mean_ci),
        regret_per_game=regret,
        regret_per_game_ci95=None if regret_ci is None else tuple(regret_ci),
        normalized_regret=normalized_regret(fixed.metric, mean, regret, optimum),
        normalized_regret_ci95=scaled,
        wall_seconds=time.perf_counter() - started,
        replaced_games=replaced,
    )


def budget_overrides(config: TrainConfig, fixed: Track) -> tuple[list[str], Unit, int, int]:
    """The overrides that fit a config to the track's budget: (overrides, unit, units, most env steps)."""
    per_game = fixed.max_steps_per_game()
    if config.algorithm in ("ppo", "dqn"):
        # SB3 stops only between rollouts (PPO) or rounds of train_freq steps of every env (DQN): whole ones fit the budget
        section, count, field = (
            ("ppo", config.ppo.n_steps, "ppo.n_steps")
            if config.algorithm == "ppo"
            else ("dqn", config.dqn.train_freq, "dqn.train_freq")
        )
        rollout = count * config.env.num_envs
        steps = fixed.budget // rollout * rollout
        if steps == 0:
            what = f"one {'rollout' if section == 'ppo' else 'round'} ({rollout:,} env steps: {field} x env.num_envs)"
            raise BenchmarkError(f"{what} exceeds the budget {fixed.budget:,}")
        return [f"{section}.total_timesteps={steps}"], "env_steps", steps, steps
    # the most players of one self-play game: plan plays alone, plan2 both seats of a table of two, planN every seat
    # of its largest table
    seats = {"plan": 1, "plan2": 2}.get(config.algorithm) or max(config.plan.table_sizes)
    games = fixed.budget // (per_game * seats)
    every = min(config.plan.games_per_iteration, games)
    overrides = [f"plan.total_games={games}", "plan.max_wall_minutes=null", f"plan.games_per_iteration={every}"]
    return overrides, "games", games, games * per_game * seats


def track_overrides(config_path: str, fixed: Track, seed: int, extra: list[str]) -> tuple[list[str], Unit, int, int, str]:
    """Every override of a track's run of the config: (overrides, unit, units, most env steps, algorithm)."""
    table = ["env.num_players=1", "env.opponents=[]"]
    if fixed.seats > 1:
        table = [f"env.num_players={fixed.seats}", "env.opponents=[optimal]", "env.vectorized=false"]
    overrides = [*extra, f"seed={seed}", f"name=seed{seed}", f"env.rules={fixed.rules}", *table]
    try:
        config = load_config(config_path, overrides)
    except ConfigError as error:
        load_config(config_path, extra)  # a config refused on its own: its own error, as train.py gives it
        raise BenchmarkError(f"track {fixed.name} is {track_in_words(fixed)}, where the config cannot run: {error}") from None
    budget, unit, units, steps = budget_overrides(config, fixed)
    every = max(units // 10, 1)
    low = 2 * fixed.seats  # the fewest games train.py evaluates: the track's evaluation is the one that counts
    # an evaluation row at every checkpoint: a resumed run's learning curve keeps the wall time of the part before
    run = [f"run.checkpoint_every={every}", f"run.eval_every={every}", f"run.eval_games={low}", f"run.final_eval_games={low}"]
    overrides += [*budget, *run, "run.progress_bar=false"]
    final = load_config(config_path, overrides)  # the whole config checked before anything runs
    return overrides, unit, units, steps, final.algorithm


def track_in_words(fixed: Track) -> str:
    """``solitaire yacht`` or ``yacht at a table of 2 against optimal``: the table and rules a track sets."""
    return f"solitaire {fixed.rules}" if fixed.seats == 1 else f"{fixed.rules} at a table of {fixed.seats} against optimal"


def trained_policy(algorithm: str, model: Path, fixed: Track) -> str:
    """The policy that plays the model file a run of ``algorithm`` ends with: the registry's ``ALGORITHM:PATH``
    (``planN:runs/.../model.safetensors``). ``BenchmarkError`` if the registry has none, or if it does not sit at
    the track's table.
    """
    name = f"{algorithm}:{model}"
    spec = find_policy(name)
    if spec is None:
        raise BenchmarkError(f"algorithm {algorithm!r} has no policy {algorithm}:PATH in agents.registry to play its model")
    try:
        spec.check_plays_at(name, fixed.seats)
    except ValueError as error:
        raise BenchmarkError(f"track {fixed.name} is {track_in_words(fixed)}: {error}") from None
    return name


def curve_end(run_dir: Path) -> tuple[int, float] | None:
    """The last row of the run's learning curve: (units done, wall seconds over every resume), or None."""
    path = run_dir / "learning_curve.csv"
    if not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return (int(rows[-1][0]), float(rows[-1][1])) if len(rows) > 1 else None


def flat(settings: dict, prefix: str = "") -> dict:
    """``{"ppo": {"n_steps": 8}}`` -> ``{"ppo.n_steps": 8}``: a config's settings by dotted key."""
    found = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            found.update(flat(value, f"{prefix}{key}."))
        else:
            found[prefix + key] = value
    return found


def check_same_run(run_dir: Path, config: TrainConfig) -> None:
    """``BenchmarkError`` unless the run folder a kill left was started with ``config``: resuming it would finish
    another config's run (a changed --config, or overrides) under this method's name.
    """
    try:
        started = load_config(run_dir / "config.yaml").model_dump()
    except ConfigError as error:
        raise BenchmarkError(f"{run_dir} is a run folder left by a kill that cannot be resumed: {error}") from None
    started, wanted = flat(started), flat(config.model_dump())
    changed = [key for key in wanted if started.get(key) != wanted[key]]
    if changed:
        raise BenchmarkError(
            f"{run_dir} was started with another config (changed: {', '.join(changed)}): give the same --config and "
            "overrides to resume it, or move the folder away to start over"
        )


def train_seed(config_path: str, fixed: Track, seed: int, method: str, runs_dir: Path, extra: list[str], trust: bool):
    """Train one seed with train.py (resuming a run folder a kill left); (training figures, policy name)."""
    if not TRAIN_PY.is_file():
        raise BenchmarkError(f"training needs train.py from the project's repository, not found at {TRAIN_PY}")
    overrides, unit, units, steps, algorithm = track_overrides(config_path, fixed, seed, extra)
    parent = runs_dir / fixed.name / method
    run_dir = parent / f"seed{seed}"
    policy = trained_policy(algorithm, run_dir / "model.safetensors", fixed)
    if (run_dir / "config.yaml").is_file():
        check_same_run(run_dir, load_config(config_path, overrides))
        command = [sys.executable, str(TRAIN_PY), "--resume", str(run_dir)]
    else:
        command = [sys.executable, str(TRAIN_PY), "--config", config_path, "--runs-dir", str(parent), *overrides]
    if trust:
        command.append("--trust-pickles")
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    print(f"{fixed.name} {method} seed {seed}: {shlex.join(command)}", flush=True)
    finished = subprocess.run(command, cwd=Path.cwd())
    after, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter() - started
    if finished.returncode != 0:
        what = f"training {fixed.name} {method} seed {seed}"
        raise BenchmarkError(f"{what} failed (train.py exit {finished.returncode}; see above)")
    end = curve_end(run_dir)
    training = Training(
        algorithm=algorithm,
        unit=unit,
        done=end[0] if end else units,
        env_steps_at_most=steps,
        wall_seconds=end[1] if end else wall,
        cpu_seconds=(after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        cores=len(os.sched_getaffinity(0)),
    )
    return training, policy


def project_version() -> str:
    """The installed project's version, or ``unknown`` when run from a tree that is not installed."""
    try:
        return version("yacht-rl")
    except PackageNotFoundError:
        return "unknown"


def run_seed(args: argparse.Namespace, fixed: Track, seed: int) -> Path:
    """One seed of the command: trained (or taken as given), evaluated, its results file written; skipped if done."""
    out = Path(args.out) / fixed.name / args.method / f"seed{seed}.json"
    if out.exists():
        read_results(out)  # a finished seed is skipped only if its file holds a valid run
        print(f"{out} exists: seed {seed} is done")
        return out
    if args.config:
        runs_dir = Path(args.runs_dir)
        training, policy = train_seed(args.config, fixed, seed, args.method, runs_dir, args.overrides, args.trust_pickles)
        source = args.config
    else:
        training = Training(
            algorithm=None, unit="env_steps", done=0, env_steps_at_most=0, wall_seconds=None, cpu_seconds=None, cores=None
        )
        policy = source = args.policy
    evaluation = evaluate_on_track(fixed, policy)
    given = ["--config", args.config] if args.config else ["--policy", args.policy]
    command = ["python", "-m", "agents.benchmark", "run", "--track", fixed.name, *given, "--method", args.method]
    run = RunResult(
        format=FORMAT,
        version=VERSION,
        track=fixed.name,
        method=args.method,
        seed=seed,
        policy=policy,
        source=source,
        command=shlex.join([*command, "--seeds", str(seed), *args.overrides]),
        training=training,
        evaluation=evaluation,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        project_version=project_version(),
    )
    write_results(out, run)
    low, high = evaluation.normalized_regret_ci95
    figure = f"normalized regret {evaluation.normalized_regret:.4f} [{low:.4f}, {high:.4f}]"
    print(f"{out}: {fixed.name} {args.method} seed {seed}: {evaluation.metric} {evaluation.mean:.4f}, {figure}", flush=True)
    if evaluation.replaced_games:
        replaced = f"{policy} was replaced by optimal in {evaluation.replaced_games:,} of {evaluation.games:,} games"
        print(f"warning: {replaced}; {out} says so, and aggregate refuses it", file=sys.stderr, flush=True)
    return out


def parse_seeds(text: str) -> list[int]:
    """``0,1,2`` -> [0, 1, 2]: seeds of TRAINING_SEEDS, each once."""
    parts = text.split(",")
    if not all(WHOLE.fullmatch(part) for part in parts):  # ASCII digits: int() reads any script's, and spaces
        raise argparse.ArgumentTypeError(f"--seeds {echoed(text)} is not a comma-separated list of seeds, e.g. 0,1,2")
    seeds = [int(part) for part in parts]
    wrong = [seed for seed in seeds if seed not in TRAINING_SEEDS]
    if wrong or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(
            f"--seeds are the track's training seeds {TRAINING_SEEDS}, each once; got {echoed(text)}"
        )
    return seeds


def parser() -> argparse.ArgumentParser:
    """The command line of ``run``."""
    parser = argparse.ArgumentParser(
        prog="python -m agents.benchmark run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--track", required=True, help=f"one of {', '.join(TRACKS)}")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", help="a training config (train.py's YAML), trained once per seed")
    source.add_argument("--policy", help="a policy name (optimal, ppo:PATH, plan:PATH, ...), evaluated as it is")
    parser.add_argument("--method", required=True, help="the method's name in the results and the tables (letters, digits, ._+-)")
    parser.add_argument("--seeds", type=parse_seeds, default=list(TRAINING_SEEDS), help="training seeds (default: all five)")
    parser.add_argument("--out", default="results/benchmark", help="the results folder (default results/benchmark)")
    parser.add_argument("--runs-dir", default="runs/benchmark", help="where training runs go (default runs/benchmark)")
    parser.add_argument("--trust-pickles", action="store_true", help="passed to train.py: the config may name pickled models")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="config overrides, as train.py takes them")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the command line."""
    args = parser().parse_args(argv)
    try:
        fixed = track(args.track)
        if not re.fullmatch(METHOD_PATTERN, args.method):
            rule = "1 to 64 letters, digits and ._+- (starting with a letter or digit)"
            raise BenchmarkError(f"--method {args.method[:80]!r} is {rule}")
        if args.policy and args.overrides:
            raise BenchmarkError("config overrides go with --config, not --policy")
        if args.config:
            track_overrides(args.config, fixed, args.seeds[0], args.overrides)  # a bad config fails before any training
        for seed in args.seeds if args.config else args.seeds[:1]:
            run_seed(args, fixed, seed)
    except (BenchmarkError, ConfigError, ResultsError, ValueError) as error:
        sys.exit(f"error: {error}")
