"""Charts as inline SVG for the server's pages (no script draws them, so they keep to a script-free policy):
means with their 95% intervals as horizontal bars, and a histogram, on axes at round numbers.

The charts are drawn in a ``WIDTH``-unit box and scaled to their card (``width: 100%``): at that width their
labels keep a readable size from a 320 px phone to a desktop card. Every label is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from yacht_play.report.results import Estimate

WIDTH = 320
FONT = 13
LABEL_CHARS = 14  # a longer label is cut, its whole text in the bar's tooltip
INK, MUTED, GRID = "#1d2430", "#4b5563", "#e5e7eb"


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Round ticks from 0 past ``top`` (steps of 1, 2, 2.5 or 5 times a power of ten), about ``count`` of them."""
    top = top if top > 0 and math.isfinite(top) else 1.0
    raw = top / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    steps = max(1, math.ceil(top / step - 1e-9))  # a top a rounding error past a round number adds no tick
    digits = 2 - math.floor(math.log10(power))  # the decimals of 2.5 times the power: no rounding error in the labels
    return [round(k * step, digits) for k in range(steps + 1)]


def tick_label(value: float, percent: bool = False) -> str:
    """A tick's text: ``50%``, ``2.5``, ``10``."""
    if percent:
        return f"{value * 100:g}%"
    return f"{value:g}"


def short(label: str) -> str:
    """``label`` cut to ``LABEL_CHARS`` characters."""
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def svg(height: float, description: str, parts: list[str]) -> str:
    """The ``<svg>`` element: an image described by ``description`` (escaped here)."""
    return (
        f"<svg class='plot' viewBox='0 0 {WIDTH} {height:.0f}' role='img' aria-label='{html.escape(description)}' "
        f"font-size='{FONT}' font-family='system-ui, sans-serif'>{''.join(parts)}</svg>"
    )


def interval_chart(
    rows: list[tuple[str, Estimate]], description: str, color: str, percent: bool = False, reference: float | None = None
) -> str:
    """One bar per ``(label, estimate)``: the estimate's mean, and its interval as a whisker when it has one (a bar
    without one is drawn pale). ``reference``: a dashed line at that value (a win rate of 1/2). ``estimate``: as
    :func:`yacht_play.report.estimates.estimate` makes them.
    """
    left, right, row_height, top_margin = 104, WIDTH - 50, 24, 6
    values = [e.high if e.high is not None else e.mean for _, e in rows if e.mean is not None]
    ticks = nice_ticks(1.0 if percent else max([*values, reference or 0.0, 1e-9]))
    scale = (right - left) / ticks[-1]
    x = lambda value: left + max(0.0, value) * scale  # noqa: E731
    axis_y = top_margin + row_height * max(len(rows), 1)
    parts = grid(ticks, x, top_margin, axis_y, percent)
    if reference is not None:
        parts.append(line(x(reference), top_margin, x(reference), axis_y, MUTED, "4 3"))
    for i, (label, e) in enumerate(rows):
        middle = top_margin + row_height * i + row_height / 2
        parts.append(text(left - 6, middle + 4, short(label), "end", INK, title=label))
        if e.mean is None:
            parts.append(text(left + 4, middle + 4, "no data", "start", MUTED))
            continue
        shown = f"{e.mean * 100:.1f}%" if percent else f"{e.mean:.3g}"
        tip = f"{label}: {shown}, n={e.n}" + ("" if e.low is not None else ", no interval")
        opacity = "1" if e.low is not None else "0.45"
        parts.append(
            f"<rect x='{left}' y='{middle - 7:.1f}' width='{max(x(e.mean) - left, 1):.1f}' height='14' rx='2' "
            f"fill='{color}' fill-opacity='{opacity}'><title>{html.escape(tip)}</title></rect>"
        )
        if e.low is not None:
            low, high = x(e.low), x(e.high)
            parts += [line(low, middle, high, middle, INK), line(low, middle - 5, low, middle + 5, INK)]
            parts.append(line(high, middle - 5, high, middle + 5, INK))
        end = x(e.high if e.high is not None else e.mean)
        parts.append(text(min(end + 4, right + 2), middle + 4, shown, "start", INK))
    return svg(axis_y + 20, description, parts)


