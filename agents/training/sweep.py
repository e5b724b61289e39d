"""Hyperparameter sweeps on Ray Tune: many ``train.py`` PPO runs of one base config, ranked at the end.

    python train.py --sweep configs/sweep_quick.yaml                        # Ray starts here, with this machine's cores
    python train.py --sweep configs/sweep_quick.yaml --ray-address HOST:6379  # or RAY_ADDRESS: a running cluster

A sweep file (:class:`SweepSpec`) names a base config, the search space over any of its keys
(``grid``, ``choice``, ``uniform``, ``loguniform``), the number of samples, a seed, an ASHA
early-stopping scheduler and the resources of a trial. Each trial is an ordinary run folder,
``runs/<sweep>/<trial>/`` (config.yaml, tb/, checkpoints/, learning_curve.csv, model.zip,
eval.json), trained by the same ``train`` function as ``train.py --config``; its periodic
evaluations are reported to Tune, and ASHA stops the trials whose best ``percent_of_optimal`` so
far trails the others at the same step count. Tune's own state lives in ``runs/<sweep>/tune/``.

Resuming: run the same command again. Tune restores the sweep (finished and stopped trials stay
as they are), and a trial that was cut short continues from its run folder's last checkpoint; a
trial folder with ``eval.json`` is finished and never trained again, even if Tune's state was lost.

At the end: a ranked table of the trials (by the best ``percent_of_optimal`` of their periodic
evaluations), written as ``runs/<sweep>/trials.csv``, and ``trials.png`` (learning curves, and the
best percent against the first key of the space).
"""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.training.budget import check_budget
from agents.training.config import (
    SIGNED_DECIMAL,
    ConfigError,
    TrainConfig,
    apply_override,
    describe_invalid,
    dump_config,
    load_config,
    read_yaml,
    shorten,
)
from yacht_env.atomic_files import write_atomically
from yacht_env.extras import needs_extra
from yacht_env.safe_text import csv_text

with needs_extra("train"):
    import yaml

if TYPE_CHECKING:
    from ray.tune import ResultGrid
    from ray.tune.schedulers import TrialScheduler

METRIC = "best_percent_of_optimal"  # the max of percent_of_optimal over a trial's periodic evaluations so far
TRIAL_OVERRIDES = ["run.progress_bar=false"]  # trials run in Ray workers: no progress bars
SWEEP_PREFIX = "sweep."  # an override of the sweep file itself (sweep.num_samples=1), not of its base config


class Spec(BaseModel):
    """A part of the sweep file: unknown keys are refused."""

    model_config = ConfigDict(extra="forbid")


