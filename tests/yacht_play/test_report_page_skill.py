"""The report page's skill, likeness and ratings cards, from results made by hand, read back cell by cell."""

from __future__ import annotations

import dataclasses
from html.parser import HTMLParser

import pytest

from yacht_play.report.build import build_report
from yacht_play.report.page_parts import cell
from yacht_play.report.page_skill import likeness_section, ratings_section, skill_section, temperature_cell
from yacht_play.report.results import (
    Anchor,
    BandLikeness,
    Estimate,
    GamesOfMode,
    Histogram,
    PersonSkill,
    PolicyLikeness,
    PolicyNotMeasured,
    RatedPlayer,
    Ratings,
    SkillBand,
    TemperatureFit,
)

DECISIONS = "decisions"


class Page(HTMLParser):
    """A card read back: each table's rows as ``(data-label, number?, main text, small text, title)`` cells, each
    chart's parts, and the card's paragraphs."""

    def __init__(self, markup: str):
        super().__init__()
        self.tables: list[list[list[dict]]] = []
        self.charts: list[dict] = []
        self.paragraphs: list[str] = []
        self.heading = ""
        self._cell: dict | None = None
        self._in: list[str] = []
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self._in.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables and "thead" not in self._in:
            self.tables[-1].append([])
        elif tag == "td":
            self._cell = {
                "label": attributes["data-label"],
                "number": attributes.get("class") == "num",
                "text": "",
                "small": "",
                "title": attributes.get("title"),
            }
            self.tables[-1][-1].append(self._cell)
        elif tag == "svg":
            self.charts.append({"description": attributes["aria-label"], "circles": 0, "bars": 0, "dashed": [], "texts": []})
        elif tag in ("circle", "rect") and self.charts and "svg" in self._in:
            self.charts[-1]["circles" if tag == "circle" else "bars"] += 1
        elif tag == "line" and "stroke-dasharray" in attributes:
            self.charts[-1]["dashed"].append(float(attributes["x1"]))
        elif tag == "p":
            self.paragraphs.append("")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag):
        while self._in and self._in.pop() != tag:
            pass
        if tag == "td":
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["small" if "small" in self._in else "text"] += data
        elif "text" in self._in and "title" not in self._in:
            self.charts[-1]["texts"].append(data)
        elif self._in and self._in[-1] == "h2":
            self.heading += data
        elif "p" in self._in:
            self.paragraphs[-1] += data


def rows(table: list[list[dict]]) -> list[list[tuple[str, str, str]]]:
    """A table's cells as ``(label, text, small)``."""
    return [[(c["label"], c["text"], c["small"]) for c in row] for row in table]


@pytest.fixture(scope="module")
def report():
    """The report of no game: every section empty, the section under test filled by hand."""
    return build_report([])


def test_a_temperature_cell_says_when_there_is_no_finite_temperature_or_no_upper_end():
    none = Page("<table><tr>" + temperature_cell(TemperatureFit(None, None, None, 4, DECISIONS, "always <optimal>"), "T"))
    (only,) = none.tables[0][0]
    assert (only["text"], only["small"], only["title"], only["number"]) == ("–", "no finite T", "always <optimal>", True)
    open_ended = Page("<table><tr>" + temperature_cell(TemperatureFit(1.5, 0.25, None, 7, DECISIONS), "T"))
    assert rows(open_ended.tables[0]) == [[("T", "1.500", "[0.250, no upper end] n=7")]]
    # with both ends, or with neither (too few decisions), it is a figure's cell like any other
    for fit in (TemperatureFit(1.5, 0.25, 2.0, 7, DECISIONS), TemperatureFit(1.5, None, None, 3, DECISIONS, "n < 10")):
        assert temperature_cell(fit, "T") == cell(fit, "T")


