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
    lines += render_sheet(rules, [("score", sheet)], now=None if finished or dice is None else (0, dice))
    return "\n".join(lines)


def render_sheet(
    rules: RuleSet,
    columns: Sequence[tuple[str, Sequence[int | None]]],
    now: tuple[int, Sequence[int]] | None = None,
) -> list[str]:
    """The score sheet as lines: one column per ``(label, sheet)``, a row per category, the totals.

    ``now = (column, dice)`` adds a ``now`` column after that column: what each of its open rows
    would score with ``dice``. Every score sheet the project prints (envs, tables, terminal play)
    is drawn here.
    """
    cells = []  # (label, one cell per row, total)
    for index, (label, sheet) in enumerate(columns):
        total = sum(points for points in sheet if points is not None)
        cells.append((label, ["" if points is None else str(points) for points in sheet], str(total)))
        if now is not None and now[0] == index:
            scores = rules.score_table[rules.hand(list(now[1]))]
            cells.append(("now", ["" if points is not None else str(int(scores[c])) for c, points in enumerate(sheet)], ""))
    widths = [max(5, len(label)) for label, _, _ in cells]

    def line(start: str, row) -> str:
        return start + "".join(f"  {cell:>{width}}" for cell, width in zip(row, widths))

    lines = [line(f"{'#':>3}  {'row':<16}", [label for label, _, _ in cells])]
    for c, category in enumerate(rules.categories):
        lines.append(line(f"{c + 1:>3}  {category.title:<16}", [column[c] for _, column, _ in cells]))
    lines.append(line(f"     {'Total':<16}", [total for _, _, total in cells]))
    return lines


def report_console():
    """A rich console for report tables: the terminal's width, or 160 columns in pipes and logs
    (rich's default of 80 would fold the tables' columns).
    """
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=160)