class Dimension(Spec):
    """One key of the search space: exactly one of the four kinds."""

    grid: list[Any] | None = None  # every value, in every trial combination
    choice: list[Any] | None = None  # one value drawn per trial
    uniform: tuple[float, float] | None = None  # [low, high]
    loguniform: tuple[float, float] | None = None  # [low, high], both > 0

    @field_validator("uniform", "loguniform", mode="before")
    @classmethod
    def finite_ends(cls, value):
        """A range's ends as the config reads a number: a finite int or float, or its ASCII text (pydantic's lax
        parsing would take ``true`` for 1, `` 1 `` and ``inf``).
        """
        if not isinstance(value, (list, tuple)):
            return value  # pydantic names the shape
        ends = []
        for end in value:
            if isinstance(end, str) and SIGNED_DECIMAL.fullmatch(end):
                end = float(end)
            if isinstance(end, bool) or not isinstance(end, (int, float)) or not math.isfinite(end):
                raise ValueError(f"a range's ends are finite numbers in digits 0-9, got {shorten(end)}")
            ends.append(end)
        return ends

    @model_validator(mode="after")
    def one_kind(self):
        """Check that the dimension has exactly one kind (grid, choice, uniform or loguniform)."""
        kinds = [kind for kind in ("grid", "choice", "uniform", "loguniform") if getattr(self, kind) is not None]
        if len(kinds) != 1:
            raise ValueError(f"give exactly one of grid, choice, uniform, loguniform; got {kinds or 'none'}")
        values = getattr(self, kinds[0])
        if kinds[0] in ("grid", "choice") and not values:
            raise ValueError(f"{kinds[0]} needs at least one value")
        if kinds[0] in ("uniform", "loguniform"):
            low, high = values
            if not low < high:
                raise ValueError(f"{kinds[0]} range [{low}, {high}] needs low < high")
            if kinds[0] == "loguniform" and low <= 0:
                raise ValueError(f"loguniform range [{low}, {high}] needs low > 0")
        return self

    @property
    def kind(self) -> str:
        """The kind of the dimension: grid, choice, uniform or loguniform."""
        return next(kind for kind in ("grid", "choice", "uniform", "loguniform") if getattr(self, kind) is not None)

    def examples(self) -> list:
        """Values to check against the config: every listed value, or both ends of a range."""
        return list(getattr(self, self.kind))

    def to_tune(self):
        """The dimension as a Ray Tune search space."""
        from ray import tune

        if self.kind == "grid":
            return tune.grid_search(list(self.grid))
        if self.kind == "choice":
            return tune.choice(list(self.choice))
        if self.kind == "uniform":
            return tune.uniform(*self.uniform)
        return tune.loguniform(*self.loguniform)


class ASHA(Spec):
    """Asynchronous successive halving on the steps trained: rungs at grace_period * reduction_factor^k."""

    type: Literal["asha", "none"] = "asha"
    grace_period: int | None = Field(None, ge=1)  # steps before a trial can be stopped (default: two evaluations)
    reduction_factor: float = Field(2.0, gt=1)  # keep the best 1/reduction_factor at each rung


class Resources(Spec):
    """The resources of one trial."""

    cpu: float = Field(1.0, gt=0)  # CPUs per trial; Tune runs as many trials at once as the CPUs allow


class SweepSpec(Spec):
    """A sweep file: its name, base config, search space and samples."""

    name: str = Field(pattern=r"^[A-Za-z0-9._-]+$")  # the folder runs/<name>/
    base: str  # the base config, relative to the sweep file
    overrides: list[str] = Field(default_factory=list)  # key=value applied to every trial
    space: dict[str, Dimension] = Field(min_length=1)
    num_samples: int = Field(1, ge=1)  # Tune's num_samples: repeats of the grid, each drawing the random keys anew
    seed: int = 0  # seeds the draws of the search space
    scheduler: ASHA = Field(default_factory=ASHA)
    resources: Resources = Field(default_factory=Resources)
    max_concurrent_trials: int | None = Field(None, ge=1)

    def trial_count(self) -> int:
        """The number of trials: samples times the product of the grid sizes."""
        grids = [len(d.examples()) for d in self.space.values() if d.kind == "grid"]
        return self.num_samples * math.prod(grids)


@dataclass
class Sweep:
    """A checked sweep file: the spec, its base config path and the overrides every trial gets."""

    spec: SweepSpec
    base: Path
    overrides: list[str]
    base_config: TrainConfig

    def trial_config(self, params: dict[str, Any], name: str) -> TrainConfig:
        """The base config (carried in memory: a worker may not see the file) with the trial's values."""
        data = self.base_config.model_dump()
        for key, value in params.items():
            apply_override(data, f"{key}={json.dumps(value)}")
        data["name"] = name
        return TrainConfig.model_validate(data)


