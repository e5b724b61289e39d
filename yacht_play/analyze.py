"""Grade recorded Yacht decisions against the exact optimum: expected points lost per decision.

    yacht analyze games/my-game.jsonl --agent optimal --agent greedy --json grades.json --plot grades.png

The *loss* of a decision is ``max_a Q*(s, a) - Q*(s, chosen)``, with ``Q*`` the exact expected
points still to come under optimal play (:func:`agents.solvers.optimal.solve`): what the choice gives away
in expectation, whatever the dice do afterwards. It is the scale of the published Yahtzee
proficiency tests, which ask players to stay below about 0.2 points lost per choice. An optimal
player loses exactly 0.

For each player in the records: the mean loss per decision, split into re-roll choices and row
choices and by turn, the total loss per game, the mean final score, and the worst decisions with
what the optimum would have done. ``--agent NAME`` replays an agent on the dice streams the people
in the records played (every recorded stream when there is no person), so agents and people are
graded side by side on the same games.

At a table of two under rules without bonuses or jokers, each decision is also graded in chances of winning:
its loss is the drop in the chance of winning (percentage points, a tie counting 1/2) from the best decision
when both play to win from there on, read from the solved two-player game (:mod:`agents.two_player.grading`).
When that solution is not computed, a line says which command computes it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import asdict

import numpy as np

from yacht_env.atomic_files import OutputError, check_outputs, write_atomically
from yacht_env.echo import echoed, echoed_path
from yacht_env.option_values import whole_number
from yacht_env.rules import RuleSet, rule_set
from yacht_play.coach import Grader, PlayerReport, grade_chances, report_players
from yacht_play.commands import dice_text
from yacht_play.options import add_rules_option
from yacht_play.records import GameRecord, RecordError

# -- agents on the same games ------------------------------------------------------------------


def recorded_streams(games: list[GameRecord], rules: RuleSet) -> list[tuple[int | None, np.ndarray]]:
    """The distinct dice streams people played in ``games`` (every stream when no person played)."""
    from yacht_play.match import dice_stream

    seats = [p for game in games for p in game.players]
    people = [p for p in seats if p["kind"] == "human"] or seats
    streams = {}
    for player in people:
        faces = np.asarray(player["faces"]) if player.get("faces") is not None else dice_stream(player["seed"], rules)
        streams.setdefault(faces.tobytes(), (player["seed"], faces))
    return list(streams.values())


def replay_agents(names: list[str], games: list[GameRecord], rules: RuleSet) -> list[GameRecord]:
    """The games the agents ``names`` play on the dice recorded in ``games``."""
    from yacht_play.match import agent_name, play_agent_games

    streams = recorded_streams(games, rules)
    replayed = []
    for name in dict.fromkeys(names):
        replayed += play_agent_games(name, streams, rules=rules, name=agent_name(name))
    return replayed


# -- output ------------------------------------------------------------------------------------


def figure(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` decimals, or "-" if it is missing."""
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def print_report(
    reports: list[PlayerReport], files: list[str], optimum: float, worst: int, rules: str = "yacht", note: str | None = None
) -> None:
    """Print the reports as a table; ``note``: why two-player decisions are not graded in chances of winning."""
    from rich.markup import escape
    from rich.table import Table

    from yacht_env.render import report_console
    from yacht_play.terminal_text import escaped_controls

    def shown(text: str) -> str:  # a name from a record: no terminal escape, no rich markup
        return escape(escaped_controls(text))

    console = report_console()
    table = Table(
        title=f"Expected points lost against the optimum ({rules} rules: optimal expected score {optimum:.2f})",
        caption="(replay): the agent played on the same dice streams as the people in the records",
    )
    table.add_column("", justify="left")
    for report in reports:
        table.add_column(f"{shown(report.label)}\n[dim]{report.kind}[/dim]", justify="right")
    rows = [
        ("games (finished)", lambda r: f"{r.games} ({r.finished_games})"),
        ("mean final score", lambda r: figure(r.mean_score, 1)),
        ("decisions", lambda r: str(r.decisions)),
        ("loss per decision", lambda r: figure(r.loss_per_decision)),
        ("  re-roll choices", lambda r: f"{figure(r.loss_per_reroll)} ({r.reroll_decisions})"),
        ("  row choices", lambda r: f"{figure(r.loss_per_row)} ({r.row_decisions})"),
        ("loss per game", lambda r: figure(r.loss_per_game, 2)),
    ]
    if any(r.win_decisions for r in reports):
        rows += [
            ("chance of winning lost (two-player, solved)", lambda r: f"({r.win_decisions})" if r.win_decisions else "-"),
            ("  loss per decision, pp", lambda r: figure(r.win_loss_per_decision)),
            ("  loss per game, pp", lambda r: figure(r.win_loss_per_game, 2)),
        ]
    for label, cell in rows:
        table.add_row(label, *(cell(r) for r in reports))
    table.add_section()
    for turn in range(len(reports[0].by_turn) if reports else 0):
        table.add_row(f"turn {turn + 1}: loss/decision", *(figure(r.by_turn[turn]["loss_per_decision"]) for r in reports))
    console.print(table)
    for report in reports:
        if not report.worst:
            console.print(f"{shown(report.label)}: no decision lost anything")
            continue
        console.print(
            decisions_table(
                f"{shown(report.label)}: worst {len(report.worst)} decisions",
                ("optimum", "exp. final", "loss"),
                report.worst,
                lambda e: (f"{e['expected_final_chosen']:.2f} / {e['expected_final_best']:.2f}", f"{e['loss']:.3f}"),
                shown,
            )
        )
    for report in reports:
        if not report.win_worst:
            continue
        console.print(
            decisions_table(
                f"{shown(report.label)}: costliest {len(report.win_worst)} decisions in chance of winning (two-player)",
                ("best to win", "chance of winning", "loss, pp"),
                report.win_worst,
                lambda entry: (f"{entry['chance_chosen']:.1f}% / {entry['chance_best']:.1f}%", f"{entry['loss']:.2f}"),
                shown,
            )
        )
    if note:
        console.print(shown(note))