def skill_of(report, median, histogram_n):
    population = dataclasses.replace(
        report.skill.population,
        people=3,
        median=median,
        pooled=TemperatureFit(0.75, 0.5, 1.0, 90, DECISIONS),
        bands=(SkillBand("expert", 2), SkillBand("novice", 1)),
        histogram=Histogram((0.0, 1.0, 2.0), (2, 1), histogram_n),
    )
    players = (
        PersonSkill("ann", 4, TemperatureFit(0.5, 0.25, 0.75, 40, DECISIONS), "expert"),
        PersonSkill("bob", 1, TemperatureFit(None, None, None, 10, DECISIONS, "no finite T"), "novice"),
    )
    return dataclasses.replace(report, skill=dataclasses.replace(report.skill, players=players, population=population))


def test_the_skill_card_gives_the_population_the_bands_and_each_person_in_order(report):
    page = Page(skill_section(skill_of(report, 1.23456, 3)))
    assert page.heading == "Skill: each person's temperature T (3 people)"
    population, bands, people = page.tables
    assert rows(population) == [
        [("figure", "pooled over decisions", ""), ("T", "0.750", "[0.500, 1.000] n=90")],
        [("figure", "median over people", ""), ("T", "1.235", "")],
    ]
    assert rows(bands) == [[("band", "expert", ""), ("people", "2", "")], [("band", "novice", ""), ("people", "1", "")]]
    assert rows(people) == [
        [("name", "ann", ""), ("games", "4", ""), ("T", "0.500", "[0.250, 0.750] n=40"), ("band", "expert", "")],
        [("name", "bob", ""), ("games", "1", ""), ("T", "–", "no finite T"), ("band", "novice", "")],
    ]
    # counts and figures are numbers (right-aligned, and read as such), names and bands are text
    numbers = [[c["number"] for c in row] for table in page.tables for row in table]
    assert numbers == [[False, True]] * 4 + [[False, True, True, False]] * 2
    (histogram,) = page.charts
    assert histogram["description"] == "a histogram of the people's fitted temperature" and histogram["bars"] == 2


def test_the_skill_card_without_a_finite_median_or_a_histogram_says_so_and_draws_nothing(report):
    page = Page(skill_section(skill_of(report, None, 0)))
    assert rows(page.tables[0])[1] == [("figure", "median over people", ""), ("T", "–", "")]
    assert page.charts == []


def likeness_of(report, likeness):
    return dataclasses.replace(report, likeness=likeness)


def test_the_likeness_card_gives_each_policy_overall_then_each_band_with_people(report):
    top1 = Estimate(0.5, 0.25, 0.75, 40, DECISIONS)
    likelihood = Estimate(-1.25, -1.5, -1.0, 40, DECISIONS)
    bands = (
        BandLikeness("expert", 2, Estimate(0.625, 0.5, 0.75, 30, DECISIONS), likelihood),
        BandLikeness("novice", 0, top1, None),  # nobody in the band: no row
        BandLikeness("casual", 1, Estimate(0.25, 0.0, 0.5, 10, DECISIONS), None),
    )
    likeness = (
        PolicyLikeness("softmax:fit", 40, top1, likelihood, bands, temperature=1.234),
        PolicyNotMeasured("win", 40, "plays only at a table"),
        PolicyLikeness("greedy", 40, Estimate(0.75, 0.5, 1.0, 40, DECISIONS), None, ()),
    )
    page = Page(likeness_section(likeness_of(report, likeness)))
    (table,) = page.tables
    assert rows(table) == [
        [
            ("policy", "softmax:fit (T=1.23)", ""),
            ("band", "all", ""),
            ("top-1", "50.0%", "[25.0%, 75.0%] n=40"),
            ("log-likelihood", "-1.250", "[-1.500, -1.000] n=40"),
        ],
        [
            ("policy", "softmax:fit (T=1.23)", ""),
            ("band", "expert", ""),
            ("top-1", "62.5%", "[50.0%, 75.0%] n=30"),
            ("log-likelihood", "-1.250", "[-1.500, -1.000] n=40"),
        ],
        [
            ("policy", "softmax:fit (T=1.23)", ""),
            ("band", "casual", ""),
            ("top-1", "25.0%", "[0.0%, 50.0%] n=10"),
            ("log-likelihood", "–", ""),
        ],
        [("policy", "greedy", ""), ("band", "all", ""), ("top-1", "75.0%", "[50.0%, 100.0%] n=40"), ("log-likelihood", "–", "")],
    ]
    assert page.paragraphs == ["win: not measured (plays only at a table)"]
    (chart,) = page.charts
    assert chart["bars"] == 2  # the measured policies only, on a scale of shares
    assert chart["texts"][-4:] == ["softmax:fit (…", "50.0%", "greedy", "75.0%"]
    assert "100%" in chart["texts"]


