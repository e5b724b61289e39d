"""The report page's rules picker, summary and first four cards (agents against people, people, duplicate games,
agents graded), from results made by hand, read back cell by cell."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.yacht_play.test_report_page_skill import Page, rows
from yacht_play.report.build import build_report
from yacht_play.report.filters import Filters
from yacht_play.report.page import (
    agents_section,
    duplicate_section,
    graded_section,
    people_section,
    report_main,
    rules_picker,
)
from yacht_play.report.results import (
    AgentAgainstPeople,
    AgentGraded,
    DuplicatePair,
    Estimate,
    GamesPlayedBin,
    Histogram,
    LossByChoice,
    PersonLoss,
)

GAMES, DECISIONS = "games", "decisions"


@pytest.fixture(scope="module")
def report():
    """The report of no game: every section empty, the section under test filled by hand."""
    return build_report([])


def loss(mean: float, n: int = 40) -> Estimate:
    return Estimate(mean, mean - 0.125, mean + 0.125, n, DECISIONS)


def test_the_rules_picker_links_each_rule_set_keeping_the_other_filters_and_marks_only_the_one_shown():
    picker = rules_picker(
        "yahtzee",
        [("yacht", "Yacht", 3), ("yahtzee", "Yahtzee <home>", 1), ("yatzy", "Yatzy", 2)],
        {"mode": "solitaire", "player": "ann & bob"},
    )
    links = re.findall(r"<a class='([^']*)'( aria-current='page')? href='([^']*)'>([^<]*)</a>", picker)
    kept = "?mode=solitaire&amp;player=ann+%26+bob&amp;rules="
    assert links == [
        ("pill", "", kept + "yacht", "Yacht (3 games)"),
        ("pill chosen", " aria-current='page'", kept + "yahtzee", "Yahtzee &lt;home&gt; (1 game)"),
        ("pill", "", kept + "yatzy", "Yatzy (2 games)"),
    ]
    assert picker.startswith("<nav class='rules-picker' aria-label='Rule set'><span class='muted'>Rules:</span> <a ")
    assert picker.endswith("</a></nav>") and picker.count("</a> <a ") == 2


def test_the_summary_gives_the_counts_the_filters_but_the_rule_set_and_the_optimum(report):
    page = Page(report_main(dataclasses.replace(report, games=1, decisions=26, optimal_expected_score=191.7651)))
    summary, note = page.paragraphs[:2]
    assert summary == (
        f"1 finished game under the {report.rules} rules, 26 decisions (filters: none; no imported game left out)."
    )
    assert note.endswith(
        f"none is shown on fewer than {report.min_n} values or over one person. Loss: expected points "
        "lost per decision against the exact optimum (191.77 points a game)."
    )
    filtered = dataclasses.replace(
        report, games=2, decisions=1, filters=Filters(since="2026-01-02", mode="duplicate", player="<ann>", rules="yacht")
    )
    assert Page(report_main(filtered)).paragraphs[0] == (
        f"2 finished games under the {report.rules} rules, 1 decision "
        "(filters: since=2026-01-02, mode=duplicate, player=<ann>; no imported game left out)."
    )


def test_the_page_is_the_summary_then_its_cards_in_order_with_the_picker_under_the_title(report):
    main = report_main(report, picker="<nav>picker</nav>")
    assert main.startswith("<section class='card'><h1>Agents and people</h1><nav>picker</nav><p>")
    headings = re.findall(r"<h2>([^<]*)</h2>", main)
    assert headings[:4] == [
        "Agents against the people they sat with",
        "People: expected points lost per decision (0 people, 0 games)",
        "Duplicate games, paired on the same dice",
        "Agents graded on the same games",
    ]
    assert headings[4].startswith("Skill") and len(headings) == 7


def test_the_agents_card_gives_each_agent_s_games_win_rate_and_score_difference_with_a_line_at_one_half(report):
    agents = (
        AgentAgainstPeople("greedy", 1, 1, Estimate(0.25, 0.125, 0.375, 1, GAMES), Estimate(-12.34, -15.0, -9.66, 1, GAMES)),
        AgentAgainstPeople("optimal", 12, 5, Estimate(0.625, 0.5, 0.75, 12, GAMES), Estimate(8.06, 1.0, 15.1, 12, GAMES)),
    )
    page = Page(agents_section(dataclasses.replace(report, agents_vs_people=agents)))
    (table,) = page.tables
    assert rows(table) == [
        [
            ("agent", "greedy", ""),
            ("played", "1 game, 1 person", ""),
            ("win rate", "25.0%", "[12.5%, 37.5%] n=1"),
            ("agent - person", "-12.3", "[-15.0, -9.7] n=1"),
        ],
        [
            ("agent", "optimal", ""),
            ("played", "12 games, 5 people", ""),
            ("win rate", "62.5%", "[50.0%, 75.0%] n=12"),
            ("agent - person", "8.1", "[1.0, 15.1] n=12"),
        ],
    ]
    (chart,) = page.charts
    assert chart["description"] == "each agent's win rate against the people, with its 95% interval; the dashed line is 50%"
    assert chart["bars"] == 2
    # the dashed line halfway between the chart's 0% and 100%
    section = agents_section(dataclasses.replace(report, agents_vs_people=agents))
    grid = {label: float(x) for x, label in re.findall(r"<text x='([0-9.]+)'[^>]*>(0%|100%)</text>", section)}
    (dashed,) = chart["dashed"]
    assert dashed == pytest.approx((grid["0%"] + grid["100%"]) / 2, abs=0.06)


def test_the_agents_card_without_an_agent_says_so_and_draws_nothing(report):
    page = Page(agents_section(report))
    assert page.tables == [] and page.charts == [] and page.paragraphs == ["No game with an agent."]


def test_the_people_card_gives_the_population_each_bin_with_games_and_each_person(report):
    over, pooled = LossByChoice(loss(1.5), loss(1.25), loss(2.0)), LossByChoice(loss(1.375), loss(1.125), loss(1.875))
    population = dataclasses.replace(report.people.population, people=2, games=3, over_people=over, pooled=pooled)
    players = (
        PersonLoss("ann", 2, loss(1.0), loss(0.75), loss(1.5)),
        PersonLoss("<bob>", 1, loss(2.0), Estimate(None, None, None, 0, DECISIONS, "no re-roll"), loss(2.25)),
    )
    by_games = (
        GamesPlayedBin("1", loss(1.75)),
        GamesPlayedBin("2", Estimate(None, None, None, 0, DECISIONS)),  # no game in this bin: left out
        GamesPlayedBin("3-4", loss(0.5)),
    )
    people = dataclasses.replace(
        report.people,
        population=population,
        players=players,
        histogram=Histogram((0.0, 1.0, 2.0, 3.0), (1, 0, 1), 2),
        by_games_played=by_games,
    )
    page = Page(people_section(dataclasses.replace(report, people=people)))
    assert page.heading == "People: expected points lost per decision (2 people, 3 games)"
    overall, by_number, each = page.tables
    assert rows(overall) == [
        [("decisions", "all", ""), ("over people", "1.500", "[1.375, 1.625] n=40"), ("pooled", "1.375", "[1.250, 1.500] n=40")],
        [
            ("decisions", "re-roll choices", ""),
            ("over people", "1.250", "[1.125, 1.375] n=40"),
            ("pooled", "1.125", "[1.000, 1.250] n=40"),
        ],
        [
            ("decisions", "row choices", ""),
            ("over people", "2.000", "[1.875, 2.125] n=40"),
            ("pooled", "1.875", "[1.750, 2.000] n=40"),
        ],
    ]
    assert rows(by_number) == [
        [("game number", "1", ""), ("loss per decision", "1.750", "[1.625, 1.875] n=40")],
        [("game number", "3-4", ""), ("loss per decision", "0.500", "[0.375, 0.625] n=40")],
    ]
    assert rows(each) == [
        [
            ("name", "ann", ""),
            ("games", "2", ""),
            ("all", "1.000", "[0.875, 1.125] n=40"),
            ("re-roll", "0.750", "[0.625, 0.875] n=40"),
            ("row", "1.500", "[1.375, 1.625] n=40"),
        ],
        [
            ("name", "<bob>", ""),
            ("games", "1", ""),
            ("all", "2.000", "[1.875, 2.125] n=40"),
            ("re-roll", "–", "no re-roll"),
            ("row", "2.250", "[2.125, 2.375] n=40"),
        ],
    ]
    assert [c["number"] for c in each[0]] == [False, True, True, True, True]
    histogram, by_number_chart = page.charts
    assert histogram["description"] == "a histogram of the people's loss per decision" and histogram["bars"] == 3
    assert by_number_chart["description"] == "the loss per decision by the person's game number, with 95% intervals"
    assert by_number_chart["bars"] == 2 and by_number_chart["dashed"] == []


def test_the_people_card_without_a_person_says_so_and_draws_nothing(report):
    page = Page(people_section(report))
    assert page.charts == [] and page.paragraphs == ["No person yet."] * 3


def test_the_duplicate_card_gives_the_person_s_total_minus_the_agent_s_to_two_places(report):
    pairs = (DuplicatePair("optimal", 3, 2, Estimate(-4.567, -9.126, -0.0049, 3, GAMES)),)
    page = Page(duplicate_section(dataclasses.replace(report, duplicate=pairs)))
    assert rows(page.tables[0]) == [
        [("agent", "optimal", ""), ("played", "3 games, 2 people", ""), ("person - agent", "-4.57", "[-9.13, -0.00] n=3")]
    ]
    assert Page(duplicate_section(report)).paragraphs == ["No duplicate game."]


def test_the_graded_card_puts_the_people_first_then_each_agent_on_the_same_games(report):
    pooled = dataclasses.replace(report.people.population.pooled, all=loss(1.5))
    people = dataclasses.replace(report.people, population=dataclasses.replace(report.people.population, pooled=pooled))
    graded = (
        AgentGraded("greedy", 4, loss(0.75), loss(0.5), loss(1.0)),
        AgentGraded("optimal", 4, loss(0.0), loss(0.0), loss(0.0)),
    )
    section = graded_section(dataclasses.replace(report, people=people, agents_graded=graded))
    page = Page(section)
    assert rows(page.tables[0]) == [
        [
            ("agent", "greedy", ""),
            ("games", "4", ""),
            ("all", "0.750", "[0.625, 0.875] n=40"),
            ("re-roll", "0.500", "[0.375, 0.625] n=40"),
            ("row", "1.000", "[0.875, 1.125] n=40"),
        ],
        [
            ("agent", "optimal", ""),
            ("games", "4", ""),
            ("all", "0.000", "[-0.125, 0.125] n=40"),
            ("re-roll", "0.000", "[-0.125, 0.125] n=40"),
            ("row", "0.000", "[-0.125, 0.125] n=40"),
        ],
    ]
    assert [c["number"] for c in page.tables[0][0]] == [False, True, True, True, True]
    (chart,) = page.charts
    assert chart["bars"] == 3
    assert [text for text in chart["texts"] if text in ("people", "greedy", "optimal")] == ["people", "greedy", "optimal"]
    assert Page(graded_section(report)).paragraphs == ["No agent decision."]