def json_ready(value):
    """NaN -> None, recursively, so the JSON is standard."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    return value


def save_json(
    path, reports: list[PlayerReport], files: list[str], optimum: float, rules: str = "yacht", note: str | None = None
) -> None:
    """Write the reports to ``path`` as JSON."""
    document = {
        "schema": 1,
        "files": files,
        "rules": rules,
        "optimal_expected_score": optimum,
        "two_player_note": note,
        "players": [dict(asdict(r), label=r.label) for r in reports],
    }
    text = json.dumps(json_ready(document), indent=2) + "\n"
    write_atomically(path, lambda handle: handle.write(text.encode()))


def save_plot(path, reports: list[PlayerReport]) -> None:
    """Plot the reports and save the figure to ``path``."""
    from yacht_env.figures import pyplot, save_png

    figure_, (by_turn, by_kind) = pyplot().subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / max(len(reports), 1)
    for i, report in enumerate(reports):
        turns = np.array([t["turn"] for t in report.by_turn])
        losses = np.nan_to_num([t["loss_per_decision"] for t in report.by_turn])
        by_turn.bar(turns + (i - (len(reports) - 1) / 2) * width, losses, width, label=report.label)
        kinds = np.nan_to_num([report.loss_per_decision, report.loss_per_reroll, report.loss_per_row])
        by_kind.bar(np.arange(3) + (i - (len(reports) - 1) / 2) * width, kinds, width, label=report.label)
    by_turn.set_xticks(range(1, len(reports[0].by_turn) + 1) if reports else [])
    by_turn.set_xlabel("turn")
    by_turn.set_ylabel("expected points lost per decision")
    by_turn.set_title("Loss per decision, by turn")
    if reports:  # a legend of no player would only warn
        by_turn.legend()
    by_kind.set_xticks(range(3), ["all", "re-roll", "row"])
    by_kind.set_title("By decision type")
    save_png(path, figure_, dpi=110)


# -- command line ------------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``yacht analyze`` to ``parser``."""
    from agents.registry import or_list, solitaire_names

    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="game records (JSON lines) written by yacht play or match.write_agent_games"
    )
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="NAME",
        help=f"also grade this agent on the same dice: {or_list(solitaire_names(reading_totals=False))} (repeatable)",
    )
    add_rules_option(
        parser, "the rule set the games must have been played under: {names} (default: the records', which must all be one)"
    )
    parser.add_argument(
        "--worst",
        type=whole_number(noun="a number of decisions,", least=1),
        default=5,
        metavar="N",
        help="worst decisions listed per player, 1 or more (default 5)",
    )
    parser.add_argument("--json", metavar="PATH", help="write every figure to this JSON file")
    parser.add_argument("--plot", metavar="PATH", help="write a PNG of the losses by turn and by decision type")
    parser.set_defaults(run=run)


