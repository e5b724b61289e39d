"""The report's plot (:func:`yacht_play.report.plot.save_plot`): each panel draws its figures where its title says, with
each 95% interval from the mean down to ``low`` and up to ``high``, on a small report built here."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from yacht_play.records import GameRecord
from yacht_play.report.filters import Filters
from yacht_play.report.plot import save_plot
from yacht_play.report.ratings import rate
from yacht_play.report.results import (
    AgentAgainstPeople,
    AgentGraded,
    Anchor,
    Estimate,
    GamesPlayedBin,
    Histogram,
    LossByChoice,
    PeopleLoss,
    PeoplePopulation,
    RatedPlayer,
    Ratings,
    Report,
    Skill,
    SkillPopulation,
    TemperatureFit,
)

pytest.importorskip("matplotlib", reason="the plot needs matplotlib")


def figure_of(mean, low=None, high=None, n=30) -> Estimate:
    """A figure as the report holds it: a mean with its interval (none: ``low`` and ``high`` None) and ``n``."""
    return Estimate(mean, low, high, n, "games")


def rated(index: int, low=-5.0, high=7.0) -> RatedPlayer:
    """The ``index``-th rated player: greedy first (an agent), then people, each 10 points below the last."""
    mean = 1500.0 - 10 * index
    interval = (None, None) if low is None else (mean + low, mean + high)
    return RatedPlayer(
        "greedy" if index == 0 else f"person {index}",
        "agent" if index == 0 else "human",
        Estimate(mean, *interval, n=10 + index, unit="games"),
    )


NOTHING = figure_of(None, n=0)  # a figure the plot does not read
NO_FIT = TemperatureFit(None, None, None, 0, "decisions")
REPORT = Report(
    schema=1,
    filters=Filters(),
    games=0,
    imported_games=0,
    imported_games_left_out=0,
    decisions=0,
    optimal_expected_score=0.0,
    min_n=10,
    agents_vs_people=(
        AgentAgainstPeople("greedy", 20, 2, figure_of(0.75, 0.5, 0.875, n=20), NOTHING),
        AgentAgainstPeople("random", 3, 2, figure_of(0.25, n=3), NOTHING),  # too few games for an interval
    ),
    people=PeopleLoss(
        population=PeoplePopulation(
            0, 0, LossByChoice(NOTHING, NOTHING, NOTHING), LossByChoice(figure_of(1.5, 1.25, 1.75), NOTHING, NOTHING)
        ),
        players=(),
        histogram=Histogram((0.0, 0.5, 1.0), (2, 1), 3),
        by_games_played=(
            GamesPlayedBin("1", figure_of(2.0, 1.5, 2.5, n=12)),
            GamesPlayedBin("2", figure_of(1.0, n=4)),
        ),
    ),
    duplicate=(),
    agents_graded=(AgentGraded("greedy", 24, figure_of(3.0, 2.5, 4.0, n=24), NOTHING, NOTHING),),
    rules="yacht",
    skill=Skill((), SkillPopulation(0, None, NO_FIT, 0, (), Histogram((), (), 0))),
    likeness=(),
    ratings=Ratings(
        method="",
        scale="",
        anchor=Anchor("greedy", 1500.0),
        games=0,
        pairs=0,
        bootstrap=0,
        players=tuple(rated(i, low=None if i == 3 else -5.0) for i in range(26)),  # person 3: no interval
    ),
)


def drawn_panels(report: Report) -> list:
    """The six panels of the report's figure (row by row), as drawn just before it is saved (and closed then)."""
    from yacht_env import figures

    drawn = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(figures, "save_png", lambda path, figure, dpi: drawn.append(figure))
        save_plot("unused.png", report)
    (figure,) = drawn
    figures.pyplot().close(figure)
    return figure.axes


@pytest.fixture()
def panels():
    """The six panels of the small report's figure."""
    return drawn_panels(REPORT)


