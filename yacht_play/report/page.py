"""The population report (:func:`yacht_play.report.build.build_report`) as the content of a page: cards of tables and
charts, a picker of the rule sets to report on, every figure with its ``n``.

A figure's interval and ``n`` sit on a small second line of its cell, and a missing interval says so in a few
words (its full reason in the cell's tooltip), so that the cells stay short. On a narrow screen each table row
stacks into label/value lines (``data-label``) instead of running off the screen. Every text from the database
goes through ``html.escape``.
"""

from __future__ import annotations

from yacht_play.report.page_parts import AGENT_COLOR, PEOPLE_COLOR, card, cell, e, html_table, plain
from yacht_play.report.results import Report
from yacht_play.report.svg_charts import histogram_chart, interval_chart
from yacht_play.report.text import imported_text, plural


def rules_picker(rules: str, choices: list[tuple[str, str, int]], query: dict[str, str]) -> str:
    """Links to the report under each rule set (``(name, title, games)``), the other filters kept."""
    from urllib.parse import urlencode

    links = []
    for name, title, games in choices:
        label = f"{title} ({plural(games, 'game')})"
        chosen = " chosen' aria-current='page" if name == rules else ""
        links.append(f"<a class='pill{chosen}' href='?{e(urlencode({**query, 'rules': name}))}'>{e(label)}</a>")
    return f"<nav class='rules-picker' aria-label='Rule set'><span class='muted'>Rules:</span> {' '.join(links)}</nav>"


def report_main(report: Report, picker: str = "") -> str:
    """The report's content: a summary card, then agents against people, people, duplicate games, agents graded."""
    filters = ", ".join(f"{k}={v}" for k, v in report.filters.named_values() if v and k != "rules") or "none"
    summary = (
        f"<p>{plural(report.games, 'finished game')} under the {e(report.rules)} rules, "
        f"{plural(report.decisions, 'decision')} "
        f"(filters: {e(filters)}; {e(imported_text(report, '?include_imported=1'))}).</p>"
        f"<p class='muted small'>95% intervals, normal approximation; none is shown on fewer than {report.min_n} "
        "values or over one person. Loss: expected points lost per decision against the exact optimum "
        f"({report.optimal_expected_score:.2f} points a game).</p>"
    )
    return "\n".join(
        [
            f"<section class='card'><h1>Agents and people</h1>{picker}{summary}</section>",
            agents_section(report),
            people_section(report),
            duplicate_section(report),
            graded_section(report),
            *skill_likeness_and_ratings(report),
        ]
    )


def skill_likeness_and_ratings(report: Report) -> list[str]:
    """The cards of the people's skill, each policy's likeness to them, and the ratings."""
    from yacht_play.report.page_skill import likeness_section, ratings_section, skill_section

    return [skill_section(report), likeness_section(report), ratings_section(report)]


def agents_section(report: Report) -> str:
    """Each agent's win rate against the people it sat with, and the score difference."""
    agents = report.agents_vs_people
    rows = [
        plain(a.policy, "agent")
        + plain(f"{plural(a.games, 'game')}, {plural(a.people, 'person', 'people')}", "played")
        + cell(a.win_rate, "win rate", percent=True)
        + cell(a.score_difference, "agent - person", 1)
        for a in agents
    ]
    chart = ""
    if agents:
        chart = interval_chart(
            [(a.policy, a.win_rate) for a in agents],
            "each agent's win rate against the people, with its 95% interval; the dashed line is 50%",
            AGENT_COLOR,
            percent=True,
            reference=0.5,
        )
    headers = ["agent", "played", "win rate (tie = 1/2)", "score difference (agent - person)"]
    return card(
        "Agents against the people they sat with",
        chart,
        html_table("Agents against people", headers, rows, "No game with an agent."),
    )


def people_section(report: Report) -> str:
    """The people's loss per decision: over people and pooled, its histogram, by games played, per person."""
    population = report.people.population
    overall = [
        plain(title, "decisions") + cell(over_people, "over people") + cell(pooled, "pooled")
        for title, over_people, pooled in (
            ("all", population.over_people.all, population.pooled.all),
            ("re-roll choices", population.over_people.reroll, population.pooled.reroll),
            ("row choices", population.over_people.row, population.pooled.row),
        )
    ]
    histogram = report.people.histogram
    by_games = [b for b in report.people.by_games_played if b.loss_per_decision.n]  # the bins with games
    per_person = [
        plain(p.name, "name")
        + plain(p.games, "games", number=True)
        + cell(p.all, "all")
        + cell(p.reroll, "re-roll")
        + cell(p.row, "row")
        for p in report.people.players
    ]
    title = f"People: expected points lost per decision ({plural(population.people, 'person', 'people')}, "
    return card(
        title + f"{plural(population.games, 'game')})",
        html_table("The people's loss per decision", ["decisions", "over people", "pooled over decisions"], overall, ""),
        "<h3>Each person's loss per decision</h3>",
        histogram_chart(histogram.edges, histogram.counts, "a histogram of the people's loss per decision", PEOPLE_COLOR)
        if histogram.n
        else "<p class='muted'>No person yet.</p>",
        "<h3>By the games played before</h3>",
        interval_chart(
            [(f"game {b.games_played}", b.loss_per_decision) for b in by_games],
            "the loss per decision by the person's game number, with 95% intervals",
            PEOPLE_COLOR,
        )
        if by_games
        else "",
        html_table(
            "Loss by games played",
            ["game number", "loss per decision"],
            [plain(b.games_played, "game number") + cell(b.loss_per_decision, "loss per decision") for b in by_games],
            "No person yet.",
        ),
        "<h3>Per person</h3>",
        html_table("Per person", ["name", "games", "all", "re-roll", "row"], per_person, "No person yet."),
    )


def duplicate_section(report: Report) -> str:
    """Duplicate games: the person's total minus the agent's on the same dice."""
    rows = [
        plain(d.policy, "agent")
        + plain(f"{plural(d.games, 'game')}, {plural(d.people, 'person', 'people')}", "played")
        + cell(d.person_minus_agent, "person - agent", 2)
        for d in report.duplicate
    ]
    return card(
        "Duplicate games, paired on the same dice",
        html_table("Duplicate games", ["agent", "played", "person - agent"], rows, "No duplicate game."),
    )


def graded_section(report: Report) -> str:
    """The agents graded on their own decisions in the same games, next to the people."""
    graded = report.agents_graded
    pooled = report.people.population.pooled.all
    rows = [
        plain(a.policy, "agent")
        + plain(a.games, "games", number=True)
        + cell(a.all, "all")
        + cell(a.reroll, "re-roll")
        + cell(a.row, "row")
        for a in graded
    ]
    chart = interval_chart(
        [("people", pooled)] + [(a.policy, a.all) for a in graded],
        "the loss per decision of the people and of each agent on the same games, with 95% intervals",
        AGENT_COLOR,
    )
    return card(
        "Agents graded on the same games",
        chart,
        html_table("Agents graded", ["agent", "games", "all", "re-roll", "row"], rows, "No agent decision."),
    )
