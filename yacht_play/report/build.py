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
  against the exact optimum, graded by :class:`yacht_play.analyze.Grader`, per person (interval
  over the person's decisions) and over the population (interval over people, each person one
  value; and pooled over decisions); a histogram of the people's loss per decision; the loss per
  decision by how many games the person had played before;
* duplicate games, paired: person minus agent on the same dice;
* the agents graded the same way on their own decisions in the same games;
* each person's skill: the maximum-likelihood temperature of a softmax over Q* (:mod:`yacht_play.report.skill`);
* each policy's likeness to the people, overall and by skill band (:mod:`yacht_play.report.likeness`);
* one rating scale for people and agents, Bradley-Terry with bootstrap intervals (:mod:`yacht_play.report.ratings`).

``--csv DIR`` and ``--latex FILE`` write the tables as a paper prints them (:mod:`yacht_play.report.tables`).

Every figure carries ``n`` (games, decisions or people it stands on). A figure on fewer than
``MIN_N`` values, or a population figure on fewer than ``MIN_PLAYERS`` people, has no interval:
its ``note`` says why. Intervals come from :func:`agents.stats.mean_ci` (normal approximation).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

import numpy as np

from yacht_play.options import add_db_option, add_rules_option
from yacht_play.records import HUMAN_MODES, GameRecord
from yacht_play.report.estimates import MIN_N, MIN_PLAYERS, estimate, figure, imported_text, plural  # noqa: F401  (report's API)

GAMES_PLAYED_BINS = [(1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, None)]
HISTOGRAM_BINS = 12
LOSS = (0.0, math.inf)  # a loss is never negative: the interval is clipped at 0


@dataclass
class Filters:
    """Which games a report covers; ``since``/``until`` compare with the game's start (ISO 8601, UTC)."""

    since: str | None = None
    until: str | None = None
    mode: str | None = None
    player: str | None = None
    rules: str | None = None  # the rule set; None: the one the games share
    include_imported: bool = False  # games yacht import brought in from record files count too

    def keep(self, game: GameRecord) -> bool:
        """Whether ``game`` passes the filters (an imported game only with ``include_imported``)."""
        return self.keep_played(game) and (self.include_imported or not game.imported)

    def keep_played(self, game: GameRecord) -> bool:
        """Whether ``game`` passes the filters other than ``include_imported``."""
        started = game.header.get("time") or ""
        if self.since and started < self.since:
            return False
        if self.until and started >= self.until:
            return False
        if self.mode and game.header["mode"] != self.mode:
            return False
        if self.player and self.player not in [p["name"] for p in game.players if p["kind"] == "human"]:
            return False
        if self.rules and game.header["rules"] != self.rules:
            return False
        return True


def people_of(game: GameRecord) -> list[dict]:
    """The people's seats of ``game``."""
    return [p for p in game.players if p["kind"] == "human"]


def one_rule_set(games: list[GameRecord], default: str) -> str:
    """The rule set ``games`` share (``default`` when there are none); ``ValueError`` naming them when they mix."""
    names = sorted({g.header["rules"] for g in games})
    if len(names) > 1:
        raise ValueError(
            f"the games were played under {len(names)} rule sets ({', '.join(names)}): "
            "report one at a time (--rules NAME, or ?rules=NAME)"
        )
    return names[0] if names else default


@dataclass
class GradedDecisions:
    """Every decision of the report's games, in game order, with its grade: one entry per decision in each array."""

    records: list[dict]
    loss: np.ndarray  # expected points lost against the optimum
    kind: np.ndarray  # "human" or "agent"
    is_row: np.ndarray  # a row choice (else a re-roll choice)
    player: np.ndarray  # the seat's name
    game_of: np.ndarray  # the game's id
    q: np.ndarray  # (N, num_actions) Q* of every action, -inf where illegal
    positions: dict  # hands, rolls_left, open_bits, upper, yahtzee_full, actions: each (N,) int64

    @classmethod
    def of(cls, games: list[GameRecord], grader) -> GradedDecisions:
        """The decisions of ``games``, graded by ``grader``."""
        from yacht_play.analyze import sheet_states

        records = [d for g in games for d in g.decisions]
        graded = grader.grade(records)
        rules = grader.rules
        upper, yahtzee_full = sheet_states(records, rules)
        as_int = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
        positions = {
            "hands": as_int([rules.hand(d["dice"]) for d in records]),
            "rolls_left": as_int([d["rolls_left"] for d in records]),
            "open_bits": as_int([grader.open_bits(d["open"]) for d in records]),
            "upper": upper,
            "yahtzee_full": yahtzee_full,
            "actions": as_int([d["action"] for d in records]),
        }
        return cls(
            records,
            graded.loss,
            np.array([d.get("kind", "human") for d in records]),
            np.array([d["points"] is not None for d in records], dtype=bool),
            np.array([d["player"] for d in records], dtype=object),
            np.array([d["game_id"] for d in records], dtype=object),
            graded.q,
            positions,
        )

    @property
    def human(self) -> np.ndarray:
        """Which decisions a person made."""
        return self.kind == "human"


