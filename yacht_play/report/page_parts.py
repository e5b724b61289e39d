"""The pieces every part of the report's page is made of: figure cells (mean, then interval and ``n``), plain cells,
tables, cards, the site's colours. Every text goes through ``html.escape``.
"""

from __future__ import annotations

import html

from yacht_play.report.results import Estimate
from yacht_play.report.text import figure

e = html.escape
AGENT_COLOR, PEOPLE_COLOR = "#2563eb", "#f59e0b"  # the site's agent blue and accent


def cell(estimate: Estimate, label: str, digits: int = 3, percent: bool = False) -> str:
    """A figure's cell: its mean, then its interval and ``n`` (or why it has no interval) on a second line."""
    if estimate.mean is None:
        return f"<td class='num' data-label='{e(label)}'><span>–<small>{e(estimate.note or 'no data')}</small></span></td>"
    fmt = (lambda v: f"{v * 100:.1f}%") if percent else (lambda v: f"{v:.{digits}f}")
    if estimate.low is not None:
        detail = f"[{fmt(estimate.low)}, {fmt(estimate.high)}] n={estimate.n}"
    else:
        detail = f"n={estimate.n}, no interval"
    tip = f" title='{e(figure(estimate, digits, percent))}'"
    return f"<td class='num' data-label='{e(label)}'{tip}><span>{fmt(estimate.mean)}<small>{e(detail)}</small></span></td>"


def plain(value, label: str, number: bool = False) -> str:
    """A cell of plain text (a name, a count)."""
    return f"<td{' class=num' if number else ''} data-label='{e(label)}'><span>{e(str(value))}</span></td>"


def html_table(caption: str, headers: list[str], rows: list[str], empty: str) -> str:
    """A table (its rows already made of cells), or the ``empty`` line when it has no rows."""
    if not rows:
        return f"<p class='muted'>{e(empty)}</p>"
    head = "".join(f"<th scope='col'>{e(h)}</th>" for h in headers)
    body = "".join(f"<tr>{row}</tr>" for row in rows)
    return (
        f"<table class='report'><caption class='visually-hidden'>{e(caption)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def card(title: str, *parts: str) -> str:
    """A section of the page: a card with its heading."""
    return f"<section class='card'><h2>{e(title)}</h2>{''.join(parts)}</section>"
