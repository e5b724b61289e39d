"""A whole study with simulated people: serve, collect, report, and check what the report found.

    python examples/simulated_study.py --out study/          # 102 people, 1,020 duplicate games (a few minutes)
    python examples/simulated_study.py --out small/ --players 4 --games 2 --agents optimal,greedy

Starts ``yacht serve`` on a new SQLite database in ``--out`` (127.0.0.1, a free port), lets groups
of simulated people play it through the HTTP API (``yacht_play.simulate``: a softmax over Q* at
each group's temperature, so each person's expected loss per decision is known exactly), each
person ``--games`` duplicate games against the agents in turn, then writes the population report
(``report.json``, ``report.png``, ``report.txt``: what ``yacht report`` prints) and checks it
against what the simulation put in:

* per temperature, the people's loss per decision recovered by the report (mean over the group's
  people, each person one value, with its 95% interval as the report computes one) next to the exact expected loss they
  played with;
* per temperature, the temperature the report fits to the group's decisions (maximum likelihood,
  95% profile-likelihood interval) next to the one put in;
* per agent, the win rate against the people and the person-minus-agent difference on the same
  dice, as the report gives them;
* each policy's top-1 agreement with the people and the log-likelihood of their choices, and the
  ratings of the agents and of each group's people on one Bradley-Terry scale.

The database stays in ``--out``: ``yacht report --db OUT/study.db --player t1.0-0003`` and the
``/report`` page of ``yacht serve --db OUT/study.db`` read it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import numpy as np

from yacht_env.option_values import decimal_number, whole_number
from yacht_play.report.build import LOSS, build_report, temperature_of_people
from yacht_play.report.estimates import estimate
from yacht_play.report.json_document import save_json
from yacht_play.report.plot import save_plot
from yacht_play.report.results import PolicyLikeness, Report, TemperatureFit
from yacht_play.report.text import figure, text_lines
from yacht_play.report.text import temperature as temperature_figure
from yacht_play.serve.local_server import LocalServer
from yacht_play.simulate import simulate


def group_prefix(temperature: float) -> str:
    """The name prefix of the people of one temperature (``t0.3-0000``, ...): the report lists people by name."""
    return f"t{temperature:g}-"


def arguments() -> argparse.Namespace:
    """The study's options, checked (a bad one stops the study with its one-line reason)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="a new folder for the database and the report")
    parser.add_argument(
        "--temperatures",
        type=decimal_number(),
        nargs="+",
        default=[0.3, 1.0, 3.0],
        help="one group of people per temperature, in points (default 0.3 1 3)",
    )
    parser.add_argument("--players", type=whole_number(), default=34, help="people per temperature (default 34)")
    parser.add_argument("--games", type=whole_number(), default=10, help="duplicate games per person (default 10)")
    parser.add_argument(
        "--agents",
        default="optimal,ppo:yacht,greedy",
        help="the agents the people play in turn (default optimal, the shipped PPO model, greedy)",
    )
    parser.add_argument("--seed", type=whole_number(), default=0, help="seed of the people's choices (the dice are the server's)")
    args = parser.parse_args()
    if args.players < 1 or args.games < 1 or any(not 0 <= t < 1e6 for t in args.temperatures):
        parser.error("--players and --games at least 1, --temperatures between 0 and 1e6 points")
    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        parser.error(f"--out {args.out}: not an empty folder; give a new one")
    return args


def play_groups(url: str, args: argparse.Namespace, agents: list[str]) -> dict[float, dict[str, float]] | None:
    """Each temperature's group playing the server at ``url``, one group after the other.

    Per temperature, each person's exact expected loss per decision (what the report should recover);
    None when a request failed (said on standard error).
    """
    put_in = {}
    for number, temperature in enumerate(args.temperatures):
        started = time.perf_counter()
        played = asyncio.run(
            simulate(
                url,
                args.players,
                args.games,
                temperature,
                "duplicate",
                agents,
                seed=args.seed + number,
                prefix=group_prefix(temperature),
            )
        )
        errors = [e for p in played for e in p.errors]
        if errors:
            print(f"simulated_study: {len(errors)} requests failed; first: {errors[0]}", file=sys.stderr)
            return None
        losses = {}  # person -> the exact expected loss of each of its decisions
        for p in played:
            losses.setdefault(p.name, []).extend(p.expected_losses)
        put_in[temperature] = {name: np.mean(values) for name, values in losses.items()}
        print(
            f"temperature {temperature:g}: {len(played)} games by {args.players} people in {time.perf_counter() - started:.0f} s"
        )
    return put_in