def load_sweep(path: str | Path, extra_overrides: Sequence[str] = (), allow_large: bool = False) -> Sweep:
    """Read and check a sweep file; ``ConfigError`` (one line) naming the bad key, value or path.

    Unless ``allow_large``, the base config and each listed value are held to the machine's budget too
    (:func:`agents.training.budget.check_budget`).
    """
    path = Path(path)
    data = read_yaml(path, "sweep file")
    if not isinstance(data, dict):
        raise ConfigError(f"sweep file {str(path)!r} must hold a mapping (name, base, space, ...), got {type(data).__name__}")
    for override in (text for text in extra_overrides if text.startswith(SWEEP_PREFIX)):  # sweep.num_samples=1
        apply_override(data, override.removeprefix(SWEEP_PREFIX))
    extra_overrides = [text for text in extra_overrides if not text.startswith(SWEEP_PREFIX)]
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as error:
        raise ConfigError(describe_invalid(error, repr(str(path))).replace("invalid config", "invalid sweep file")) from None
    base = (path.parent / spec.base).resolve()
    if not base.is_file():
        raise ConfigError(f"sweep file {str(path)!r}: base config {spec.base!r} does not exist (looked for {str(base)!r})")
    overrides = [*spec.overrides, *extra_overrides, *TRIAL_OVERRIDES]
    base_config = load_config(base, overrides)
    budget = (lambda config: None) if allow_large else check_budget
    check_sweepable(base_config, f"sweep file {str(path)!r}: ")
    budget(base_config)
    if base_config.env.num_players != 1:
        raise ConfigError(
            f"sweep file {str(path)!r}: trials are ranked on percent_of_optimal, "
            "so the base config must be solitaire (env.num_players 1)"
        )
    if base_config.ppo.init_from:
        raise ConfigError(
            f"sweep file {str(path)!r}: ppo.init_from is not supported in sweeps (trials may run on other machines)"
        )
    for key, dimension in spec.space.items():  # every listed value (or both ends of a range) must make a valid config
        for value in dimension.examples():
            try:
                trial = load_config(base, [*overrides, f"{key}={json.dumps(value)}"])
                check_sweepable(trial)
                budget(trial)
            except ConfigError as error:
                raise ConfigError(f"sweep file {str(path)!r}: space key {key!r} value {shorten(value)}: {error}") from None
    check_grace_period(spec, base_config, str(path))
    sweep = Sweep(spec, base, overrides, base_config)
    # A trial's config, named as its run folder will be, must load too (checked here, not in a worker).
    example = {key: dimension.examples()[-1] for key, dimension in spec.space.items()}
    try:
        sweep.trial_config(example, trial_name(spec.trial_count() - 1, example))
    except ValidationError as error:
        raise ConfigError(f"sweep file {str(path)!r}: a trial's config is invalid: {describe_invalid(error, 'trial')}") from None
    return sweep


def check_sweepable(config: TrainConfig, prefix: str = "") -> None:
    """``ConfigError`` (its message after ``prefix``) unless ``config`` trains PPO.

    A trial is ``train`` (PPO): its periodic evaluations are what Tune ranks, and ASHA counts
    ``ppo.total_timesteps``. The other algorithms have their own loops, which report nothing to Tune
    and count self-play games or transitions instead: a trial of theirs could be neither run nor ranked.
    """
    if config.algorithm != "ppo":
        raise ConfigError(
            f"{prefix}algorithm {config.algorithm!r} cannot be swept: a sweep trains "
            "algorithm 'ppo' only (train it with train.py --config)"
        )


def grace_period(spec: SweepSpec, base_config: TrainConfig) -> int:
    """ASHA's grace period in steps: the sweep file's, else two periodic evaluations."""
    return spec.scheduler.grace_period or 2 * base_config.run.eval_every


def check_grace_period(spec: SweepSpec, base_config: TrainConfig, source: str) -> None:
    """``ConfigError`` if ASHA could never stop a trial: its grace period is past the trials' last step."""
    if spec.scheduler.type == "asha" and grace_period(spec, base_config) > base_config.ppo.total_timesteps:
        raise ConfigError(
            f"sweep file {source!r}: scheduler.grace_period {grace_period(spec, base_config):,} is past "
            f"ppo.total_timesteps {base_config.ppo.total_timesteps:,} of the base config (with overrides); lower "
            "sweep.scheduler.grace_period, raise ppo.total_timesteps, or set sweep.scheduler.type=none"
        )