def histogram_chart(edges: Sequence[float], counts: Sequence[int], description: str, color: str) -> str:
    """Bars of ``counts`` over the bins between ``edges``, on an x axis at round numbers."""
    left, right, top_margin, height = 30, WIDTH - 12, 8, 150
    axis_y = height - 24
    x_ticks = nice_ticks(edges[-1] if edges else 1.0)
    top_count = max([*counts, 1])
    y_ticks = [t for t in nice_ticks(top_count, 3) if t == int(t)] or [0.0, 1.0]
    if y_ticks[-1] < top_count:  # a count is whole: of 0, 2.5, 5, 7.5 only 0 and 5 are kept, and 7 needs 10
        y_ticks.append(y_ticks[-1] + y_ticks[1])
    x = lambda value: left + (right - left) * value / x_ticks[-1]  # noqa: E731
    y = lambda count: axis_y - (axis_y - top_margin) * count / y_ticks[-1]  # noqa: E731
    parts = []
    for tick in y_ticks:
        parts += [line(left, y(tick), right, y(tick), GRID), text(left - 5, y(tick) + 4, f"{tick:g}", "end", MUTED)]
    for tick in x_ticks:
        parts.append(text(x(tick), axis_y + 16, tick_label(tick), "middle", MUTED))
    for count, low, high in zip(counts, edges, edges[1:]):
        tip = f"{low:.3f} to {high:.3f}: {count} {'person' if count == 1 else 'people'}"
        parts.append(
            f"<rect x='{x(low) + 0.5:.1f}' y='{y(count):.1f}' width='{max(x(high) - x(low) - 1, 1):.1f}' "
            f"height='{axis_y - y(count):.1f}' fill='{color}'><title>{html.escape(tip)}</title></rect>"
        )
    parts.append(line(left, axis_y, right, axis_y, MUTED))
    return svg(height, description, parts)


def grid(ticks: list[float], x, top: float, bottom: float, percent: bool) -> list[str]:
    """Vertical grid lines at ``ticks``, labelled under the axis at ``bottom``."""
    parts = []
    for tick in ticks:
        parts.append(line(x(tick), top, x(tick), bottom, GRID))
        parts.append(text(x(tick), bottom + 15, tick_label(tick, percent), "middle", MUTED))
    return parts


def line(x1: float, y1: float, x2: float, y2: float, color: str, dash: str | None = None) -> str:
    """An SVG line."""
    dashes = f" stroke-dasharray='{dash}'" if dash else ""
    return f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' stroke='{color}'{dashes}/>"


def text(x: float, y: float, content: str, anchor: str, color: str, title: str | None = None) -> str:
    """An SVG text, escaped; ``title``: its tooltip."""
    tip = f"<title>{html.escape(title)}</title>" if title and title != content else ""
    return f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}' fill='{color}'>{tip}{html.escape(content)}</text>"


def range_chart(rows: list[tuple[str, Estimate]], description: str, color: str, reference: float | None = None) -> str:
    """One dot per ``(label, estimate)`` at its mean, its interval as a whisker, on an axis spanning every interval
    (ratings, which may be negative). ``reference``: a dashed line at that value (the anchor's rating).
    """
    left, right, row_height, top_margin = 104, WIDTH - 50, 24, 6
    ends = [v for _, e in rows for v in (e.low, e.high, e.mean) if v is not None] + ([reference] if reference is not None else [])
    low, high = (min(ends), max(ends)) if ends else (0.0, 1.0)
    # round ticks around the values, multiples of a round step of at least a point (ratings differ by whole points)
    step = max(nice_ticks(max(high - low, 1e-9))[1], 1.0)
    step = step if step == int(step) else 2 * step  # 2.5 -> 5: whole labels, short enough for a phone's width
    ticks = [math.floor(low / step) * step]
    while ticks[-1] < high - 1e-9 * step:
        ticks.append(ticks[-1] + step)
    ticks = ticks if len(ticks) > 1 else [ticks[0], ticks[0] + step]
    span = ticks[-1] - ticks[0] or 1.0
    x = lambda value: left + (value - ticks[0]) * (right - left) / span  # noqa: E731
    axis_y = top_margin + row_height * max(len(rows), 1)
    parts = []
    for tick in ticks:
        parts += [line(x(tick), top_margin, x(tick), axis_y, GRID), text(x(tick), axis_y + 15, tick_label(tick), "middle", MUTED)]
    if reference is not None:
        parts.append(line(x(reference), top_margin, x(reference), axis_y, MUTED, "4 3"))
    for i, (label, e) in enumerate(rows):
        middle = top_margin + row_height * i + row_height / 2
        parts.append(text(left - 6, middle + 4, short(label), "end", INK, title=label))
        if e.mean is None:
            continue
        if e.low is not None:
            parts += [line(x(e.low), middle, x(e.high), middle, INK)]
        tip = f"{label}: {e.mean:.0f}, n={e.n}" + ("" if e.low is None else f", [{e.low:.0f}, {e.high:.0f}]")
        parts.append(
            f"<circle cx='{x(e.mean):.1f}' cy='{middle:.1f}' r='5' fill='{color}'><title>{html.escape(tip)}</title></circle>"
        )
        parts.append(
            text(
                min(x(e.high if e.high is not None else e.mean) + 6, right + 2),
                middle + 4,
                f"{e.mean:.0f}",
                "start",
                INK,
            )
        )
    return svg(axis_y + 20, description, parts)
