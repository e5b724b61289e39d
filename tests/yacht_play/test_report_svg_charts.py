"""The report page's SVG charts (:mod:`yacht_play.report.svg_charts`), read back as XML: the round ticks of their axes,
each figure drawn where its value puts it on them (bars, whiskers, dots, histogram bins), what is written and shown
in tooltips, and every label escaped.

The expected positions come from each chart's own geometry: a value ``v`` lies at ``left + v * (right - left) / last tick``
(bars and histogram bins from 0, ratings from the first tick), rows ``ROW`` units apart below a ``TOP`` margin.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from yacht_play.report.results import Estimate
from yacht_play.report.svg_charts import (
    GRID,
    INK,
    MUTED,
    histogram_chart,
    interval_chart,
    nice_ticks,
    range_chart,
    short,
    svg,
    tick_label,
)

# The bar and rating charts: labels right-aligned before LEFT, the axis from LEFT to RIGHT (room after it for the value
# written past the longest whisker), one row every ROW units below a TOP margin, the tick labels and 20 units under them.
LEFT, RIGHT, ROW, TOP = 104, 270, 24, 6
# The histogram: its counts' labels before H_LEFT, the bins from H_LEFT to H_RIGHT, its bars from H_TOP down to the axis.
H_LEFT, H_RIGHT, H_TOP, H_AXIS, H_HEIGHT = 30, 308, 8, 126, 150


def parse(chart: str) -> ET.Element:
    """The chart as XML: it must be well-formed (an unescaped label would break it) and be one ``<svg>``."""
    root = ET.fromstring(chart)
    assert root.tag == "svg"
    return root


def at(value: float):
    """A position as the chart writes it, to a tenth of a unit."""
    return pytest.approx(value, abs=0.051)


def number(element: ET.Element, name: str) -> float:
    return float(element.get(name))


def shown(element: ET.Element) -> str:
    """What a text writes on the chart, without its tooltip."""
    return (element.text or "") + "".join(child.tail or "" for child in element)


def tooltip(element: ET.Element) -> str | None:
    title = element.find("title")
    return None if title is None else title.text


def lines(root: ET.Element, stroke: str) -> list[ET.Element]:
    return [line for line in root.iter("line") if line.get("stroke") == stroke]


def texts(root: ET.Element, anchor: str) -> list[ET.Element]:
    return [text for text in root.iter("text") if text.get("text-anchor") == anchor]


def height(root: ET.Element) -> float:
    origin_x, origin_y, width, high = map(float, root.get("viewBox").split())
    assert (origin_x, origin_y, width) == (0, 0, 320)
    return high


def middle(row: int) -> float:
    return TOP + ROW * row + ROW / 2


def estimate(mean, low=None, high=None, n=30) -> Estimate:
    return Estimate(mean, low, high, n, "games")


# --- the ticks of every axis -----------------------------------------------------------------------------------------


@given(top=st.floats(1e-300, 1e300), count=st.integers(1, 10))
@example(top=4.0, count=4)  # exactly a round step: no tick past the top
@example(top=7.5, count=3)  # a step of 2.5
@example(top=1e-13, count=4)  # steps under the 12th decimal
def test_ticks_start_at_zero_and_step_evenly_by_one_two_two_and_a_half_or_five_times_a_power_of_ten_just_past_the_top(top, count):
    ticks = nice_ticks(top, count)
    step = ticks[1]
    assert ticks[0] == 0
    assert all(b - a == pytest.approx(step, rel=1e-9) for a, b in zip(ticks, ticks[1:]))
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-12)
    assert any(mantissa == pytest.approx(m) for m in (1, 2, 2.5, 5))
    assert ticks[-1] >= top * (1 - 1e-9) and ticks[-2] < top  # the last tick is the first at or past the top
    # about count of them: the step is the first round one at least top / count, under twice that
    assert count / 2 <= len(ticks) - 1 <= count


@pytest.mark.parametrize(
    "top, ticks",
    [
        (1, [0, 0.25, 0.5, 0.75, 1]),
        (4, [0, 1, 2, 3, 4]),
        (7.8, [0, 2, 4, 6, 8]),
        (10, [0, 2.5, 5, 7.5, 10]),
        (20, [0, 5, 10, 15, 20]),
        (30, [0, 10, 20, 30]),
        (0.43, [0, 0.2, 0.4, 0.6]),
    ],
)
def test_an_axis_has_about_four_round_ticks_and_ends_at_a_round_top(top, ticks):
    assert nice_ticks(top) == pytest.approx(ticks)


@pytest.mark.parametrize("top", [0.0, -3.0, math.nan, math.inf])
def test_an_axis_without_a_positive_finite_top_runs_from_0_to_1(top):
    assert nice_ticks(top) == [0, 0.25, 0.5, 0.75, 1]


def test_a_tiny_top_still_gets_round_ticks():
    # 1e-9 is the smallest top the charts and the report's histograms ask for
    assert nice_ticks(1e-9) == pytest.approx([0, 2.5e-10, 5e-10, 7.5e-10, 1e-9], rel=1e-9, abs=0)


def test_a_top_a_rounding_error_past_a_round_number_adds_no_tick():
    assert nice_ticks(0.1 + 0.2) == pytest.approx([0, 0.1, 0.2, 0.3])  # the top is 0.30000000000000004


def test_a_tick_is_labelled_as_a_plain_number_or_a_percent():
    assert [tick_label(t, percent=True) for t in (0, 0.25, 0.5, 1)] == ["0%", "25%", "50%", "100%"]
    assert [tick_label(t) for t in (0, 2.5, 10.0, 0.4)] == ["0", "2.5", "10", "0.4"]


def test_a_label_of_fourteen_characters_is_kept_and_a_longer_one_cut_to_fourteen_ending_in_an_ellipsis():
    assert short("abcdefghijklmn") == "abcdefghijklmn"
    assert short("abcdefghijklmno") == "abcdefghijklm…"
    assert short("") == ""


def test_a_chart_is_an_image_of_the_charts_width_and_given_height_named_by_its_escaped_description():
    description = 'ann\'s <b>chart</b> & "more"'
    root = parse(svg(123.4, description, ["<circle r='1'/>"]))
    assert height(root) == 123
    assert root.get("role") == "img" and root.get("aria-label") == description
    # no width or height: the card sizes it (width 100%); 13-unit text in the 320-unit box stays readable on a phone
    assert "width" not in root.attrib and "height" not in root.attrib
    assert root.get("font-size") == "13"
    assert [child.tag for child in root] == ["circle"]


# --- the bar chart of means with their intervals ------------------------------------------------------------------

RATES = [
    ("people", estimate(0.5, 0.25, 0.75, n=40)),
    ("greedy", Estimate(0.125, None, None, 4, "games", "n < 10")),
    ("nobody", Estimate(None, None, None, 0, "games", "no game")),
    ("a rather long policy name", estimate(0.625, 0.55, 1.0, n=100)),
]
RATE_CHART = parse(interval_chart(RATES, "win rates", "#123456", percent=True, reference=0.5))


def rate_x(value: float) -> float:
    """A win rate on the chart: its percent axis always runs from 0 to 100%."""
    return LEFT + value * (RIGHT - LEFT)


def test_a_chart_in_percent_has_its_axis_from_0_to_100_percent_with_a_grid_line_at_each_tick():
    axis_y = TOP + ROW * len(RATES)
    labels = texts(RATE_CHART, "middle")
    assert [shown(t) for t in labels] == ["0%", "25%", "50%", "75%", "100%"]
    assert [number(t, "x") for t in labels] == [at(rate_x(v)) for v in (0, 0.25, 0.5, 0.75, 1)]
    assert {number(t, "y") for t in labels} == {axis_y + 15}  # under the axis
    grid = lines(RATE_CHART, GRID)
    assert [number(g, "x1") for g in grid] == [at(rate_x(v)) for v in (0, 0.25, 0.5, 0.75, 1)]
    assert all(g.get("x1") == g.get("x2") and number(g, "y1") == TOP and number(g, "y2") == axis_y for g in grid)
    # small rates keep the whole 0 to 100% axis
    small = parse(interval_chart([("a", estimate(0.1, 0.05, 0.2))], "d", "red", percent=True))
    assert shown(texts(small, "middle")[-1]) == "100%"


def test_each_mean_is_a_bar_from_the_axis_as_wide_as_the_mean_on_the_tick_scale_centred_on_its_row():
    bars = list(RATE_CHART.iter("rect"))
    drawn = [(i, e) for i, (_, e) in enumerate(RATES) if e.mean is not None]
    assert len(bars) == len(drawn)  # the row without a mean has no bar
    for bar, (i, e) in zip(bars, drawn):
        assert number(bar, "x") == LEFT and number(bar, "width") == at(rate_x(e.mean) - LEFT)
        assert number(bar, "height") == 14 and number(bar, "y") + number(bar, "height") / 2 == at(middle(i))
        assert bar.get("fill") == "#123456"


def test_an_interval_is_a_whisker_from_its_low_to_its_high_end_with_end_caps_and_a_bar_without_one_is_pale():
    ink = lines(RATE_CHART, INK)
    whiskers = [line for line in ink if line.get("y1") == line.get("y2")]
    caps = [line for line in ink if line.get("x1") == line.get("x2")]
    with_interval = [(i, e) for i, (_, e) in enumerate(RATES) if e.low is not None]
    assert len(whiskers) == len(with_interval) and len(caps) == 2 * len(with_interval)
    for whisker, (i, e) in zip(whiskers, with_interval):
        assert (number(whisker, "x1"), number(whisker, "x2")) == (at(rate_x(e.low)), at(rate_x(e.high)))
        assert number(whisker, "y1") == at(middle(i))
    for cap, (i, value) in zip(caps, [(i, v) for i, e in with_interval for v in (e.low, e.high)]):
        assert number(cap, "x1") == at(rate_x(value))
        assert (number(cap, "y1"), number(cap, "y2")) == (at(middle(i) - 5), at(middle(i) + 5))  # centred on the whisker
    opacities = [bar.get("fill-opacity") for bar in RATE_CHART.iter("rect")]
    assert opacities == ["1", "0.45", "1"]  # greedy, with too few games for an interval, is pale


def test_a_bars_tooltip_gives_its_label_value_and_n_or_that_it_has_no_interval():
    assert [tooltip(bar) for bar in RATE_CHART.iter("rect")] == [
        "people: 50.0%, n=40",
        "greedy: 12.5%, n=4, no interval",
        "a rather long policy name: 62.5%, n=100",
    ]


def test_a_row_without_a_mean_says_no_data_and_the_rows_after_it_are_still_drawn():
    muted = [t for t in texts(RATE_CHART, "start") if t.get("fill") == MUTED]
    assert [shown(t) for t in muted] == ["no data"]
    assert (number(muted[0], "x"), number(muted[0], "y")) == (LEFT + 4, at(middle(2) + 4))
    assert number(list(RATE_CHART.iter("rect"))[-1], "y") == at(middle(3) - 7)


def test_the_value_is_written_just_past_its_whisker_or_bar_and_kept_inside_the_chart():
    values = [t for t in texts(RATE_CHART, "start") if t.get("fill") == INK]
    assert [shown(t) for t in values] == ["50.0%", "12.5%", "62.5%"]
    assert [number(t, "x") for t in values] == [at(rate_x(0.75) + 4), at(rate_x(0.125) + 4), RIGHT + 2]
    assert [number(t, "y") for t in values] == [at(middle(i) + 4) for i in (0, 1, 3)]  # on the row's baseline


def test_each_row_is_labelled_before_the_axis_and_a_cut_label_keeps_its_whole_text_as_tooltip():
    labels = texts(RATE_CHART, "end")
    assert [shown(t) for t in labels] == ["people", "greedy", "nobody", "a rather long…"]
    assert [tooltip(t) for t in labels] == [None, None, None, "a rather long policy name"]
    assert {number(t, "x") for t in labels} == {LEFT - 6}
    assert [number(t, "y") for t in labels] == [at(middle(i) + 4) for i in range(4)]


def test_the_reference_is_one_dashed_line_across_every_row_at_its_value():
    dashed = [line for line in RATE_CHART.iter("line") if line.get("stroke-dasharray")]
    assert len(dashed) == 1 and dashed[0].get("stroke") == MUTED
    assert number(dashed[0], "x1") == number(dashed[0], "x2") == at(rate_x(0.5))
    assert (number(dashed[0], "y1"), number(dashed[0], "y2")) == (TOP, TOP + ROW * len(RATES))
    no_reference = parse(interval_chart(RATES, "d", "red", percent=True))
    assert not [line for line in no_reference.iter("line") if line.get("stroke-dasharray")]


@pytest.mark.parametrize("rows", [0, 1, 2, 7])
def test_the_chart_grows_by_one_row_height_per_row(rows):
    chart = parse(interval_chart([(f"p{i}", estimate(0.5, 0.4, 0.6)) for i in range(rows)], "d", "red", percent=True))
    assert height(chart) == TOP + ROW * max(rows, 1) + 20  # an empty chart keeps one row's height for its axis
    assert len(list(chart.iter("rect"))) == rows


LOSSES = [("people", estimate(0.234, 0.2, 0.3)), ("greedy", estimate(0.31, 0.25, 0.39)), ("alone", estimate(0.05))]


def test_a_chart_of_losses_runs_its_axis_to_the_first_round_tick_past_the_largest_end_and_writes_three_digits():
    chart = parse(interval_chart(LOSSES, "d", "red"))
    assert [shown(t) for t in texts(chart, "middle")] == ["0", "0.1", "0.2", "0.3", "0.4"]  # the largest end is 0.39
    assert [number(bar, "width") for bar in chart.iter("rect")] == [at(e.mean * (RIGHT - LEFT) / 0.4) for _, e in LOSSES]
    values = [t for t in texts(chart, "start") if t.get("fill") == INK]
    assert [shown(t) for t in values] == ["0.234", "0.31", "0.05"]
    # a row without an interval reaches the axis with its mean
    alone = parse(interval_chart([("a", estimate(0.3)), ("b", estimate(0.1, 0.05, 0.2))], "d", "red"))
    assert shown(texts(alone, "middle")[-1]) == "0.3"


def test_the_axis_of_a_chart_of_losses_reaches_its_reference():
    chart = parse(interval_chart(LOSSES, "d", "red", reference=2.0))
    assert [shown(t) for t in texts(chart, "middle")] == ["0", "0.5", "1", "1.5", "2"]
    dashed = [line for line in chart.iter("line") if line.get("stroke-dasharray")]
    assert number(dashed[0], "x1") == RIGHT


def test_a_mean_of_zero_or_below_is_a_thin_bar_at_the_axis_and_an_interval_below_zero_stops_at_the_axis():
    chart = parse(interval_chart([("zero", estimate(0.0)), ("below", estimate(-0.5, -1.0, 2.0))], "d", "red"))
    assert [number(bar, "width") for bar in chart.iter("rect")] == [1, 1]  # still visible
    whisker = [line for line in lines(chart, INK) if line.get("y1") == line.get("y2")]
    assert (number(whisker[0], "x1"), number(whisker[0], "x2")) == (LEFT, RIGHT)
    # every mean zero: no bar is lost to an axis of length 0
    zeros = parse(interval_chart([("a", estimate(0.0)), ("b", estimate(0.0))], "d", "red"))
    assert [number(bar, "width") for bar in zeros.iter("rect")] == [1, 1]


def test_labels_tooltips_and_the_description_are_escaped_text_never_markup():
    label = "<b>ann</b> & 'co' \"x\""
    chart = interval_chart([(label, estimate(0.5, 0.4, 0.6))], label, "red")
    root = parse(chart)
    assert root.find(".//b") is None and "<b>" not in chart
    assert root.get("aria-label") == label
    (row,) = texts(root, "end")
    assert shown(row) == short(label) and tooltip(row) == label
    assert tooltip(next(root.iter("rect"))) == f"{label}: 0.5, n=30"


# --- the histogram ---------------------------------------------------------------------------------------------------

EDGES = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
COUNTS = [1, 7, 2, 0, 3]
HISTOGRAM = parse(histogram_chart(EDGES, COUNTS, "a histogram", "#654321"))


def bin_x(value: float) -> float:
    """An edge on the histogram's x axis, whose ticks run 0, 1, 2, 3 (the first round tick past 2.5)."""
    return H_LEFT + (H_RIGHT - H_LEFT) * value / 3


