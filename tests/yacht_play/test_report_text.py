"""The report's plain text, written from results made by hand: figures, temperatures, the likeness and the ratings."""

from __future__ import annotations

import dataclasses

import pytest

from yacht_play.report.build import build_report
from yacht_play.report.filters import Filters
from yacht_play.report.results import (
    AgentAgainstPeople,
    AgentPrediction,
    Anchor,
    BandLikeness,
    DuplicatePair,
    Estimate,
    GamesPlayedBin,
    Histogram,
    PersonLoss,
    PersonSkill,
    PolicyLikeness,
    PolicyNotMeasured,
    RatedPlayer,
    TemperatureFit,
)
from yacht_play.report.text import (
    figure,
    imported_text,
    likeness_lines,
    people_lines,
    plural,
    rating_lines,
    skill_lines,
    temperature,
    text_lines,
)

GAMES = "games"


def test_a_figure_gives_its_mean_and_interval_with_n_or_says_why_it_has_none():
    assert figure(Estimate(0.5, 0.25, 0.75, 12, GAMES), percent=True) == "50.0% [25.0%, 75.0%] (n=12)"
    assert figure(Estimate(0.123, None, None, 2, GAMES, "n < 10"), percent=True) == "12.3% (n=2; n < 10)"
    assert figure(Estimate(1.23456, 1.0, 1.5, 30, GAMES), digits=2) == "1.23 [1.00, 1.50] (n=30)"
    assert figure(Estimate(None, None, None, 0, GAMES, "no game")) == "- (no game)"


def test_a_temperature_writes_an_interval_without_an_upper_end_as_such():
    # a person who never strays far from the optimum has no finite upper end to the interval of T
    assert temperature(Estimate(1.5, 0.25, None, 7, "decisions")) == "1.500 [0.250, no upper end] (n=7)"
    assert temperature(Estimate(1.5, 0.25, 2.0, 7, "decisions")) == "1.500 [0.250, 2.000] (n=7)"
    assert temperature(Estimate(1.5, None, None, 3, "decisions", "n < 10")) == "1.500 (n=3; n < 10)"
    assert temperature(Estimate(None, None, None, 0, "decisions", "no decision")) == "- (no decision)"


@pytest.fixture(scope="module")
def report():
    """The report of no game: every section empty, the sections under test filled by hand."""
    return build_report([])


def test_the_likeness_section_gives_each_policy_overall_and_per_band_with_people_and_names_the_unmeasured(report):
    percent = Estimate(0.5, 0.25, 0.75, 40, "decisions")
    likelihood = Estimate(-1.25, -1.5, -1.0, 40, "decisions")
    bands = (
        BandLikeness("expert", 2, percent, likelihood),
        BandLikeness("novice", 0, percent, None),  # nobody in the band: no line
        BandLikeness("casual", 1, percent, None),
    )
    likeness = (
        PolicyLikeness("softmax:fit", 40, percent, likelihood, bands, temperature=1.234),
        PolicyNotMeasured("win", 40, "plays only at a table"),  # and the policies after it are still listed
        PolicyLikeness("greedy", 40, percent, None, ()),
    )
    lines = likeness_lines(dataclasses.replace(report, likeness=likeness))
    assert lines[1:] == [
        "  softmax:fit (T=1.23): top-1 agreement 50.0% [25.0%, 75.0%] (n=40); mean log-likelihood -1.250 [-1.500, -1.000] (n=40)",
        "    expert (2 people): 50.0% [25.0%, 75.0%] (n=40); -1.250 [-1.500, -1.000] (n=40)",
        "    casual (1 person): 50.0% [25.0%, 75.0%] (n=40)",
        "  win: not measured (plays only at a table)",
        "  greedy: top-1 agreement 50.0% [25.0%, 75.0%] (n=40)",
    ]
    assert likeness_lines(dataclasses.replace(report, likeness=()))[1:] == ["  (no decision of a person)"]


def test_the_ratings_show_every_agent_and_only_the_first_people_up_to_the_limit_by_rank(report):
    rating = Estimate(1500.0, 1400.0, 1600.0, 9, GAMES)
    players = (
        RatedPlayer("ann", "human", rating),
        RatedPlayer("greedy", "agent", rating),
        RatedPlayer("bob", "human", rating),
        RatedPlayer("cy", "human", rating),
        RatedPlayer("random", "agent", rating),
    )
    ratings = dataclasses.replace(report.ratings, players=players)
    lines = [line for line in rating_lines(dataclasses.replace(report, ratings=ratings), max_players=2) if line[2:3].isdigit()]
    assert [line.split(":")[0] for line in lines] == [
        "  1. ann (person)",
        "  2. greedy (agent)",
        "  3. bob (person)",
        "  5. random (agent)",  # cy, the third person, is past the limit of two
    ]
    assert lines[0] == "  1. ann (person): 1500 [1400, 1600] (n=9)"