def build_report(games: list[GameRecord], filters: Filters | None = None, grader=None, policies=None, extra_policies=()) -> dict:
    """Every figure of the report, as a JSON-ready dict, over the finished games that pass ``filters``.

    One rule set at a time: ``filters.rules``, else the one the games share (``ValueError`` when
    they mix), graded under it (``grader`` is used when it is for those rules). ``policies``: the
    ``(label, policy name)`` whose likeness to the people is measured (see :func:`skill_likeness_and_ratings`), and
    ``extra_policies`` names more (``yacht report --policy``).
    """
    from yacht_env.rules import rule_set
    from yacht_play.analyze import Grader

    filters = filters or Filters()
    passing = [g for g in games if g.end is not None and filters.keep_played(g)]
    games = [g for g in passing if filters.keep(g)]
    rules = rule_set(filters.rules or one_rule_set(games, grader.rules.name if grader else "yacht"))
    games = [g for g in games if g.header["rules"] == rules.name]
    left_out = 0 if filters.include_imported else sum(g.imported and g.header["rules"] == rules.name for g in passing)
    grader = grader if grader is not None and grader.rules is rules else Grader(rules)
    games.sort(key=lambda g: (g.header.get("time") or "", g.game_id))
    decisions = GradedDecisions.of(games, grader)
    return {
        "schema": 1,
        "filters": {
            "since": filters.since,
            "until": filters.until,
            "mode": filters.mode,
            "player": filters.player,
            "rules": filters.rules,
            "include_imported": filters.include_imported,
        },
        "games": len(games),
        "imported_games": sum(g.imported for g in games),  # counted in (with include_imported)
        "imported_games_left_out": left_out,  # finished, passing the other filters, under these rules
        "decisions": len(decisions.records),
        "optimal_expected_score": grader.solution.expected_score,
        "min_n": MIN_N,
        "agents_vs_people": agents_against_people(games),
        "people": {**people_on_the_dp_scale(decisions), "by_games_played": loss_by_games_played(games, decisions)},
        "duplicate": duplicate_pairs(games),
        "agents_graded": agents_graded(games, decisions),
        "rules": rules.name,
        **skill_likeness_and_ratings(games, decisions, rules, policies, extra_policies),
    }


def temperature_of_people(games: list[GameRecord], names, grader) -> dict:
    """The temperature fitted to every decision the people ``names`` made in ``games`` together (a group's skill)."""
    from yacht_play.report import skill

    decisions = GradedDecisions.of(games, grader)
    mine = decisions.human & np.isin(decisions.player, list(names))
    hands, actions = decisions.positions["hands"][mine], decisions.positions["actions"][mine]
    return skill.fit_temperature(*skill.choice_gaps(decisions.q[mine], hands, actions, grader.rules), MIN_N)


def skill_likeness_and_ratings(games: list[GameRecord], decisions: GradedDecisions, rules, policies, extra=()) -> dict:
    """The people's fitted temperatures, each policy's likeness to them, and the rating of every person and agent.

    ``policies``: ``(label, policy name)`` to measure the likeness of; None: ``random``, ``greedy``, ``optimal`` and
    the agents of the games; ``softmax:fit`` always comes last.
    """
    from yacht_play.report import likeness, ratings, skill

    human = decisions.human
    mine = {k: v[human] for k, v in decisions.positions.items()}  # the people's positions
    x, chosen = skill.choice_gaps(decisions.q[human], mine["hands"], mine["actions"], rules)
    people = skill.skill_of_people(x, chosen, decisions.player[human], decisions.game_of[human], MIN_N)
    band_of_person = {p["name"]: p["band"] for p in people["players"]}
    band_people = {b["band"]: b["people"] for b in people["population"]["bands"]}
    if policies is None:
        agents = sorted({p["policy"] for g in games for p in g.players if p["kind"] == "agent"})
        policies = [(name, name) for name in dict.fromkeys([*likeness.DEFAULT_POLICIES, *agents])]
    positions = likeness.Positions(
        decisions.q[human], **mine, players=people["population"]["people"], people=decisions.player[human]
    )
    bands = np.array([band_of_person[name] for name in decisions.player[human]], dtype=object)
    names = list(dict.fromkeys([*policies, *((name, name) for name in extra), (likeness.FIT, likeness.FIT)]))
    table = likeness.likeness_table(names, positions, bands, band_people, rules, people["population"]["median"])
    return {"skill": people, "likeness": table, "ratings": ratings.rate(games)}