def print_findings(report: Report, put_in: dict[float, dict[str, float]], fitted: dict[float, TemperatureFit]) -> None:
    """What the report recovered next to what was put in, per temperature; what it found of each agent; each
    policy's likeness to the people; the ratings.
    """
    recovered = {p.name: p.all.mean for p in report.people.players}
    print(
        "\n| temperature | people | loss put in (expected) | loss recovered by the report [95% CI over people] "
        "| T recovered [95% CI, the group's decisions] |"
    )
    print("|---|---|---|---|---|")
    for temperature, expected in put_in.items():
        found = estimate([recovered[n] for n in expected], "people", players=len(expected), clip=LOSS)
        print(
            f"| {temperature:g} | {len(expected)} | {np.mean(list(expected.values())):.3f} | {figure(found)} "
            f"| {temperature_figure(fitted[temperature])} |"
        )
    print(
        "\n| agent | games | win rate against the people [95% CI] | person - agent, same dice [95% CI] "
        "| agent's loss per decision [95% CI] |"
    )
    print("|---|---|---|---|---|")
    paired = {d.policy: d.person_minus_agent for d in report.duplicate}
    graded = {a.policy: a.all for a in report.agents_graded}
    for a in report.agents_vs_people:
        print(
            f"| {a.policy} | {a.games} | {figure(a.win_rate, percent=True)} | "
            f"{figure(paired[a.policy], 2) if a.policy in paired else '-'} | "
            f"{figure(graded[a.policy]) if a.policy in graded else '-'} |"
        )
    print_likeness_and_ratings(report, put_in)


def print_likeness_and_ratings(report: Report, put_in: dict[float, dict[str, float]]) -> None:
    """Each policy's top-1 agreement and log-likelihood on the people's decisions; the agents' ratings and each group's."""
    print("\n| policy | top-1 agreement with the people [95% CI] | mean log-likelihood of their choices [95% CI] |")
    print("|---|---|---|")
    for entry in report.likeness:
        if not isinstance(entry, PolicyLikeness):
            continue
        likelihood = figure(entry.log_likelihood) if entry.log_likelihood is not None else "-"
        print(f"| {entry.label()} | {figure(entry.top1, percent=True)} | {likelihood} |")
    ratings = {p.name: p.rating for p in report.ratings.players}
    print(f"\n| rated (Bradley-Terry, {report.ratings.anchor.policy or 'mean'} = 1000) | rating [95% bootstrap CI] |")
    print("|---|---|")
    for p in report.ratings.players:
        if p.kind == "agent":
            print(f"| agent {p.name} | {figure(p.rating, 0)} |")
    for temperature, people in put_in.items():
        mean = np.mean([ratings[name].mean for name in people if name in ratings])
        print(f"| people at T = {temperature:g} (mean of {len(people)}) | {mean:.0f} |")


def main() -> int:
    """Serve, simulate every group, report, and print what the report recovered next to what was put in."""
    args = arguments()
    args.out.mkdir(parents=True, exist_ok=True)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    database = args.out / "study.db"
    try:
        server = LocalServer(
            database, agents=",".join(agents), log=args.out / "serve.log", options=("--new-games-per-minute", "0")
        ).start(timeout=300)
    except RuntimeError:  # yacht serve refused to start: its own one-line reason is the log's last line
        lines = (args.out / "serve.log").read_text().strip().splitlines() or ["(no output)"]
        print(f"simulated_study: yacht serve did not start: {lines[-1]}", file=sys.stderr)
        return 2
    try:
        put_in = play_groups(server.url, args, agents)
    finally:
        server.stop()
    if put_in is None:
        return 1

    from yacht_env.rules import rule_set
    from yacht_play import store
    from yacht_play.coach import Grader

    games = store.all_games(store.connect(str(database)), finished_only=True)
    report = build_report(games)
    grader = Grader(rule_set(report.rules))
    fitted = {t: temperature_of_people(games, list(people), grader) for t, people in put_in.items()}
    save_json(args.out / "report.json", report)
    (args.out / "report.txt").write_text("\n".join(text_lines(report)) + "\n")
    save_plot(args.out / "report.png", report)
    print(f"\n{report.games} games, {report.decisions} decisions; report in {args.out}/report.txt, .json, .png")
    print_findings(report, put_in, fitted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