def test_a_likeness_card_of_policies_none_measured_has_no_chart_and_no_table(report):
    page = Page(likeness_section(likeness_of(report, (PolicyNotMeasured("win", 0, "plays only at a table"),))))
    assert page.tables == [] and page.charts == []
    assert page.paragraphs == ["No decision of a person.", "win: not measured (plays only at a table)"]


def ratings_of(report, players, anchor, modes=()):
    ratings = Ratings("Bradley-Terry", "Elo", anchor, 12, 20, 200, tuple(players), games_by_mode=tuple(modes))
    return dataclasses.replace(report, ratings=ratings)


def rated(name, kind, mean):
    return RatedPlayer(name, kind, Estimate(mean, mean - 40.0, mean + 40.0, 12, "games"))


def test_the_ratings_card_ranks_each_player_as_an_agent_or_a_person_on_whole_points(report):
    players = [rated("optimal", "agent", 1612.4), rated("ann", "human", 1500.0), rated("greedy", "agent", 1387.6)]
    page = Page(ratings_section(ratings_of(report, players, Anchor("greedy", 1387.6), [GamesOfMode("table", 12)])))
    (table,) = page.tables
    assert rows(table) == [
        [("rank", "1", ""), ("name", "optimal", ""), ("kind", "agent", ""), ("rating", "1612", "[1572, 1652] n=12")],
        [("rank", "2", ""), ("name", "ann", ""), ("kind", "person", ""), ("rating", "1500", "[1460, 1540] n=12")],
        [("rank", "3", ""), ("name", "greedy", ""), ("kind", "agent", ""), ("rating", "1388", "[1348, 1428] n=12")],
    ]
    assert [c["number"] for c in table[0]] == [True, False, False, True]
    (paragraph,) = page.paragraphs
    assert paragraph.startswith("Bradley-Terry on the Elo scale, greedy = 1387.6; 95% bootstrap intervals over 12 games (200")
    assert paragraph.endswith(". Games rated: 12 table.")


def test_the_ratings_chart_marks_the_anchor_s_rating_and_shows_the_first_thirty(report):
    players = [rated(f"p{i:02}", "human", 1800.0 - 10 * i) for i in range(31)]
    anchored = Page(ratings_section(ratings_of(report, players, Anchor("p30", 1500.0))))
    (chart,) = anchored.charts
    assert chart["circles"] == 30 and "p29" in chart["texts"] and "p30" not in chart["texts"]
    assert len(chart["dashed"]) == 1
    assert len(anchored.tables[0]) == 31  # the table lists everyone
    unanchored = Page(ratings_section(ratings_of(report, players[:30], Anchor(None, 1650.0))))
    assert "on the Elo scale, the mean = 1650; " in unanchored.paragraphs[0]
    assert unanchored.charts[0]["circles"] == 30 and unanchored.charts[0]["dashed"] == []  # the mean is no one's


def test_a_ratings_card_of_no_game_has_no_chart(report):
    page = Page(ratings_section(ratings_of(report, [], Anchor(None, 1500.0))))
    assert page.charts == [] and page.tables == []
    assert page.paragraphs[-1] == "No game at a table yet."