def agents_against_people(games: list[GameRecord]) -> list[dict]:
    """Per policy: its win rate against the people it sat with and the mean score difference (agent - person)."""
    policies: dict[str, dict] = {}
    for game in games:
        totals = game.end["totals"]
        humans = people_of(game)
        if not humans:
            continue
        for seat in game.players:
            if seat["kind"] != "agent":
                continue
            entry = policies.setdefault(seat["policy"], {"wins": [], "diffs": [], "people": set()})
            mine = totals[seat["seat"]]
            shares = [1.0 if mine > totals[h["seat"]] else 0.5 if mine == totals[h["seat"]] else 0.0 for h in humans]
            entry["wins"].append(float(np.mean(shares)))
            entry["diffs"].append(float(np.mean([totals[seat["seat"]] - totals[h["seat"]] for h in humans])))
            entry["people"].update(h["name"] for h in humans)
    return [
        {
            "policy": policy,
            "games": len(e["wins"]),
            "people": len(e["people"]),
            "win_rate": estimate(e["wins"], "games", len(e["people"]), clip=(0.0, 1.0)),
            "score_difference": estimate(e["diffs"], "games", len(e["people"])),
        }
        for policy, e in sorted(policies.items())
    ]


def people_on_the_dp_scale(decisions: GradedDecisions) -> dict:
    """The people's loss per decision: each person's, the population's (over people and pooled), and a histogram."""
    loss, is_row, player, game_of, human = decisions.loss, decisions.is_row, decisions.player, decisions.game_of, decisions.human
    names = list(dict.fromkeys(player[human].tolist()))
    per_player = []
    for name in names:
        mine = human & (player == name)
        per_player.append(
            {
                "name": name,
                "games": len(set(game_of[mine].tolist())),
                "all": estimate(loss[mine], "decisions", clip=LOSS),
                "reroll": estimate(loss[mine & ~is_row], "decisions", clip=LOSS),
                "row": estimate(loss[mine & is_row], "decisions", clip=LOSS),
            }
        )
    person_means = {k: [p[k]["mean"] for p in per_player if p[k]["mean"] is not None] for k in ("all", "reroll", "row")}
    population = {
        "people": len(names),
        "games": len({g for g, h in zip(game_of.tolist(), human) if h}),
        "over_people": {k: estimate(v, "people", len(v), clip=LOSS) for k, v in person_means.items()},
        "pooled": {
            "all": estimate(loss[human], "decisions", len(names), clip=LOSS),
            "reroll": estimate(loss[human & ~is_row], "decisions", len(names), clip=LOSS),
            "row": estimate(loss[human & is_row], "decisions", len(names), clip=LOSS),
        },
    }
    return {"population": population, "players": per_player, "histogram": histogram_of(np.array(person_means["all"]))}


def histogram_of(values: np.ndarray) -> dict:
    """``HISTOGRAM_BINS`` bins from 0 to the largest of ``values`` (each a person's loss per decision)."""
    if not len(values):
        return {"edges": [], "counts": [], "n": 0, "unit": "people"}
    top = max(float(values.max()), 1e-9)
    counts, edges = np.histogram(values, bins=HISTOGRAM_BINS, range=(0.0, top))
    return {"edges": edges.tolist(), "counts": counts.tolist(), "n": len(values), "unit": "people"}