# -- trials ---------------------------------------------------------------------------------------


def trial_name(index: int, params: dict[str, Any]) -> str:
    """``t03_lookahead_temperature=0.3_learning_rate=0.00042``: the trial's number and values."""

    def show(value):
        return f"{value:.3g}" if isinstance(value, float) else str(value)

    parts = [f"{key.split('.')[-1]}={show(value)}" for key, value in params.items()]
    return re.sub(r"[^A-Za-z0-9._=+-]", "-", "_".join([f"t{index:02d}", *parts]))


def _tune_trial_name(trial) -> str:
    return trial_name(int(trial.trial_id.split("_")[-1]), trial.config)


def curve_rows(run_dir: Path) -> list[dict[str, float]]:
    """The rows of the run's learning curve (``learning_curve.csv``), empty if there is none."""
    curve = run_dir / "learning_curve.csv"
    if not curve.exists():
        return []
    with curve.open(newline="") as handle:
        return [{key: float(value) for key, value in row.items()} for row in csv.DictReader(handle)]


def run_trial(params: dict[str, Any], *, sweep: Sweep, sweep_dir: str, train: Callable) -> None:
    """One Tune trial: ``train`` in runs/<sweep>/<trial>/, reporting each periodic evaluation to Tune."""
    from ray import tune

    name = tune.get_context().get_trial_name()
    run_dir = Path(sweep_dir) / name
    config = sweep.trial_config(params, name)
    best = -math.inf
    held_back = []  # the last periodic evaluation, reported once the model and eval.json are saved

    def report(steps: int, figures: dict[str, float]) -> None:
        nonlocal best
        best = max(best, figures["percent_of_optimal"])
        result = {"steps": steps, **figures, METRIC: best}
        if steps + config.run.eval_every > config.ppo.total_timesteps:
            held_back.append(result)  # ASHA stops a trial at max_t: not before train() has finished the run folder
        else:
            tune.report(result)

    if (run_dir / "eval.json").exists():  # finished before a restart that lost Tune's state
        for row in curve_rows(run_dir):
            report(int(row["steps"]), {key: value for key, value in row.items() if key not in ("steps", "wall_seconds")})
        for result in held_back:
            tune.report(result)
        return
    checkpoints = sorted((run_dir / "checkpoints").glob("step_*.zip"), key=lambda p: int(p.stem.split("_")[-1]))
    if not checkpoints and run_dir.exists():
        shutil.rmtree(run_dir)  # cut short before its first checkpoint: nothing to continue from, start clean
    if checkpoints:  # the best so far of the evaluations up to the checkpoint being resumed
        done = int(checkpoints[-1].stem.split("_")[-1])
        best = max([row["percent_of_optimal"] for row in curve_rows(run_dir) if row["steps"] <= done], default=-math.inf)
    train(config, run_dir, resume=True, on_evaluation=report)
    for result in held_back:
        tune.report(result)


# -- the sweep ------------------------------------------------------------------------------------


def trial_scheduler(spec: SweepSpec, base_config: TrainConfig) -> TrialScheduler:
    """Tune's scheduler of the sweep's trials: ASHA, stopping the weaker trials at its rungs, or every trial to its end."""
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    if spec.scheduler.type == "asha":
        return ASHAScheduler(
            time_attr="steps",
            max_t=base_config.ppo.total_timesteps,
            grace_period=grace_period(spec, base_config),
            reduction_factor=spec.scheduler.reduction_factor,
        )
    return FIFOScheduler()


