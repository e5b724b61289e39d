"""``python -m agents.benchmark aggregate``: results files -> rliable's aggregates with stratified bootstrap intervals.

    python -m agents.benchmark aggregate results/benchmark --out results/aggregate

Each run's score is its *normalized score*, ``1 - normalized regret`` (the share of the optimum it reaches; 1 is
optimal play). For every track, and for every budget's suites (its solitaire tracks, and its tracks at a table: each
a task of rliable's score matrices, runs x tasks, for the methods that ran every one of them), it computes with
``rliable`` (Agarwal et al., NeurIPS 2021): the interquartile mean (IQM), the mean, the median and the optimality gap
(the mean shortfall from the optimum, here the mean normalized regret) with 95% stratified bootstrap intervals
(rliable's mean and median are over tasks, of each task's mean over runs), the probability of improvement of each
method over each other, and the performance profiles. It writes ``aggregates.csv`` and ``aggregates.md`` (the
tables), ``aggregates.json`` and the plots ``<scope>-intervals.png``, ``<scope>-profile.png`` and
``<scope>-improvement.png`` to ``--out``, and prints the tables.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import itertools
import json
import sys
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from agents.benchmark.results import ResultsError, RunResult, load_results
from agents.benchmark.tracks import TRACKS
from yacht_env.atomic_files import write_atomically
from yacht_env.extras import MissingExtraError, needs_extra
from yacht_env.option_values import whole_number

METRICS = ("IQM", "mean", "median", "optimality gap")


@dataclass
class Row:
    """One method in one scope: its runs and tasks, each aggregate with its interval, and the mean training figures."""

    scope: str
    method: str
    runs: int
    tasks: str
    iqm: tuple[float, float, float]  # (estimate, low, high), on the normalized score
    mean: tuple[float, float, float]
    median: tuple[float, float, float]
    optimality_gap: tuple[float, float, float]
    regret_per_game: float | None  # mean over runs, points (solitaire tracks alone)
    wall_seconds: float | None  # mean training wall time per run
    cpu_seconds: float | None


MAX_SEED = 2**32 - 1  # numpy's global random state takes a 32-bit seed


def normalized_score(run: RunResult) -> float:
    """The run's share of the optimum: 1 - its normalized regret."""
    return 1.0 - run.evaluation.normalized_regret


def score_matrices(runs: list[RunResult], tracks: list[str]) -> dict[str, np.ndarray]:
    """Each method that ran every track: its (runs x tracks) normalized scores, on the seeds all its tracks share."""
    by_method: dict[str, dict[str, dict[int, float]]] = {}
    for run in runs:
        by_method.setdefault(run.method, {}).setdefault(run.track, {})[run.seed] = normalized_score(run)
    matrices = {}
    for method, by_track in sorted(by_method.items()):
        if not all(name in by_track for name in tracks):
            continue
        seeds = sorted(set.intersection(*(set(by_track[name]) for name in tracks)))
        if seeds:
            matrices[method] = np.array([[by_track[name][seed] for name in tracks] for seed in seeds])
    return matrices


def aggregates(scores: np.ndarray) -> np.ndarray:
    """The four aggregates of a score matrix, in METRICS' order."""
    from rliable import metrics

    return np.array(
        [
            metrics.aggregate_iqm(scores),
            metrics.aggregate_mean(scores),
            metrics.aggregate_median(scores),
            metrics.aggregate_optimality_gap(scores),
        ]
    )


def scopes(runs: list[RunResult]) -> dict[str, list[str]]:
    """Each scope's tracks: every track run, then each budget's suites: its solitaire tracks (``suite-1m``) and its
    tracks at a table (``suite-1m-duel``), where two or more were run. A suite's rows are the methods that ran every
    one of its tracks (:func:`score_matrices`): a method run on part of it (a reference policy on one track, a
    solitaire method beside a table's) is left out of that suite, not the suite left out.
    """
    found: dict[str, list[str]] = {}
    ran = sorted({run.track for run in runs}, key=list(TRACKS).index)
    for name in ran:
        found[name] = [name]
    for budget in dict.fromkeys(TRACKS[name].budget_name for name in ran):
        for alone, suffix in ((True, ""), (False, "-duel")):
            tracks = [name for name in ran if TRACKS[name].budget_name == budget and (TRACKS[name].seats == 1) == alone]
            if len(tracks) > 1:
                found[f"suite-{budget}{suffix}"] = tracks
    return found


def training_means(runs: list[RunResult], method: str, tracks: list[str]) -> tuple[float | None, ...]:
    """The method's mean regret per game, training wall and CPU seconds over its runs on ``tracks`` (None if none)."""
    mine = [run for run in runs if run.method == method and run.track in tracks]

    def mean(values):
        values = [value for value in values if value is not None]
        return float(np.mean(values)) if values else None

    return (
        mean(run.evaluation.regret_per_game for run in mine),
        mean(run.training.wall_seconds for run in mine),
        mean(run.training.cpu_seconds for run in mine),
    )