def test_the_ratings_header_names_the_anchor_or_says_the_ratings_average_it(report):
    for anchor, said in ((Anchor("greedy", 1000.0), "greedy = 1000;"), (Anchor(None, 1000.0), "mean = 1000 (no greedy);")):
        ratings = dataclasses.replace(report.ratings, anchor=anchor)
        first = rating_lines(dataclasses.replace(report, ratings=ratings))[0]
        assert first.startswith(f"Ratings: Bradley-Terry on the Elo scale, {said} 95% bootstrap intervals"), first


def test_the_people_histogram_gives_each_bin_between_its_two_edges(report):
    # bars of 40 marks for the fullest bin, the others in proportion to the nearest mark: 40 x 2/3 = 26.7, so 27
    people = dataclasses.replace(report.people, histogram=Histogram((0.0, 0.5, 1.0), (3, 2), 5))
    lines = people_lines(dataclasses.replace(report, people=people))
    at = lines.index("  histogram of people's loss per decision (n=5 people):")
    assert lines[at + 1 : at + 3] == ["     0.000- 0.500     3 " + "#" * 40, "     0.500- 1.000     2 " + "#" * 27]


def test_a_count_takes_the_singular_noun_only_when_it_is_one():
    assert [plural(n, "game") for n in (0, 1, 2)] == ["0 games", "1 game", "2 games"]
    assert [plural(n, "person", "people") for n in (0, 1, 2)] == ["0 people", "1 person", "2 people"]


def test_the_imported_games_line_says_what_was_counted_in_or_left_out():
    report = build_report([])
    assert imported_text(report) == "no imported game left out"
    assert imported_text(dataclasses.replace(report, imported_games_left_out=2)) == (
        "2 imported games left out (--include-imported counts them)"
    )
    counted = dataclasses.replace(report, filters=Filters(include_imported=True), imported_games=1, imported_games_left_out=3)
    assert imported_text(counted) == "1 imported game counted in"


def test_each_list_of_people_shows_the_first_twenty_and_says_how_many_there_are(report):
    names = [f"p{k:02d}" for k in range(21)]
    loss = Estimate(0.5, 0.25, 0.75, 30, "decisions")
    people = tuple(PersonLoss(name, 2, loss, loss, loss) for name in names)
    unfit = TemperatureFit(None, None, None, 4, "decisions", "no finite T")
    skills = tuple(PersonSkill(name, 2, unfit, "unrated") for name in names)
    rated = tuple(RatedPlayer(name, "human", Estimate(1500.0, 1400.0, 1600.0, 2, GAMES)) for name in names)
    bins = (GamesPlayedBin("1", loss), GamesPlayedBin("2-3", loss))
    predictions = (AgentPrediction("greedy", 12, 0.625, 0.5),)
    report = dataclasses.replace(
        report,
        people=dataclasses.replace(report.people, players=people, by_games_played=bins),
        skill=dataclasses.replace(report.skill, players=skills),
        ratings=dataclasses.replace(report.ratings, players=rated, agents_vs_people=predictions),
    )
    lines = text_lines(report)
    assert "  per person (21; first 20 shown):" in lines and lines.count("  per person (21; first 20 shown):") == 2
    text = "\n".join(lines)
    loss_line = "    {}: 2 games; all 0.500 [0.250, 0.750] (n=30); re-roll"
    skill_line = "    {}: T - (no finite T); no finite T; unrated"
    rating_line = "  {}. {} (person): 1500 [1400, 1600] (n=2)"
    assert loss_line.format("p19") in text and skill_line.format("p19") + "\n" in text and rating_line.format(20, "p19") in text
    assert "p20" not in text  # the twenty-first person, in none of the three lists
    for section in (people_lines, skill_lines, rating_lines):  # each section alone keeps to the same limit
        assert "p19" in "\n".join(section(report)) and "p20" not in "\n".join(section(report))
    assert "    game 1: 0.500 [0.250, 0.750] (n=30)" in lines and "    game 2-3: 0.500 [0.250, 0.750] (n=30)" in lines
    assert "  greedy against people: predicted score 62.5%, observed 50.0% (n=12)" in lines


def test_agents_against_people_give_the_score_difference_to_a_tenth_and_duplicates_to_a_hundredth(report):
    rate, points = Estimate(0.625, 0.5, 0.75, 8, GAMES), Estimate(12.345, 3.21, 21.5, 8, GAMES)
    lines = text_lines(
        dataclasses.replace(
            report,
            agents_vs_people=(AgentAgainstPeople("greedy", 8, 3, rate, points),),
            duplicate=(DuplicatePair("greedy", 8, 3, points),),
        )
    )
    assert ("  greedy: 8 games, 3 people; win rate 62.5% [50.0%, 75.0%] (n=8); score difference 12.3 [3.2, 21.5] (n=8)") in lines
    assert "  vs greedy: 8 games, 3 people; 12.35 [3.21, 21.50] (n=8)" in lines