def run_sweep(sweep: Sweep, train: Callable, sweep_dir: Path) -> ResultGrid:
    """Run (or resume) the sweep on the connected Ray; return Tune's results."""
    from ray import tune
    from ray.tune.search.basic_variant import BasicVariantGenerator

    # Ray Tune reads a relative path as a URI without a scheme, and a trial runs in a worker with another cwd
    sweep_dir = sweep_dir.resolve()
    spec = sweep.spec
    trainable = tune.with_resources(
        tune.with_parameters(run_trial, sweep=sweep, sweep_dir=str(sweep_dir), train=train), {"cpu": spec.resources.cpu}
    )
    state_dir = sweep_dir / "tune"
    if tune.Tuner.can_restore(str(state_dir)):
        print(f"resuming sweep {spec.name} from {state_dir}")
        tuner = tune.Tuner.restore(str(state_dir), trainable, resume_unfinished=True, resume_errored=True)
    else:
        scheduler = trial_scheduler(spec, sweep.base_config)
        tuner = tune.Tuner(
            trainable,
            param_space={key: dimension.to_tune() for key, dimension in spec.space.items()},
            tune_config=tune.TuneConfig(
                metric=METRIC,
                mode="max",
                num_samples=spec.num_samples,
                scheduler=scheduler,
                # the limit goes to the generator: Tune does not apply max_concurrent_trials to a given one
                search_alg=BasicVariantGenerator(random_state=spec.seed, max_concurrent=spec.max_concurrent_trials or 0),
                trial_name_creator=_tune_trial_name,
                trial_dirname_creator=_tune_trial_name,
            ),
            run_config=tune.RunConfig(name="tune", storage_path=str(sweep_dir), verbose=1),
        )
    return tuner.fit()


# -- the report -----------------------------------------------------------------------------------


@dataclass
class TrialRow:
    """One trial's line of the sweep's ranking."""

    rank: int
    trial: str
    params: dict[str, Any]
    status: str  # finished, stopped early (ASHA), error, or not run
    best_percent_of_optimal: float | None  # max over the periodic evaluations
    best_at_steps: int | None
    last_percent_of_optimal: float | None
    steps: int  # steps of the last periodic evaluation
    train_seconds: float | None  # wall time of training up to the last periodic evaluation
    final_percent_of_optimal: float | None  # the final evaluation (eval.json), finished trials only
    final_games: int | None


def collect_trials(sweep_dir: Path, keys: list[str], errors: dict[str, str] | None = None) -> list[TrialRow]:
    """The trials' figures, read from their run folders, ranked by their best percent of the optimum."""
    rows = []
    for config_file in sorted(sweep_dir.glob("*/config.yaml")):
        run_dir = config_file.parent
        if run_dir.name == "tune":
            continue
        config = read_yaml(config_file)
        params = {}
        for key in keys:
            node = config
            for part in key.split("."):
                node = node[part]
            params[key] = node
        curve = curve_rows(run_dir)
        best = max(curve, key=lambda row: row["percent_of_optimal"]) if curve else None
        final = final_games = None
        if (run_dir / "eval.json").exists():
            report = json.loads((run_dir / "eval.json").read_text())
            final, final_games = report["policies"][0]["percent_of_optimal"], report["games"]
        status = "finished" if final is not None else "stopped early" if curve else "not run"
        if errors and run_dir.name in errors:
            status = "error"
        rows.append(
            TrialRow(
                rank=0,
                trial=run_dir.name,
                params=params,
                status=status,
                best_percent_of_optimal=best["percent_of_optimal"] if best else None,
                best_at_steps=int(best["steps"]) if best else None,
                last_percent_of_optimal=curve[-1]["percent_of_optimal"] if curve else None,
                steps=int(curve[-1]["steps"]) if curve else 0,
                train_seconds=curve[-1]["wall_seconds"] if curve else None,
                final_percent_of_optimal=final,
                final_games=final_games,
            )
        )
    rows.sort(key=lambda row: (row.best_percent_of_optimal is None, -(row.best_percent_of_optimal or 0.0), row.trial))
    for rank, row in enumerate(rows, 1):
        row.rank = rank
    return rows