@contextlib.contextmanager
def seeded_resamples(seed: int):
    """Seed numpy's global random state with ``seed`` inside, and put the caller's back after; yields a RandomState
    of ``seed`` for rliable's ``random_state``.

    rliable's stratified bootstrap draws its resamples from the global state (``np.random.choice`` in
    ``StratifiedBootstrap.update_indices``) whatever ``random_state`` it is given, and so does its performance profile:
    left alone, every interval would be left to chance, and run to run the same files would give other intervals.
    """
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        yield np.random.RandomState(seed)
    finally:
        np.random.set_state(saved)


def interval_estimates(scores: dict, function, reps: int, seed: int) -> tuple[dict, dict]:
    """The point estimates and bootstrap intervals (rliable's) of ``function`` for each entry of ``scores``, each from the
    resamples of ``seed``: an entry's interval depends on its own scores and the seed, not on the entries beside it.
    """
    from rliable import library

    points, intervals = {}, {}
    for key, value in scores.items():
        with seeded_resamples(seed) as state:
            point, interval = library.get_interval_estimates({key: value}, function, reps=reps, random_state=state)
        points[key], intervals[key] = point[key], interval[key]
    return points, intervals


def aggregate_scope(scope: str, tracks: list[str], runs: list[RunResult], reps: int, seed: int):
    """The rows of one scope, its probabilities of improvement, and what its plots need."""
    matrices = score_matrices(runs, tracks)
    if not matrices:
        return [], {}, None
    points, intervals = interval_estimates(matrices, aggregates, reps, seed)
    rows = []
    for method, matrix in matrices.items():
        iqm, mean, median, gap = [
            (float(points[method][i]), float(intervals[method][0][i]), float(intervals[method][1][i])) for i in range(4)
        ]
        rows.append(
            Row(scope, method, matrix.shape[0], ",".join(tracks), iqm, mean, median, gap, *training_means(runs, method, tracks))
        )
    pairs = {f"{x},{y}": (matrices[x], matrices[y]) for x, y in itertools.combinations(matrices, 2)}
    improvement: dict[str, tuple[float, float, float]] = {}
    if pairs:
        from rliable import metrics

        estimates, bounds = interval_estimates(pairs, metrics.probability_of_improvement, reps, seed)
        for key in pairs:
            low, high = np.ravel(bounds[key])
            improvement[key] = (float(estimates[key]), float(low), float(high))
    return rows, improvement, (matrices, points, intervals)


def cell(triple: tuple[float, float, float]) -> str:
    """An estimate with its interval, as the tables print it."""
    return f"{triple[0]:.4f} [{triple[1]:.4f}, {triple[2]:.4f}]"