def bar_chart(ax):
    """The bars of ``ax`` (their error bars in ``.errorbar``)."""
    from matplotlib.container import BarContainer

    (container,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    return container


def error_bars(ax):
    """The error bars of ``ax``: its one ``ErrorbarContainer``."""
    from matplotlib.container import ErrorbarContainer

    (container,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    return container


def bars_of(ax) -> list[tuple[float, float, float]]:
    """Each bar of ``ax``: its height and the bottom and top of its error bar."""
    (segments,) = [c.get_segments() for c in error_bars(ax).lines[2]]
    return [(bar.get_height(), s[0][1], s[1][1]) for bar, s in zip(bar_chart(ax).patches, segments)]


def test_each_bar_panel_draws_its_means_with_intervals_from_low_to_high(panels):
    wins, _, _, by_games, same_games, _ = panels
    assert bars_of(wins) == [(0.75, 0.5, 0.875), (0.25, 0.25, 0.25)]  # no interval: a bar without error
    assert bars_of(by_games) == [(2.0, 1.5, 2.5), (1.0, 1.0, 1.0)]
    assert bars_of(same_games) == [(1.5, 1.25, 1.75), (3.0, 2.5, 4.0)]  # the people pooled, then each agent
    assert [t.get_text() for t in same_games.get_xticklabels()] == ["people\nn=30", "greedy\nn=24"]
    assert [t.get_text() for t in wins.get_xticklabels()] == ["greedy\nn=20", "random\nn=3\n(no CI)"]
    for ax in (wins, by_games, same_games):  # every interval capped (the caps' size is a matter of taste, not tested)
        assert all(line.get_markersize() > 0 for line in error_bars(ax).lines[1])


def test_the_win_rate_panel_marks_an_even_chance_and_the_by_games_panel_names_its_axis(panels):
    wins, histogram, _, by_games, same_games, _ = panels
    (even,) = [line for line in wins.get_lines() if list(line.get_ydata()) == [0.5, 0.5]]
    assert list(even.get_xdata()) == [0, 1] and even.get_linestyle() == "--" and even.get_linewidth() > 0  # it shows
    assert not [line for ax in (histogram, by_games, same_games) for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert wins.get_ylim() == (0, 1)
    assert by_games.get_xlabel() == "the person's game number" and same_games.get_xlabel() == ""
    assert histogram.get_xlabel() == "expected points lost per decision" and histogram.get_ylabel() == "people"
    bins = [(patch.get_x(), patch.get_width(), patch.get_height()) for patch in histogram.patches]
    assert bins == [(0.0, 0.5, 2), (0.5, 0.5, 1)]  # one bar per bin of the people's histogram
    assert all(ax.get_title() for ax in panels)  # every panel says what it shows


def tick_label_sizes(font_size: float) -> tuple[set, set]:
    """The font sizes of the bar panels' tick labels and of the ratings', the figure drawn at ``font_size``."""
    import matplotlib

    with matplotlib.rc_context({"font.size": font_size}):
        wins, _, _, by_games, same_games, ratings = drawn_panels(REPORT)
    bars = {t.get_fontsize() for ax in (wins, by_games, same_games) for t in ax.get_xticklabels()}
    return bars, {t.get_fontsize() for t in ratings.get_yticklabels()}


def test_the_tick_labels_follow_the_font_size_in_use_the_ratings_smaller():
    (bars,), (ratings,) = tick_label_sizes(10.0)  # one size for every bar panel's labels, one for the ratings'
    assert ratings < bars < 10.0  # the 25 rows of ratings the smallest
    (bars_16,), (ratings_16,) = tick_label_sizes(16.0)
    assert (bars_16, ratings_16) == pytest.approx((1.6 * bars, 1.6 * ratings))


def test_the_ratings_panel_shows_the_first_25_players_with_their_intervals(panels):
    ratings = panels[5]
    shown = REPORT.ratings.players[:25]
    assert [t.get_text() for t in ratings.get_yticklabels()] == [f"{p.name} (n={p.rating.n})" for p in shown]
    (bars,) = ratings.containers
    (segments,) = [c.get_segments() for c in bars.lines[2]]
    ends = [(s[0][0], s[1][0], s[0][1]) for s in segments]  # left end, right end, row
    assert ends == [
        (p.rating.mean, p.rating.mean, i) if i == 3 else (p.rating.mean - 5, p.rating.mean + 7, i) for i, p in enumerate(shown)
    ]
    assert all(line.get_markersize() > 0 for line in bars.lines[1])  # every interval capped
    (points,) = [c for c in ratings.collections if c is not bars.lines[2][0]]
    assert [tuple(xy) for xy in points.get_offsets()] == [(p.rating.mean, i) for i, p in enumerate(shown)]
    agent, person = (tuple(points.get_facecolors()[i]) for i in (0, 1))  # greedy first, then the people
    assert agent != person and all(tuple(color) == person for color in points.get_facecolors()[1:])
    assert ratings.get_title() == "Ratings (Bradley-Terry, greedy = 1500), 95% bootstrap CI"  # what the scale is anchored on


def test_a_figure_without_a_mean_draws_a_bar_of_no_height_and_an_interval_of_no_length():
    from yacht_env.figures import pyplot
    from yacht_play.report.plot import bars

    figure, ax = pyplot().subplots()
    try:
        no_game = Estimate(None, None, None, 0, "games", "no game")
        bars(ax, ["greedy", "random"], [Estimate(0.5, 0.25, 0.75, 9, "games"), no_game], "tab:blue")
        assert [bar.get_height() for bar in bar_chart(ax).patches] == [0.5, 0.0]
        (segments,) = [c.get_segments() for c in error_bars(ax).lines[2]]
        assert segments[0].tolist() == [[0.0, 0.25], [0.0, 0.75]] and segments[1].tolist() == [[1.0, 0.0], [1.0, 0.0]]
    finally:
        pyplot().close(figure)


def rating_segments(ax) -> list[tuple[float, float, float]]:
    """Each player's interval on the ratings panel: its left end, its right end, its row."""
    (segments,) = [c.get_segments() for c in error_bars(ax).lines[2]]
    return [(s[0][0], s[1][0], s[0][1]) for s in segments]


def test_a_rating_just_past_its_bootstrap_interval_is_drawn_with_its_interval_where_it_lies(tmp_path):
    # Two games, both won by a: every bootstrap refit is a fit of two wins again (either game twice, or both), started
    # from the point estimate, and lands a rounding error past it: a percentile interval that misses its estimate.
    header = {"game_id": "g", "mode": "table", "rules": "yacht", "time": "", "players": []}
    header["players"] = [{"seat": k, "name": name, "kind": "human", "policy": None, "seed": 0} for k, name in enumerate("ab")]
    ratings = rate([GameRecord(header, [], {"totals": [200, 100]})] * 2)
    assert all(not p.rating.low <= p.rating.mean <= p.rating.high for p in ratings.players)
    report = dataclasses.replace(REPORT, ratings=ratings)
    ends = rating_segments(drawn_panels(report)[5])
    expected = [(p.rating.low, p.rating.high, row) for row, p in enumerate(ratings.players)]
    assert [(round(left, 6), round(right, 6), row) for left, right, row in ends] == [
        (round(low, 6), round(high, 6), row) for low, high, row in expected
    ]
    save_plot(tmp_path / "report.png", report)  # and saved as a PNG, six panels of 6 x 4 inches at 100 dpi
    assert (tmp_path / "report.png").read_bytes().startswith(b"\x89PNG")
    import matplotlib.pyplot as plt

    assert plt.imread(tmp_path / "report.png").shape[:2] == (800, 1800)


ENDS = st.one_of(st.none(), st.floats(-3000, 3000), st.sampled_from([math.nan, math.inf, -math.inf]))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(-3000, 3000), ENDS, ENDS), min_size=1, max_size=5))
@example([(-1.8841599430527154e-233, math.nan, None), (245.8707745, None, None), (-1111.7704573422384, 228.67801564177307, None)])
def test_any_interval_is_drawn_by_its_ends_and_one_not_finite_is_drawn_as_none(figures):
    # an end may lie on either side of the mean, the ends may come in either order, and an end may be NaN or infinite
    estimates = [Estimate(mean, low, high, 10, "games") for mean, low, high in figures]
    players = tuple(RatedPlayer(f"p{k}", "human", e) for k, e in enumerate(estimates))
    graded = tuple(AgentGraded(f"a{k}", 10, e, NOTHING, NOTHING) for k, e in enumerate(estimates))
    report = dataclasses.replace(REPORT, ratings=dataclasses.replace(REPORT.ratings, players=players), agents_graded=graded)
    panels = drawn_panels(report)

    def finite(e: Estimate) -> bool:
        return e.low is not None and e.high is not None and math.isfinite(e.low) and math.isfinite(e.high)

    ends = [(min(e.low, e.high), max(e.low, e.high)) if finite(e) else (e.mean, e.mean) for e in estimates]
    # compared within 1e-6 points, not rounded: a drawn end and its figure may round to either side of a last digit
    drawn = [(left, right) for left, right, _ in rating_segments(panels[5])]
    assert len(drawn) == len(ends) and np.allclose(drawn, ends, rtol=0, atol=1e-6)
    bars = [(bottom, top) for _, bottom, top in bars_of(panels[4])[1:]]  # after the people
    assert len(bars) == len(ends) and np.allclose(bars, ends, rtol=0, atol=1e-6)
    labels = [t.get_text() for t in panels[4].get_xticklabels()[1:]]
    assert labels == [f"a{k}\nn=10" + ("" if finite(e) else "\n(no CI)") for k, e in enumerate(estimates)]


def test_the_skill_panel_draws_a_bar_per_bin_of_temperatures_and_the_ratings_colour_agents_apart_from_people():
    from matplotlib.colors import to_rgba

    temperatures = Histogram((0.0, 1.0, 3.0), (4, 1), 5)
    skill = dataclasses.replace(REPORT.skill, population=dataclasses.replace(REPORT.skill.population, histogram=temperatures))
    skill_panel, ratings = drawn_panels(dataclasses.replace(REPORT, skill=skill))[2::3]
    assert [(patch.get_x(), patch.get_width(), patch.get_height()) for patch in skill_panel.patches] == [
        (0.0, 1.0, 4),
        (1.0, 2.0, 1),
    ]
    (points,) = [c for c in ratings.collections if c is not error_bars(ratings).lines[2][0]]
    shown = REPORT.ratings.players[:25]
    expected = [to_rgba("tab:blue" if p.kind == "agent" else "tab:orange") for p in shown]
    assert [tuple(color) for color in points.get_facecolors()] == expected  # agents blue, people orange
    assert not drawn_panels(REPORT)[2].patches  # no person fitted: no bar