def _cell(value, digits=2) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) >= 0.1 or value == 0 else f"{value:.3g}"
    if isinstance(value, bool):  # a swept flag reads True or False, as in trials.csv (int's format would say 1 or 0)
        return str(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def print_trials(rows: list[TrialRow], name: str, keys: list[str]) -> None:
    """Print the ranked trials of sweep ``name`` as a table, with the swept ``keys``."""
    from rich.table import Table

    from yacht_env.render import report_console

    table = Table(title=f"sweep {name}: {len(rows)} trials ranked by the best % of the optimum of their periodic evaluations")
    columns = [
        "rank",
        *[key.split(".")[-1] for key in keys],
        "best %",
        "at steps",
        "last %",
        "steps",
        "train s",
        "final %",
        "status",
    ]
    for column in columns:
        table.add_column(column, justify="right" if column not in ("status",) else "left")
    for row in rows:
        table.add_row(
            str(row.rank),
            *[_cell(row.params[key], 4) for key in keys],
            _cell(row.best_percent_of_optimal),
            _cell(row.best_at_steps),
            _cell(row.last_percent_of_optimal),
            _cell(row.steps),
            _cell(row.train_seconds, 0),
            _cell(row.final_percent_of_optimal),
            row.status,
        )
    report_console().print(table)


def save_trials_csv(path: Path, rows: list[TrialRow], keys: list[str]) -> None:
    """Write the ranked trials to ``path`` as CSV, with the swept ``keys``."""
    fields = [field for field in asdict(rows[0]) if field != "params"] if rows else []
    lines: list[list[Any]] = []
    for row in rows:
        record = asdict(row)
        lines.append([row.rank, row.trial, *[row.params[key] for key in keys], *[record[f] for f in fields[2:]]])
    text = csv_text(["rank", "trial", *keys, *fields[2:]], lines)  # a swept choice is text from a sweep file
    write_atomically(path, lambda handle: handle.write(text.encode()))


def save_trials_plot(path: Path, rows: list[TrialRow], sweep_dir: Path, sweep: Sweep) -> None:
    """Plot the trials' learning curves and save the figure to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(sweep.spec.space)
    figure, (curves, scatter) = plt.subplots(1, 2, figsize=(13, 5))
    colors = plt.cm.viridis([i / max(len(rows) - 1, 1) for i in range(len(rows))])
    for row, color in zip(rows, colors):
        curve = curve_rows(sweep_dir / row.trial)
        if curve:
            label = f"#{row.rank} " + ", ".join(f"{key.split('.')[-1]}={_cell(row.params[key], 4)}" for key in keys)
            steps, percents = [r["steps"] for r in curve], [r["percent_of_optimal"] for r in curve]
            curves.plot(steps, percents, marker="o", color=color, label=label)
    curves.set_xlabel("steps")
    curves.set_ylabel("% of the optimum (periodic evaluation)")
    curves.set_title(f"sweep {sweep.spec.name}: learning curves (darker = better rank)")
    curves.legend(fontsize=7)
    first = keys[0]
    ranked = [row for row in rows if row.best_percent_of_optimal is not None]
    shade = None
    if len(keys) > 1 and all(isinstance(row.params[keys[1]], (int, float)) for row in ranked):
        shade = [row.params[keys[1]] for row in ranked]
    colouring = {}
    if shade:
        log_shade = sweep.spec.space[keys[1]].kind == "loguniform"
        colouring = {"c": shade, "cmap": "plasma", "norm": matplotlib.colors.LogNorm() if log_shade else None}
    xs, ys = [row.params[first] for row in ranked], [row.best_percent_of_optimal for row in ranked]
    points = scatter.scatter(xs, ys, s=60, edgecolors="black", **colouring)
    if shade:
        figure.colorbar(points, ax=scatter, label=keys[1])
    if sweep.spec.space[first].kind == "loguniform" or (
        sweep.spec.space[first].kind in ("grid", "choice")
        and all(isinstance(v, (int, float)) and v > 0 for v in sweep.spec.space[first].examples())
    ):
        scatter.set_xscale("log")
    scatter.set_xlabel(first)
    scatter.set_ylabel("best % of the optimum")
    scatter.set_title("best periodic evaluation of each trial")
    figure.tight_layout()
    write_atomically(path, lambda handle: figure.savefig(handle, format="png", dpi=110))
    plt.close(figure)


# -- the command line -----------------------------------------------------------------------------


def check_same_sweep(sweep_dir: Path, sweep: Sweep) -> None:
    """A sweep folder belongs to one sweep: resuming with a changed file or base config is refused."""
    record = {"sweep": sweep.spec.model_dump(), "base_config": yaml.safe_load(dump_config(sweep.base_config))}
    text = yaml.safe_dump(record, sort_keys=False)
    saved = sweep_dir / "sweep.yaml"
    if saved.exists():
        if yaml.safe_load(saved.read_text()) != yaml.safe_load(text):
            raise ConfigError(
                f"{str(sweep_dir)!r} holds sweep {sweep.spec.name!r} run with another sweep file or base config "
                f"(see {saved}); give this one another name, or restore the file to resume"
            )
        return
    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(saved, lambda handle: handle.write(text.encode()))


def failure_line(error: BaseException) -> str:
    """Why a trial failed, in one line: the first line of its exception's message, else the exception's type.

    Tune hands back a trial's exception wrapped in a ``RayTaskError``, whose text opens with the Ray worker's
    process title and pid (``ray::ImplicitFunc.train() (pid=..., ip=...)``): the line is the wrapped exception's.
    """
    from ray.exceptions import RayTaskError

    if isinstance(error, RayTaskError) and error.cause is not None:
        error = error.cause
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def main_sweep(
    path: str,
    train: Callable,
    runs_dir: str,
    overrides: list[str],
    ray_address: str | None,
    ray_cpus: int | None,
    allow_large: bool = False,
) -> None:
    """``python train.py --sweep FILE``: check, run or resume on Ray, then print and write the ranking."""
    from agents.evaluation.distributed import RayMissingError, connect, import_ray

    try:
        sweep = load_sweep(path, overrides, allow_large)
        import_ray()
        from ray import tune  # noqa: F401  (the tune extra: ray[tune])
    except ConfigError as error:
        sys.exit(f"error: {error}")
    except RayMissingError as error:
        sys.exit(f"error: {error}")
    except ImportError:
        sys.exit('error: sweeps need Ray Tune, which is not installed: pip install -e ".[distributed]"')
    if ray_cpus is not None and ray_cpus < 1:
        sys.exit(f"error: --ray-cpus must be at least 1, got {ray_cpus}")
    sweep_dir = Path(runs_dir) / sweep.spec.name
    try:
        check_same_sweep(sweep_dir, sweep)
        connect(ray_address, ray_cpus)
    except (ConfigError, ValueError) as error:
        sys.exit(f"error: {error}")
    print(f"sweep {sweep.spec.name}: {sweep.spec.trial_count()} trials of {sweep.base.name} in {sweep_dir}/")
    results = run_sweep(sweep, train, sweep_dir)
    errors = {
        Path(result.path).name: failure_line(result.error)
        for result in results  # type: ignore[attr-defined]  # ResultGrid iterates through __getitem__, which its hints omit
        if result.error
    }
    keys = list(sweep.spec.space)
    rows = collect_trials(sweep_dir, keys, errors)
    print_trials(rows, sweep.spec.name, keys)
    save_trials_csv(sweep_dir / "trials.csv", rows, keys)
    save_trials_plot(sweep_dir / "trials.png", rows, sweep_dir, sweep)
    for trial, message in errors.items():
        print(f"trial {trial} failed: {message} (see {sweep_dir / 'tune' / trial})")
    print(f"ranking: {sweep_dir / 'trials.csv'}, plot: {sweep_dir / 'trials.png'}")