def count_y(count: float) -> float:
    """A count on the histogram's y axis, whose ticks run 0, 5, 10 (the first whole round tick past 7)."""
    return H_AXIS - (H_AXIS - H_TOP) * count / 10


def test_a_histogram_draws_one_bar_per_bin_between_its_edges_on_a_round_x_axis():
    assert height(HISTOGRAM) == H_HEIGHT
    below = texts(HISTOGRAM, "middle")
    assert [shown(t) for t in below] == ["0", "1", "2", "3"]
    assert [number(t, "x") for t in below] == [at(bin_x(v)) for v in (0, 1, 2, 3)]
    assert {number(t, "y") for t in below} == {H_AXIS + 16}
    bars = list(HISTOGRAM.iter("rect"))
    assert len(bars) == len(COUNTS)
    for bar, low, high in zip(bars, EDGES, EDGES[1:]):
        # half a unit in from each edge: one unit between neighbours
        assert number(bar, "x") == at(bin_x(low) + 0.5)
        assert number(bar, "x") + number(bar, "width") == pytest.approx(bin_x(high) - 0.5, abs=0.11)  # two roundings
        assert bar.get("fill") == "#654321"


def test_a_bars_height_is_its_count_on_a_whole_numbered_count_axis_from_the_x_axis_up():
    labels = texts(HISTOGRAM, "end")
    assert [shown(t) for t in labels] == ["0", "5", "10"]
    assert [(number(t, "x"), number(t, "y")) for t in labels] == [(H_LEFT - 5, at(count_y(c) + 4)) for c in (0, 5, 10)]
    grid = lines(HISTOGRAM, GRID)
    assert [number(g, "y1") for g in grid] == [at(count_y(c)) for c in (0, 5, 10)]
    assert all(g.get("y1") == g.get("y2") and (number(g, "x1"), number(g, "x2")) == (H_LEFT, H_RIGHT) for g in grid)
    for bar, count in zip(HISTOGRAM.iter("rect"), COUNTS):
        assert number(bar, "y") + number(bar, "height") == at(H_AXIS)
        assert number(bar, "height") == at((H_AXIS - H_TOP) * count / 10)
        assert number(bar, "y") >= H_TOP  # inside the chart
    (axis,) = lines(HISTOGRAM, MUTED)
    assert (number(axis, "x1"), number(axis, "x2"), number(axis, "y1"), number(axis, "y2")) == (H_LEFT, H_RIGHT, H_AXIS, H_AXIS)


