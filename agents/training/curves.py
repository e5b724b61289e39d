"""Plot the learning curves of finished or running runs side by side.

    python -m agents.training.curves runs/yacht runs/yahtzee runs/yatzy --out docs/learning-curves.png

Each run folder's ``learning_curve.csv`` (written by train.py at every periodic evaluation) gives
two panels against wall time: the mean score as a percentage of the rule set's optimum, and the
regret per decision (the exact expected points each decision gives away, on a log scale). Dashed
lines mark the levels a run is judged at (98% and 99% by default).

    python -m agents.training.curves --families models/curves --out docs/agent-families.png

draws the two agent families side by side instead: one panel per rule set, the % of the optimum
against wall time of every ``<family>_<rules>.csv`` curve in the folder (``ppo_yacht.csv``,
``plan_yacht.csv``, ...).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from agents.training.sweep import curve_rows
from yacht_env.atomic_files import OutputError, check_outputs, write_atomically
from yacht_env.figures import pyplot, save_png
from yacht_env.option_values import decimal_number

COLUMNS = ("wall_seconds", "percent_of_optimal", "regret_per_decision")


def rewind_learning_curve(run_dir: Path, steps: int) -> float:
    """Drop curve rows past the checkpoint being resumed; return the wall time spent up to it."""
    curve = run_dir / "learning_curve.csv"
    if not curve.exists():
        return 0.0
    with curve.open(newline="") as handle:
        rows = list(csv.reader(handle))
    kept = [rows[0]] + [row for row in rows[1:] if int(row[0]) <= steps]
    text = "".join(",".join(row) + "\n" for row in kept)
    write_atomically(curve, lambda handle: handle.write(text.encode()))
    return float(kept[-1][1]) if len(kept) > 1 else 0.0


CURVE_LEVELS = (98.0, 99.0)  # the levels a solitaire run is judged at
FAMILY_LEVELS = (99.0,)
DPI = 110  # 11 x 4.2 inches: 1210 x 462 pixels, a page's width in the docs


def plot_curves(run_dirs: list[Path], out: Path, levels: tuple[float, ...] = CURVE_LEVELS) -> Path:
    """Draw every run's percent of the optimum and regret per decision against minutes of wall time, as a PNG."""
    curves = {}
    for run_dir in run_dirs:
        try:
            rows = curve_rows(run_dir)
        except (ValueError, TypeError, UnicodeDecodeError, csv.Error) as error:  # a hand-edited or foreign file
            raise ValueError(f"{run_dir / 'learning_curve.csv'} is not a learning curve: {error}") from None
        if not rows or not set(COLUMNS) <= set(rows[0]):
            raise ValueError(f"{run_dir} has no solitaire learning curve (learning_curve.csv with percent_of_optimal)")
        curves[run_dir.name] = rows
    save_png(out, curves_figure(curves, levels), DPI)
    return out


def curves_figure(curves: dict[str, list[dict[str, float]]], levels: tuple[float, ...]):
    """The two panels of :func:`plot_curves` for ``{run name: its rows}``, as a matplotlib figure."""
    import matplotlib.ticker

    plt = pyplot()
    figure, (percent, regret) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, rows in curves.items():
        minutes = [row["wall_seconds"] / 60 for row in rows]
        percent.plot(minutes, [row["percent_of_optimal"] for row in rows], marker=".", label=name)
        regret.plot(minutes, [row["regret_per_decision"] for row in rows], marker=".", label=name)
    for level in levels:
        percent.axhline(level, color="grey", linestyle="--", linewidth=0.8)
    percent.set(xlabel="wall time (minutes)", ylabel="mean score, % of the optimum", title="score")
    regret.set(xlabel="wall time (minutes)", ylabel="points lost per decision", title="regret per decision", yscale="log")
    for axis in (regret.yaxis.set_major_formatter, regret.yaxis.set_minor_formatter):
        axis(matplotlib.ticker.FormatStrFormatter("%.3g"))  # 0.06, not 6 x 10^-2; 0.145 and 0.15 told apart
    for axes in (percent, regret):
        axes.grid(alpha=0.3)
        axes.legend()
    return figure


def read_curve(path: Path) -> list[dict[str, float]]:
    """The rows of one learning-curve CSV (``wall_seconds`` and ``percent_of_optimal`` at least); ``ValueError`` if not one."""
    try:
        with path.open(newline="") as handle:
            rows = [{key: float(value) for key, value in row.items()} for row in csv.DictReader(handle)]
    except (ValueError, TypeError, UnicodeDecodeError, csv.Error, OSError) as error:
        raise ValueError(f"{path} is not a learning curve: {error}") from None
    if not rows or not {"wall_seconds", "percent_of_optimal"} <= set(rows[0]):
        raise ValueError(f"{path} has no wall_seconds and percent_of_optimal columns")
    return rows


def plot_families(folder: Path, out: Path, levels: tuple[float, ...] = FAMILY_LEVELS) -> Path:
    """One panel per rule set: every ``<family>_<rules>.csv`` of ``folder`` as % of the optimum against minutes, as a PNG."""
    panels: dict[str, dict[str, list[dict[str, float]]]] = {}
    for path in sorted(folder.glob("*_*.csv")):
        family, rules = path.stem.split("_", 1)
        panels.setdefault(rules, {})[family] = read_curve(path)
    if not panels:
        raise ValueError(f"{folder} holds no <family>_<rules>.csv learning curves")
    save_png(out, families_figure(panels, levels), DPI)
    return out


def families_figure(panels: dict[str, dict[str, list[dict[str, float]]]], levels: tuple[float, ...]):
    """The panels of :func:`plot_families` for ``{rules: {family: its rows}}``, as a matplotlib figure."""
    plt = pyplot()
    figure, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.0), squeeze=False)
    for axis, (rules, families) in zip(axes[0], panels.items()):
        for family, rows in families.items():
            minutes = [row["wall_seconds"] / 60 for row in rows]
            axis.plot(minutes, [row["percent_of_optimal"] for row in rows], marker=".", label=family)
        for level in levels:
            axis.axhline(level, color="grey", linestyle="--", linewidth=0.8)
        axis.set(xlabel="wall time (minutes)", ylabel="mean score, % of the optimum", title=rules)
        axis.grid(alpha=0.3)
        axis.legend()
    return figure


def main(argv=None) -> int:
    """``python -m agents.training.curves``: the command line (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m agents.training.curves", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs="*", type=Path, help="run folders (each with a learning_curve.csv)")
    parser.add_argument("--families", type=Path, help="a folder of <family>_<rules>.csv curves: one panel per rule set")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    parser.add_argument(
        "--level",
        type=decimal_number(noun="a percentage"),
        action="append",
        help="a dashed line at this %% of the optimum (repeatable; default 98 and 99)",
    )
    args = parser.parse_args(argv)
    if bool(args.runs) == bool(args.families):
        parser.exit(2, "error: name run folders, or --families FOLDER, not both\n")
    try:
        check_outputs([args.out])  # a folder, FIFO or device: refused before reading and drawing, not after
        if args.families:
            path = plot_families(args.families, args.out, tuple(args.level or FAMILY_LEVELS))
        else:
            path = plot_curves(args.runs, args.out, tuple(args.level or CURVE_LEVELS))
    except (ValueError, OutputError) as error:
        parser.exit(2, f"error: {error}\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