def loss_by_games_played(games: list[GameRecord], decisions: GradedDecisions) -> list[dict]:
    """The mean of each game's loss per decision, by how many games the person had played by then (``GAMES_PLAYED_BINS``)."""
    game_loss: dict[tuple[str, str], list[float]] = {}  # (game, person) -> the loss of each of the person's decisions
    order_of: dict[tuple[str, str], int] = {}  # (game, person) -> the game's number among the person's games
    seen: dict[str, int] = {}
    for game in games:
        for person in people_of(game):
            seen[person["name"]] = seen.get(person["name"], 0) + 1
            order_of[(game.game_id, person["name"])] = seen[person["name"]]
    for i in np.flatnonzero(decisions.human):
        game_loss.setdefault((decisions.game_of[i], decisions.player[i]), []).append(float(decisions.loss[i]))
    by_games_played = []
    for low, high in GAMES_PLAYED_BINS:
        means = [
            float(np.mean(v)) for key, v in game_loss.items() if order_of[key] >= low and (high is None or order_of[key] <= high)
        ]
        people = len({key[1] for key in game_loss if order_of[key] >= low and (high is None or order_of[key] <= high)})
        label = f"{low}" if low == high else f"{low}+" if high is None else f"{low}-{high}"
        by_games_played.append({"games_played": label, "loss_per_decision": estimate(means, "games", people, clip=LOSS)})
    return by_games_played


def duplicate_pairs(games: list[GameRecord]) -> list[dict]:
    """Per policy, over its duplicate games: the person's total minus the agent's, on the same dice."""
    duplicates: dict[str, dict] = {}
    for game in games:
        if game.header["mode"] != "duplicate":
            continue
        totals = game.end["totals"]
        for person in people_of(game):
            for seat in game.players:
                if seat["kind"] == "agent":
                    entry = duplicates.setdefault(seat["policy"], {"diffs": [], "people": set()})
                    entry["diffs"].append(totals[person["seat"]] - totals[seat["seat"]])
                    entry["people"].add(person["name"])
    return [
        {
            "policy": policy,
            "games": len(e["diffs"]),
            "people": len(e["people"]),
            "person_minus_agent": estimate(e["diffs"], "games", len(e["people"])),
        }
        for policy, e in sorted(duplicates.items())
    ]


def agents_graded(games: list[GameRecord], decisions: GradedDecisions) -> list[dict]:
    """Per policy: the agents' loss per decision on their own decisions in the same games."""
    policy_of = {(g.game_id, p["seat"]): p["policy"] for g in games for p in g.players if p["kind"] == "agent"}
    decisions_of: dict[str, list[int]] = {}  # policy -> the indices of its decisions
    for i, d in enumerate(decisions.records):
        if decisions.kind[i] == "agent":
            decisions_of.setdefault(policy_of[(d["game_id"], d["seat"])], []).append(i)
    graded = []
    for policy, indices in sorted(decisions_of.items()):
        mine = np.array(indices)
        loss, is_row_choice = decisions.loss[mine], decisions.is_row[mine]
        graded.append(
            {
                "policy": policy,
                "games": len(set(decisions.game_of[mine].tolist())),
                "all": estimate(loss, "decisions", clip=LOSS),
                "reroll": estimate(loss[~is_row_choice], "decisions", clip=LOSS),
                "row": estimate(loss[is_row_choice], "decisions", clip=LOSS),
            }
        )
    return graded


# -- output ------------------------------------------------------------------------------------


