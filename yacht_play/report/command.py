"""The population report: how the agents compare with the people who played them, from a serve database.

    yacht report --db yacht.db --json report.json --plot report.png [--since 2026-01-01 --mode duplicate]
    yacht report --db yacht.db --csv tables/ --latex tables.tex --policy ppo:yacht

Over the finished games that pass the filters (date range on the game's start, mode, player), played on
the server: games ``yacht import`` brought in from record files are left out (and counted, in the first
line) unless ``--include-imported`` (``?include_imported=1``) asks for them:

* per policy: its win rate against the people it sat with (each person at the table is one
  pairing; a shared first place between the two counts 1/2, as in tournaments) and the mean score
  difference (agent minus person), with 95% intervals over games, and the games and people;
* people on the DP scale: expected points lost per decision (all, re-roll choices, row choices)
  against the exact optimum, graded by :class:`yacht_play.coach.Grader`, per person (interval
  over the person's decisions) and over the population (interval over people, each person one
  value; and pooled over decisions); a histogram of the people's loss per decision; the loss per
  decision by how many games the person had played before;
* duplicate games, paired: person minus agent on the same dice;
* the agents graded the same way on their own decisions in the same games;
* each person's skill: the maximum-likelihood temperature of a softmax over Q* (:mod:`yacht_play.report.skill`);
* each policy's likeness to the people, overall and by skill band (:mod:`yacht_play.report.likeness`);
* one rating scale for people and agents, Bradley-Terry with bootstrap intervals (:mod:`yacht_play.report.ratings`).

``--csv DIR`` and ``--latex FILE`` write the tables as a paper prints them (:mod:`yacht_play.report.tabulations`,
:mod:`yacht_play.report.latex`).

Every figure carries ``n`` (games, decisions or people it stands on). A figure on fewer than
``MIN_N`` values, or a population figure on fewer than ``MIN_PLAYERS`` people, has no interval:
its ``note`` says why. Intervals come from :func:`agents.evaluation.stats.mean_ci` (normal approximation).
"""

from __future__ import annotations

import argparse
import sys

from yacht_env.atomic_files import OutputError, check_outputs
from yacht_play.options import add_db_option, add_rules_option
from yacht_play.records import HUMAN_MODES
from yacht_play.report.build import build_report
from yacht_play.report.filters import Filters, check_date, check_player
from yacht_play.report.json_document import save_json
from yacht_play.report.plot import save_plot
from yacht_play.report.text import text_lines


def configure(parser: argparse.ArgumentParser) -> None:
    """The options of ``yacht report``."""
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_db_option(parser, "serve database: an SQLite file or a URL (default %(default)s)")
    parser.add_argument("--json", metavar="PATH", help="write every figure to this JSON file")
    parser.add_argument("--plot", metavar="PATH", help="write a PNG of the main figures")
    parser.add_argument("--since", help="only games started at or after this date (ISO 8601, e.g. 2026-11-01)")
    parser.add_argument("--until", help="only games started before this date")
    parser.add_argument("--mode", choices=HUMAN_MODES, help="only games of this mode")
    parser.add_argument("--player", help="only games this person played")
    add_rules_option(parser, "only games of this rule set: {names} (needed when the database holds several)")
    parser.add_argument(
        "--include-imported",
        action="store_true",
        help="count the games yacht import brought in from record files too (default: only games played on the server)",
    )
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME",
        help="also measure this policy's likeness to the people (repeatable; e.g. ppo:yacht, a model of yours such as "
        "ppo:runs/quick/model.safetensors, softmax:2)",
    )
    parser.add_argument("--csv", metavar="DIR", help="write one CSV file per table into this folder")
    parser.add_argument("--latex", metavar="FILE", help="write every table into this LaTeX file")
    parser.set_defaults(run=run)


def run(args) -> int:
    """Print the report of a database; write its JSON and plot when asked."""
    prog = "yacht report"

    try:
        from yacht_play import store
    except ImportError as error:
        print(f"{prog}: needs the serve extra ({error.name} is missing): pip install 'yacht-rl[serve]'", file=sys.stderr)
        return 2
    try:
        filters = Filters(
            check_date("--since", args.since),
            check_date("--until", args.until),
            args.mode,
            check_player("--player", args.player),
            args.rules,
            args.include_imported,
        )
        check_outputs([args.json, args.plot, args.latex], [args.csv])  # before the minutes the report may take
        missing = store.missing_database(args.db)
        if missing:
            raise ValueError(missing)
        with store.database_errors(store.database_url(args.db)):  # a corrupted file: one line, not a traceback
            games = store.all_games(store.connect(args.db), finished_only=True)
        from agents.registry import check_policy_name

        for name in args.policy:
            check_policy_name(name)
        report = build_report(games, filters, extra_policies=args.policy)
    except (ValueError, store.DatabaseError, OutputError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    from yacht_play.terminal_text import escaped_controls

    print("\n".join(escaped_controls(line) for line in text_lines(report)))  # names come from browsers
    from yacht_play.report import latex, tabulations

    try:
        if args.json:
            save_json(args.json, report)
        if args.plot:
            save_plot(args.plot, report)
        if args.csv:
            tabulations.save_csv(args.csv, report)
        if args.latex:
            latex.save_latex(args.latex, report)
    except OutputError as error:  # a device, a folder that is a file, a path without write access: one line
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    return 0