def read_all(paths: list[str], rules: RuleSet | None = None) -> list[GameRecord]:
    """Every game of every file, each checked and replayed against its dice; a file or a game given twice is refused,
    and so is a game played under other rules than ``rules`` (when given).
    """
    from yacht_play.match import load_games

    seen_files: dict = {}
    seen_games: dict[str, str] = {}
    games = []
    for path in paths:
        try:
            key = os.path.realpath(path)
        except OSError:
            key = path
        if key in seen_files:
            raise RecordError(f"{echoed_path(path)} is given twice (as {echoed(seen_files[key])} already): each game counts once")
        seen_files[key] = path
        for game in load_games(path, rules).games:
            if game.game_id in seen_games:
                raise RecordError(
                    f"{echoed_path(path)}: game {game.game_id} is already in {echoed_path(seen_games[game.game_id])}: "
                    "each game counts once"
                )
            seen_games[game.game_id] = path
            games.append(game)
    return games


def rules_of(games: list[GameRecord]) -> RuleSet:
    """The one rule set ``games`` were played under; ``RecordError`` naming two games of different rules."""
    first = games[0]
    for game in games:
        if game.header["rules"] != first.header["rules"]:
            raise RecordError(
                f"game {first.game_id} was played under the {first.header['rules']} rules and game "
                f"{game.game_id} under {game.header['rules']}: grade one rule set at a time (--rules NAME)"
            )
    return rule_set(first.header["rules"])


def check_replayable(names: list[str]) -> str | None:
    """Why an agent of ``names`` cannot be replayed alone on recorded dice, or None if all can.

    An agent that reads the table's totals (``target:T``) has none to read in a replay of a
    solitaire stream, and one that plays only at a table (``win``) has no solitaire form.
    """
    from agents.registry import find_policy, or_list, solitaire_names

    for name in names:
        spec = find_policy(name)
        if spec is not None and (spec.solitaire is None or spec.reads_totals):
            return (
                f"{name!r} reads the table's totals, which a replay alone has none of; choose {or_list(solitaire_names(False))}"
            )
    return None


def run(args) -> int:
    """Run ``yacht analyze`` with the parsed ``args``; return the exit status."""
    prog = "yacht analyze"
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(f"{prog}: error: --plot needs matplotlib: pip install 'yacht-rl[train]'", file=sys.stderr)
            return 2
    refusal = check_replayable(args.agent or [])
    if refusal:
        print(f"{prog}: error: argument --agent: {refusal}", file=sys.stderr)
        return 2
    try:
        check_outputs([args.json, args.plot])  # before the grading, which may take minutes
        games = read_all(args.files, rule_set(args.rules) if args.rules else None)
        if not games:
            raise RecordError(f"no game in {', '.join(echoed_path(path) for path in args.files)}")
        grader = Grader(rules_of(games))
        reports = report_players(games, grader, worst=args.worst)
        note = grade_chances(reports, games, grader.rules, args.worst)
        if args.agent:
            reports += report_players(replay_agents(args.agent, games, grader.rules), grader, "replay", args.worst)
    except (RecordError, ValueError, OutputError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    optimum = grader.solution.expected_score
    print_report(reports, args.files, optimum, args.worst, grader.rules.name, note)
    try:
        if args.json:
            save_json(args.json, reports, args.files, optimum, grader.rules.name, note)
        if args.plot:
            save_plot(args.plot, reports)
    except OutputError as error:  # a device, a folder, no permission: one line
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv=None) -> int:
    """Run ``yacht analyze`` on ``argv``; return the exit status."""
    parser = argparse.ArgumentParser(prog="yacht analyze")
    configure(parser)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())


def decisions_table(title: str, columns: tuple[str, str, str], entries: list[dict], figures, shown):
    """A table of graded decisions: where each was (game, turn, roll, dice), what was chosen, and ``columns``:
    the best choice's name, then the two figures ``figures(entry)`` gives (its comparison and its loss).
    """
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in ("game", "turn", "roll", "dice", "chose", *columns):
        table.add_column(column, justify="left" if column in ("game", "dice", "chose", columns[0]) else "right")
    for entry in entries:
        table.add_row(
            shown(entry["game_id"]),
            str(entry["turn"]),
            str(entry["roll"]),
            dice_text(entry["dice"]),
            entry["chosen"],
            entry["best"],
            *figures(entry),
        )
    return table