def text_lines(report: dict, max_players: int = 20) -> list[str]:
    """The report as plain text lines."""
    lines = [
        f"{plural(report['games'], 'finished game')} under the {report['rules']} rules, "
        f"{plural(report['decisions'], 'decision')} "
        f"(filters: {', '.join(f'{k}={v}' for k, v in report['filters'].items() if v) or 'none'}; {imported_text(report)}); "
        f"95% intervals, normal approximation; none shown on n < {report['min_n']}"
    ]
    lines.append("")
    lines.append("Agents against the people they sat with (a tie counts 1/2; difference = agent - person)")
    lines += entry_lines(
        report["agents_vs_people"],
        "(no game with an agent)",
        lambda a: (
            f"{a['policy']}: {plural(a['games'], 'game')}, {plural(a['people'], 'person', 'people')}; "
            f"win rate {figure(a['win_rate'], percent=True)}; score difference {figure(a['score_difference'], 1)}"
        ),
    )
    population = report["people"]["population"]
    lines.append("")
    people, games = plural(population["people"], "person", "people"), plural(population["games"], "game")
    lines.append(f"People: expected points lost per decision ({people}, {games})")
    for key, title in (("all", "all decisions"), ("reroll", "re-roll choices"), ("row", "row choices")):
        lines.append(
            f"  {title}: over people {figure(population['over_people'][key])}; pooled {figure(population['pooled'][key])}"
        )
    lines.append("  by games played before (mean of each game's loss per decision):")
    for b in report["people"]["by_games_played"]:
        lines.append(f"    game {b['games_played']}: {figure(b['loss_per_decision'])}")
    hist = report["people"]["histogram"]
    if hist["n"]:
        lines.append(f"  histogram of people's loss per decision (n={plural(hist['n'], 'person', 'people')}):")
        for count, low, high in zip(hist["counts"], hist["edges"], hist["edges"][1:]):
            lines.append(f"    {low:6.3f}-{high:6.3f} {count:5d} {'#' * int(round(40 * count / max(max(hist['counts']), 1)))}")
    players = report["people"]["players"]
    lines.append(f"  per person ({len(players)}; first {min(len(players), max_players)} shown):")
    for p in players[:max_players]:
        lines.append(
            f"    {p['name']}: {plural(p['games'], 'game')}; "
            f"all {figure(p['all'])}; re-roll {figure(p['reroll'])}; row {figure(p['row'])}"
        )
    lines.append("")
    lines.append("Duplicate games, paired on the same dice (person - agent)")
    lines += entry_lines(
        report["duplicate"],
        "(no duplicate game)",
        lambda d: (
            f"vs {d['policy']}: {plural(d['games'], 'game')}, {plural(d['people'], 'person', 'people')}; "
            f"{figure(d['person_minus_agent'], 2)}"
        ),
    )
    lines.append("")
    lines.append("Agents graded on the same games (expected points lost per decision)")
    lines += entry_lines(
        report["agents_graded"],
        "(no agent decision)",
        lambda a: (
            f"{a['policy']}: {plural(a['games'], 'game')}; "
            f"all {figure(a['all'])}; re-roll {figure(a['reroll'])}; row {figure(a['row'])}"
        ),
    )
    from yacht_play.report.text import likeness_lines, rating_lines, skill_lines

    for section in (skill_lines(report, max_players), likeness_lines(report), rating_lines(report, max_players)):
        lines += ["", *section]
    return lines


def entry_lines(entries: list[dict], none: str, line) -> list[str]:
    """A section's lines, indented: ``line(entry)`` for each entry, or ``none`` when the section has none."""
    return [f"  {line(entry)}" for entry in entries] or [f"  {none}"]


def save_json(path, report: dict) -> None:
    """Write every figure of ``report`` as JSON, atomically (a crash leaves the old file or the new one)."""
    from yacht_env.atomic_files import write_atomically

    text = json.dumps(report, indent=2) + "\n"
    write_atomically(path, lambda handle: handle.write(text.encode()))


def save_plot(path, report: dict) -> None:
    """Six panels: agents' win rates, the histogram, loss by games played, people vs agents per decision, the people's
    temperatures and the ratings.
    """
    from yacht_play.figures import pyplot, save_png

    def bars(ax, labels, estimates, color):
        means = [e["mean"] if e["mean"] is not None else 0.0 for e in estimates]
        low = [m - e["low"] if e["low"] is not None else 0.0 for m, e in zip(means, estimates)]
        high = [e["high"] - m if e["high"] is not None else 0.0 for m, e in zip(means, estimates)]
        ax.bar(range(len(labels)), means, yerr=[low, high], capsize=4, color=color)
        ax.set_xticks(
            range(len(labels)),
            [f"{label}\nn={e['n']}" + ("" if e["low"] is not None else "\n(no CI)") for label, e in zip(labels, estimates)],
            fontsize=8,
        )

    fig, axes = pyplot().subplots(2, 3, figsize=(18, 8))
    wins = report["agents_vs_people"]
    bars(axes[0, 0], [a["policy"] for a in wins], [a["win_rate"] for a in wins], "tab:blue")
    axes[0, 0].axhline(0.5, color="gray", lw=0.8, ls="--")
    axes[0, 0].set_ylim(0, 1)
    axes[0, 0].set_title("Agents' win rate against the people (tie = 1/2), 95% CI")
    hist = report["people"]["histogram"]
    if hist["n"]:
        edges = np.array(hist["edges"])
        axes[0, 1].bar(edges[:-1], hist["counts"], width=np.diff(edges), align="edge", edgecolor="white")
    axes[0, 1].set_xlabel("expected points lost per decision")
    axes[0, 1].set_ylabel("people")
    axes[0, 1].set_title(f"People's loss per decision (n={hist['n']} people)")
    by = report["people"]["by_games_played"]
    bars(axes[1, 0], [b["games_played"] for b in by], [b["loss_per_decision"] for b in by], "tab:orange")
    axes[1, 0].set_xlabel("the person's game number")
    axes[1, 0].set_title("Loss per decision by games played, 95% CI")
    pooled = report["people"]["population"]["pooled"]["all"]
    graded = report["agents_graded"]
    bars(axes[1, 1], ["people"] + [a["policy"] for a in graded], [pooled] + [a["all"] for a in graded], "tab:green")
    axes[1, 1].set_title("Loss per decision on the same games, 95% CI")
    plot_skill_and_ratings(axes[0, 2], axes[1, 2], report)
    save_png(path, fig, dpi=100)


