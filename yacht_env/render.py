"""Text rendering of a Yacht position: dice, rolls left and the whole score sheet."""

from __future__ import annotations

from typing import Sequence

from yacht_env.rules import RuleSet


def render_dice(dice: Sequence[int]) -> str:
    """Dice with their positions, e.g. ``1:[2] 2:[2] 3:[4] 4:[4] 5:[6]``."""
    return " ".join(f"{i + 1}:[{int(d)}]" for i, d in enumerate(dice))


def render_position(
    rules: RuleSet,
    dice: Sequence[int] | None,
    rolls_left: int,
    sheet: Sequence[int | None],
    turn: int,
    title: str = "",
) -> str:
    """The dice, rolls left and score sheet; open rows show what the dice would score there now.

    ``sheet[c]`` is the points written in category ``c`` or None while it is open; ``turn`` is the
    1-based turn being played (``num_turns + 1`` once the sheet is full).
    """
    total = sum(points for points in sheet if points is not None)
    finished = all(points is not None for points in sheet)
    header = f"{title}  " if title else ""
    if finished:
        lines = [f"{header}Game over. Final score {total}"]
    else:
        lines = [f"{header}Turn {turn}/{rules.num_turns}   rolls left {rolls_left}   total {total}"]
        if dice is not None:
            lines.append(f"Dice  {render_dice(dice)}")
    lines.append(f"{'#':>3}  {'row':<16}{'score':>6}{'now':>6}")
    hand = rules.hand(list(dice)) if dice is not None and not finished else None
    for c, category in enumerate(rules.categories):
        points = sheet[c]
        written = "" if points is None else str(points)
        now = "" if points is not None or hand is None else str(int(rules.score_table[hand, c]))
        lines.append(f"{c + 1:>3}  {category.title:<16}{written:>6}{now:>6}")
    lines.append(f"     {'Total':<16}{total:>6}")
    return "\n".join(lines)


def report_console():
    """A rich console for report tables: the terminal's width, or 160 columns in pipes and logs
    (rich's default of 80 would fold the tables' columns).
    """
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=160)