@given(st.integers(1, 2000))
@example(1)
@example(4)
@example(7)  # a step of 2.5 keeps only 0 and 5 of its ticks: the axis needs 10
def test_the_count_axis_is_whole_numbers_evenly_spaced_up_to_the_first_past_the_largest_count(largest):
    chart = parse(histogram_chart([0.0, 1.0, 2.0], [largest, largest // 2], "d", "red"))
    ticks = [float(shown(t)) for t in texts(chart, "end")]
    assert ticks[0] == 0 and all(t == int(t) for t in ticks)
    assert len({b - a for a, b in zip(ticks, ticks[1:])}) == 1
    assert ticks[-2] < largest <= ticks[-1] and 2 <= len(ticks) <= 4  # about three steps
    tallest = next(chart.iter("rect"))
    assert number(tallest, "height") == at((H_AXIS - H_TOP) * largest / ticks[-1])


@pytest.mark.parametrize(
    "largest, ticks", [(1, ["0", "1"]), (2, ["0", "1", "2"]), (4, ["0", "2", "4"]), (12, ["0", "5", "10", "15"])]
)
def test_small_counts_get_about_three_whole_steps(largest, ticks):
    chart = parse(histogram_chart([0.0, 1.0], [largest], "d", "red"))
    assert [shown(t) for t in texts(chart, "end")] == ticks


def test_a_bins_tooltip_gives_its_range_and_how_many_people_are_in_it():
    assert [tooltip(bar) for bar in HISTOGRAM.iter("rect")] == [
        "0.000 to 0.500: 1 person",
        "0.500 to 1.000: 7 people",
        "1.000 to 1.500: 2 people",
        "1.500 to 2.000: 0 people",
        "2.000 to 2.500: 3 people",
    ]


def test_a_bin_too_narrow_to_show_is_still_one_unit_wide_and_a_histogram_without_bins_keeps_its_axes():
    narrow = parse(histogram_chart([0.0, 0.001, 1.0], [1, 1], "d", "red"))
    assert number(next(narrow.iter("rect")), "width") == 1
    empty = parse(histogram_chart([], [], "no one", "red"))
    assert not list(empty.iter("rect"))
    assert [shown(t) for t in texts(empty, "middle")] == ["0", "0.25", "0.5", "0.75", "1"]
    assert [shown(t) for t in texts(empty, "end")] == ["0", "1"]


# --- the ratings ---------------------------------------------------------------------------------------------------

RATINGS = [
    ("ann", estimate(1100, 1050, 1160, n=30)),
    ("bob", estimate(930, n=3)),
    ("carl", estimate(None, n=0)),
    ("dan <b>& a long name", estimate(1180, 1120, 1200, n=12)),
]
RATING_CHART = parse(range_chart(RATINGS, "ratings", "#abcdef", reference=1000))


def rating_x(value: float, first: float = 900, last: float = 1200) -> float:
    """A rating on an axis from its first tick to its last."""
    return LEFT + (value - first) * (RIGHT - LEFT) / (last - first)


def tick_values(root: ET.Element) -> list[float]:
    return [float(shown(t)) for t in texts(root, "middle")]


@pytest.mark.parametrize(
    "rows, reference, ticks",
    [
        (RATINGS, 1000, [900, 1000, 1100, 1200]),  # the highest end 1200 is a tick: none past it
        (RATINGS, 800, [800, 900, 1000, 1100, 1200]),  # the axis reaches the reference
        ([("a", estimate(-130, -180, -60)), ("b", estimate(-100))], None, [-200, -150, -100, -50]),
        ([("a", estimate(40, 30, 50))], 0, [0, 20, 40, 60]),  # a reference of 0 too
        ([("a", estimate(1000, 995.5, 1004.5))], None, [995, 1000, 1005]),  # a step of 5, not 2.5: whole labels
    ],
)
def test_a_ratings_axis_runs_on_a_round_step_from_the_tick_below_the_lowest_end_to_the_first_past_the_highest(
    rows, reference, ticks
):
    chart = parse(range_chart(rows, "d", "red", reference=reference))
    assert tick_values(chart) == ticks
    axis_y = TOP + ROW * len(rows)
    labels = texts(chart, "middle")
    assert [number(t, "x") for t in labels] == [at(rating_x(t, ticks[0], ticks[-1])) for t in ticks]
    assert {number(t, "y") for t in labels} == {axis_y + 15}
    grid = lines(chart, GRID)
    assert [number(g, "x1") for g in grid] == [at(rating_x(t, ticks[0], ticks[-1])) for t in ticks]
    assert all(g.get("x1") == g.get("x2") and (number(g, "y1"), number(g, "y2")) == (TOP, axis_y) for g in grid)
    assert height(chart) == axis_y + 20


def test_each_rating_is_a_dot_at_its_mean_on_its_row_and_its_interval_a_line_through_it():
    dots = list(RATING_CHART.iter("circle"))
    rated = [(i, e) for i, (_, e) in enumerate(RATINGS) if e.mean is not None]
    assert len(dots) == len(rated)  # carl, without a rating, has none
    for dot, (i, e) in zip(dots, rated):
        assert (number(dot, "cx"), number(dot, "cy")) == (at(rating_x(e.mean)), at(middle(i)))
        assert dot.get("fill") == "#abcdef"
    whiskers = lines(RATING_CHART, INK)
    with_interval = [(i, e) for i, e in rated if e.low is not None]
    assert len(whiskers) == len(with_interval)  # bob has no interval
    for whisker, (i, e) in zip(whiskers, with_interval):
        assert (number(whisker, "x1"), number(whisker, "x2")) == (at(rating_x(e.low)), at(rating_x(e.high)))
        assert number(whisker, "y1") == number(whisker, "y2") == at(middle(i))


def test_a_rating_is_written_just_past_its_interval_and_kept_inside_the_chart():
    values = texts(RATING_CHART, "start")
    assert [shown(t) for t in values] == ["1100", "930", "1180"]
    assert [number(t, "x") for t in values] == [at(rating_x(1160) + 6), at(rating_x(930) + 6), RIGHT + 2]
    assert [number(t, "y") for t in values] == [at(middle(i) + 4) for i in (0, 1, 3)]


def test_a_dots_tooltip_gives_the_rating_n_and_its_interval_escaped():
    assert [tooltip(dot) for dot in RATING_CHART.iter("circle")] == [
        "ann: 1100, n=30, [1050, 1160]",
        "bob: 930, n=3",
        "dan <b>& a long name: 1180, n=12, [1120, 1200]",
    ]
    assert RATING_CHART.find(".//b") is None


def test_each_rated_row_is_labelled_before_the_axis():
    labels = texts(RATING_CHART, "end")
    assert [shown(t) for t in labels] == ["ann", "bob", "carl", "dan <b>& a lo…"]
    assert tooltip(labels[-1]) == "dan <b>& a long name"
    assert [(number(t, "x"), number(t, "y")) for t in labels] == [(LEFT - 6, at(middle(i) + 4)) for i in range(4)]


def test_the_anchors_rating_is_one_dashed_line_across_every_row():
    dashed = [line for line in RATING_CHART.iter("line") if line.get("stroke-dasharray")]
    assert len(dashed) == 1 and dashed[0].get("stroke") == MUTED
    assert number(dashed[0], "x1") == number(dashed[0], "x2") == at(rating_x(1000))
    assert (number(dashed[0], "y1"), number(dashed[0], "y2")) == (TOP, TOP + ROW * len(RATINGS))
    without = parse(range_chart(RATINGS, "d", "red"))
    assert not [line for line in without.iter("line") if line.get("stroke-dasharray")]


@pytest.mark.parametrize("rating", [0.0, 1000.0])  # 0 sits exactly on a tick, 1000 a rounding away from one
def test_a_single_rating_without_interval_still_gets_an_axis_of_two_ticks_with_its_dot_on_it(rating):
    chart = parse(range_chart([("alone", estimate(rating))], "d", "red"))
    assert len(lines(chart, GRID)) == 2
    assert LEFT <= number(next(chart.iter("circle")), "cx") <= RIGHT
    assert "-0" not in [shown(t) for t in texts(chart, "middle")]  # the second tick is above the rating, not below 0


@pytest.mark.parametrize("means", [[1000.0, 1000.0], [1000.2, 1000.4], [-3.4, -3.1, -2.9]])
def test_ratings_within_a_point_of_each_other_get_ticks_a_whole_point_apart(means):
    chart = parse(range_chart([(f"p{i}", estimate(mean)) for i, mean in enumerate(means)], "d", "red"))
    ticks = tick_values(chart)
    assert len(ticks) >= 2 and all(b - a == 1 for a, b in zip(ticks, ticks[1:]))  # each label read apart
    assert ticks[0] <= min(means) and max(means) <= ticks[-1]


def test_a_ratings_chart_without_rows_keeps_one_rows_height_and_an_axis_from_0_to_1():
    chart = parse(range_chart([], "nobody", "red"))
    assert height(chart) == TOP + ROW + 20
    assert tick_values(chart)[0] == 0 and tick_values(chart)[-1] == 1 and not list(chart.iter("circle"))