def plot_skill_and_ratings(skill_axes, rating_axes, report: dict) -> None:
    """Two panels: a histogram of the people's fitted temperature; the ratings with their bootstrap intervals."""
    hist = report["skill"]["population"]["histogram"]
    if hist["n"]:
        edges = np.array(hist["edges"])
        skill_axes.bar(edges[:-1], hist["counts"], width=np.diff(edges), align="edge", edgecolor="white", color="tab:purple")
    skill_axes.set_xlabel("fitted temperature T (points; 0 = optimal)")
    skill_axes.set_ylabel("people")
    skill_axes.set_title(f"People's skill, maximum-likelihood T (n={hist['n']} people)")
    players = report["ratings"]["players"][:25]
    means = [p["rating"]["mean"] for p in players]
    low = [m - (p["rating"]["low"] if p["rating"]["low"] is not None else m) for m, p in zip(means, players)]
    high = [(p["rating"]["high"] if p["rating"]["high"] is not None else m) - m for m, p in zip(means, players)]
    colors = ["tab:blue" if p["kind"] == "agent" else "tab:orange" for p in players]
    rating_axes.errorbar(means, range(len(players)), xerr=[low, high], fmt="none", ecolor="gray", capsize=3)
    rating_axes.scatter(means, range(len(players)), c=colors, zorder=3)
    rating_axes.set_yticks(range(len(players)), [f"{p['name']} (n={p['rating']['n']})" for p in players], fontsize=7)
    rating_axes.invert_yaxis()
    anchor = report["ratings"]["anchor"]
    rating_axes.set_title(f"Ratings (Bradley-Terry, {anchor['policy'] or 'mean'} = {anchor['rating']:g}), 95% bootstrap CI")


# -- command line ------------------------------------------------------------------------------


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


def check_date(option: str, text: str | None) -> str | None:
    """``text`` if it is an ISO 8601 date (or None), else ``ValueError`` naming ``option``."""
    from datetime import datetime

    if text is None:
        return None
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{option} {text!r} is not a date; use ISO 8601, e.g. 2026-11-01 or 2026-11-01T14:00") from None
    return text


def check_mode(option: str, text: str | None) -> str | None:
    """``text`` if it is a mode a person plays (or None), else ``ValueError`` naming ``option`` and the modes."""
    if text is not None and text not in HUMAN_MODES:
        raise ValueError(f"{option} {text!r} is not a mode; choose one of {', '.join(HUMAN_MODES)}")
    return text


def run(args) -> int:
    """Print the report of a database; write its JSON and plot when asked."""
    prog = "yacht report"
    from pathlib import Path

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
            args.player,
            args.rules,
            args.include_imported,
        )
        if "://" not in args.db and not Path(args.db).exists():
            raise ValueError(f"no database at {args.db!r} (yacht serve --db {args.db} creates it)")
        with store.database_errors(store.database_url(args.db)):  # a corrupted file: one line, not a traceback
            games = store.all_games(store.connect(args.db), finished_only=True)
        from agents.registry import check_policy_name

        for name in args.policy:
            check_policy_name(name)
        report = build_report(games, filters, extra_policies=args.policy)
    except (ValueError, store.DatabaseError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    from yacht_play.terminal_text import escaped_controls

    print("\n".join(escaped_controls(line) for line in text_lines(report)))  # names come from browsers
    if args.json:
        save_json(args.json, report)
    if args.plot:
        save_plot(args.plot, report)
    from yacht_play.report import tables

    try:
        if args.csv:
            tables.save_csv(args.csv, report)
        if args.latex:
            tables.save_latex(args.latex, report)
    except OSError as error:  # a folder that is a file, a path without write access: one line
        print(f"{prog}: cannot write the tables: {error.strerror or error} ({error.filename})", file=sys.stderr)
        return 2
    return 0
