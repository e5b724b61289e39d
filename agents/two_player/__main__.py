"""``python -m agents.two_player --rules yacht``: solve the two-player game (resumable) and print its value.

Each finished layer is written to the cache folder; run the same command again after a kill and the
solve continues from the last layer written. ``--rows`` solves the game on some of the rows only (a
smaller game, for a quick look). ``--opponent optimal`` solves the best response to that solitaire
policy instead (of player one; ``--seat 2`` of player two); with ``--strategy exact2``, the exact chances of
that player playing the game's decisions (the policy ``exact2``) against it. A line per layer goes to stderr
with the time left; on a terminal a progress bar too.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

from agents.solvers.solution_cache import CacheFolderError
from agents.two_player import STRATEGIES, check_rules, solution_label, solve_two_player
from agents.two_player.layout import PairLayout
from agents.two_player.opponents import OPPONENTS
from agents.two_player.solve import LayerReport, first_missing_layer, solution_folder
from yacht_env.option_values import whole_number
from yacht_env.rules import RULE_SETS, RuleSet


def sub_game(rules: RuleSet, rows: str) -> RuleSet:
    """``rules`` on the comma-separated ``rows`` only (``ValueError`` naming a row it does not have)."""
    names = [name.strip() for name in rows.split(",") if name.strip()]
    indices = sorted({rules.check_category(name) for name in names})
    if not indices:
        raise ValueError(f"--rows names no row; expected some of {', '.join(rules.category_names)}")
    categories = tuple(rules.categories[c] for c in indices)
    return RuleSet(
        name=f"{rules.name}[{','.join(c.name for c in categories)}]",
        categories=categories,
        num_dice=rules.num_dice,
        num_faces=rules.num_faces,
        rolls_per_turn=rules.rolls_per_turn,
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line's options."""
    plain = [name for name, rules in RULE_SETS.items() if not rules.has_bonus_or_joker]
    parser = argparse.ArgumentParser(prog="python -m agents.two_player", description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="yacht", choices=plain, help="the rule set (default: yacht)")
    parser.add_argument("--rows", default="", help="solve on these rows only, comma-separated (a smaller game)")
    parser.add_argument("--opponent", choices=OPPONENTS, help="best response to this policy (default: both play to win)")
    parser.add_argument("--seat", type=whole_number(), choices=(1, 2), default=1, help="the best responder's seat (default 1)")
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="best",
        help="with --opponent: best (the best response, default) or exact2 (the game's decisions, valued against it)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar, only a line per layer")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Solve (or load) and print the first player's chance of winning."""
    args = parse_args(argv)
    seat = args.seat - 1
    try:
        rules = check_rules(args.rules)
        if args.rows:
            rules = sub_game(rules, args.rows)
        label = solution_label(args.opponent, seat, args.strategy)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    layout = PairLayout(rules)
    if label.startswith("exact2") and first_missing_layer(solution_folder(rules, "game"), layout) < layout.num_layers:
        print("the game (both play to win) is solved first: the exact2 decisions are its", file=sys.stderr, flush=True)
    folder = solution_folder(rules, label)
    start_layer = first_missing_layer(folder, layout)
    print(
        f"{rules.name}: {layout.total_values:,} values in {layout.num_layers - 1} layers; "
        f"{'solving from layer ' + str(start_layer) if start_layer < layout.num_layers else 'solved'}"
        f"{'' if folder is None else ' in ' + str(folder)}",
        file=sys.stderr,
        flush=True,
    )
    started = time.perf_counter()
    report = LayerReport(layout, start_layer)
    try:
        if args.no_progress or not sys.stderr.isatty():
            solution = solve_two_player(rules, args.opponent, seat, report=report, strategy=args.strategy)
        else:
            solution = _solve_with_bar(rules, args.opponent, seat, args.strategy, layout, start_layer, report)
    except CacheFolderError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    size = 0 if folder is None else sum(path.stat().st_size for path in folder.glob("layer-*.npy"))
    first = solution.start_value()
    if args.opponent is None:
        print(f"player one's chance of winning: {first:.6f} (a tie counts 1/2)")
    else:
        responder = first if seat == 0 else 1.0 - first
        what = "best response to" if args.strategy == "best" else "exact2 against"
        print(f"player {args.seat}'s {what} {args.opponent} wins {responder:.6f} (a tie counts 1/2)")
    print(f"{seconds:.1f} s, peak memory {peak:.2f} GiB, {size / 2**30:.2f} GiB on disk", file=sys.stderr)
    return 0


def _solve_with_bar(
    rules: RuleSet, opponent: str | None, seat: int, strategy: str, layout: PairLayout, start_layer: int, report: LayerReport
):
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    before = {n: sum(layer.num_values for layer in layout.layers[start_layer:n]) for n in range(layout.num_layers)}
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"))
    # the time left is the report's estimate (rich's own, from the bar's speed, read the first layer's compile as the rate)
    with Progress(*columns, TimeElapsedColumn(), TextColumn("{task.fields[left]}"), console=Console(stderr=True)) as bar:
        task = bar.add_task("two-player solve", total=max(1, report.remaining), left="")
        report.stream = bar.console.file

        def update(num_open: int, done_in_layer: int, seconds: float) -> None:
            report(num_open, done_in_layer, seconds)
            left = report.seconds_left()
            bar.update(
                task,
                completed=before[num_open] + done_in_layer,
                description=f"layer {num_open}/{layout.num_layers - 1}",
                left="" if left is None else f"about {left / 60:.1f} min left",
            )

        return solve_two_player(rules, opponent, seat, report=update, strategy=strategy)


if __name__ == "__main__":
    sys.exit(main())