def markdown(rows: list[Row], improvement: dict[str, dict[str, tuple[float, float, float]]]) -> str:
    """The rows (and the probabilities of improvement) as Markdown tables."""
    lines = [
        "| scope | method | runs | IQM | mean | median | optimality gap | regret/game (points) | train wall s | train CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        regret = "" if row.regret_per_game is None else f"{row.regret_per_game:.3f}"
        wall = "" if row.wall_seconds is None else f"{row.wall_seconds:,.0f}"
        cpu = "" if row.cpu_seconds is None else f"{row.cpu_seconds:,.0f}"
        cells = [row.scope, row.method, str(row.runs), cell(row.iqm), cell(row.mean), cell(row.median), cell(row.optimality_gap)]
        lines.append("| " + " | ".join([*cells, regret, wall, cpu]) + " |")
    if any(improvement.values()):
        lines += ["", "| scope | P(X > Y) | estimate [95% CI] |", "|---|---|---|"]
        for scope, pairs in improvement.items():
            lines += [f"| {scope} | {pair.replace(',', ' > ')} | {cell(value)} |" for pair, value in pairs.items()]
    return "\n".join(lines) + "\n"


def csv_text(rows: list[Row]) -> str:
    """The rows as CSV, one column per estimate and bound."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    bounds = [f"{name}{end}" for name in ("iqm", "mean", "median", "optimality_gap") for end in ("", "_low", "_high")]
    writer.writerow(["scope", "method", "runs", "tracks", *bounds, "regret_per_game", "wall_seconds", "cpu_seconds"])
    for row in rows:
        figures = [value for triple in (row.iqm, row.mean, row.median, row.optimality_gap) for value in triple]
        training = [row.regret_per_game, row.wall_seconds, row.cpu_seconds]
        writer.writerow([row.scope, row.method, row.runs, row.tasks, *figures, *training])
    return buffer.getvalue()


def save_png(path: Path, figure) -> None:
    """The figure as a PNG, written atomically, then closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
    plt.close(figure)
    write_atomically(path, lambda handle: handle.write(buffer.getvalue()))


def plot_scope(
    out: Path, scope: str, plotted, improvement: dict[str, tuple[float, float, float]], reps: int, seed: int
) -> list[Path]:
    """The scope's plots: the aggregates with their intervals, the performance profiles, the probabilities of improvement."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from rliable import library, plot_utils

    matrices, points, intervals = plotted
    palette = [plt.get_cmap("tab10")(i) for i in range(10)]
    colors = {method: palette[i % len(palette)] for i, method in enumerate(matrices)}
    written = []
    # rliable draws one row of height row_height per method; the label goes below the tick labels (about 0.45 inch)
    height = 0.45 * len(matrices)
    figure, _ = plot_utils.plot_interval_estimates(
        points,
        intervals,
        metric_names=list(METRICS),
        colors=colors,
        row_height=0.45,
        xlabel_y_coordinate=-0.5 / height,
        xlabel="normalized score (share of the optimum)",
    )
    save_png(out / f"{scope}-intervals.png", figure)
    written.append(out / f"{scope}-intervals.png")
    low = min(float(matrix.min()) for matrix in matrices.values())
    taus = np.linspace(max(0.0, low - 0.02), 1.0, 101)
    with seeded_resamples(seed):
        profiles, profile_cis = library.create_performance_profile(matrices, taus, reps=reps)
    figure, axis = plt.subplots(figsize=(7, 4.5))
    plot_utils.plot_performance_profiles(
        profiles,
        taus,
        performance_profile_cis=profile_cis,
        colors=colors,
        ax=axis,
        xlabel=r"normalized score $\tau$",
        ylabel=r"fraction of runs with score $> \tau$",
    )
    axis.set_title(f"{scope}: performance profiles")
    axis.legend(handles=[Line2D([0], [0], color=colors[method], label=method) for method in profiles], loc="lower left")
    save_png(out / f"{scope}-profile.png", figure)
    written.append(out / f"{scope}-profile.png")
    if improvement:
        estimates = {key: value[0] for key, value in improvement.items()}
        bounds = {key: np.array([value[1], value[2]]) for key, value in improvement.items()}
        figure, axis = plt.subplots(figsize=(5, 0.5 + 0.45 * len(improvement)))
        plot_utils.plot_probability_of_improvement(estimates, bounds, ax=axis)
        save_png(out / f"{scope}-improvement.png", figure)
        written.append(out / f"{scope}-improvement.png")
    return written


def aggregate(paths: list[str], out: Path, reps: int = 2_000, seed: int = 0, plots: bool = True) -> tuple[list[Row], dict]:
    """Read the results files at ``paths``, aggregate every scope, write the tables (and plots) to ``out``."""
    with needs_extra("benchmark"):
        import rliable  # noqa: F401  (the aggregates below import its modules)

        if plots:
            import matplotlib  # noqa: F401
    runs = load_results(paths)
    rows: list[Row] = []
    improvement: dict[str, dict[str, tuple[float, float, float]]] = {}
    out.mkdir(parents=True, exist_ok=True)
    for scope, tracks in scopes(runs).items():
        with warnings.catch_warnings():  # arch asks for a Generator where rliable passes its RandomState: nothing to act on
            warnings.filterwarnings("ignore", message="random_state is deprecated", category=FutureWarning)
            scope_rows, scope_improvement, plotted = aggregate_scope(scope, tracks, runs, reps, seed)
        rows += scope_rows
        improvement[scope] = scope_improvement
        if plots and plotted is not None:
            plot_scope(out, scope, plotted, scope_improvement, reps, seed)
    text = markdown(rows, improvement)
    write_atomically(out / "aggregates.md", lambda handle: handle.write(text.encode()))
    write_atomically(out / "aggregates.csv", lambda handle: handle.write(csv_text(rows).encode()))
    document = {"runs": len(runs), "reps": reps, "bootstrap_seed": seed, "improvement": improvement}
    document["rows"] = [asdict(row) for row in rows]
    write_atomically(out / "aggregates.json", lambda handle: handle.write(json.dumps(document, indent=2).encode()))
    return rows, improvement


def parser() -> argparse.ArgumentParser:
    """The command line of ``aggregate``."""
    parser = argparse.ArgumentParser(
        prog="python -m agents.benchmark aggregate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("results", nargs="+", help="results files, or folders searched for *.json")
    parser.add_argument("--out", default="results/aggregate", help="where the tables and plots go (default results/aggregate)")
    parser.add_argument("--reps", type=whole_number(), default=2_000, help="bootstrap replications (default 2,000)")
    parser.add_argument("--bootstrap-seed", type=whole_number(most=MAX_SEED), default=0, help="the bootstrap's seed (default 0)")
    parser.add_argument("--no-plots", action="store_true", help="the tables alone")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the command line."""
    args = parser().parse_args(argv)
    if not 100 <= args.reps <= 1_000_000:
        sys.exit(f"error: --reps is from 100 to 1,000,000, got {args.reps}")
    try:
        rows, improvement = aggregate(args.results, Path(args.out), args.reps, args.bootstrap_seed, not args.no_plots)
    except (ResultsError, MissingExtraError) as error:
        sys.exit(f"error: {error}")
    print(markdown(rows, improvement), end="")
    print(f"written to {args.out}/: aggregates.md, aggregates.csv, aggregates.json" + ("" if args.no_plots else " and the plots"))
