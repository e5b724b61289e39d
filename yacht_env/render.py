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
    total: int | None = None,
) -> str:
    """The dice, rolls left and score sheet; open rows show what the dice would score there now.

    ``sheet[c]`` is the points written in category ``c`` or None while it is open; ``turn`` is the
    1-based turn being played (``num_turns + 1`` once the sheet is full). ``total``: the points so
    far, bonuses included (see :func:`sheet_total` for what is assumed without it).
    """
    total = sheet_total(rules, sheet) if total is None else int(total)
    finished = all(points is not None for points in sheet)
    header = f"{title}  " if title else ""
    if finished:
        lines = [f"{header}Game over. Final score {total}"]
    else:
        lines = [f"{header}Turn {turn}/{rules.num_turns}   rolls left {rolls_left}   total {total}"]
        if dice is not None:
            lines.append(f"Dice  {render_dice(dice)}")
    lines += render_sheet(rules, [("score", sheet, total)], now=None if finished or dice is None else (0, dice))
    return "\n".join(lines)


def upper_subtotal(rules: RuleSet, sheet: Sequence[int | None]) -> int:
    """Points written in the rows that count toward the upper bonus."""
    return sum(points for points, category in zip(sheet, rules.categories) if category.upper and points is not None)


def upper_bonus_earned(rules: RuleSet, sheet: Sequence[int | None]) -> int:
    """The upper bonus a sheet has earned (0 until its upper rows reach the threshold, or without one)."""
    return rules.bonus_points if rules.bonus_points and upper_subtotal(rules, sheet) >= rules.bonus_threshold else 0


def sheet_total(rules: RuleSet, sheet: Sequence[int | None]) -> int:
    """The points written plus the upper bonus: a sheet's total when no extra-Yahtzee bonus was earned
    (that one cannot be read off the rows; pass the game's total where the rules have it).
    """
    return sum(points for points in sheet if points is not None) + upper_bonus_earned(rules, sheet)


def render_sheet(
    rules: RuleSet,
    columns: Sequence[tuple],
    now: tuple[int, Sequence[int]] | None = None,
) -> list[str]:
    """The score sheet as lines: one column per ``(label, sheet)`` or ``(label, sheet, total)``, a row
    per category, the bonus lines of the rules (upper subtotal and bonus, extra-Yahtzee bonus) and
    the totals. ``total`` counts bonuses; without it, :func:`sheet_total`.

    ``now = (column, dice)`` adds a ``now`` column after that column: what each of its open rows
    would score with ``dice`` (at joker values where the dice are a joker). Every score sheet the
    project prints (envs, tables, terminal play) is drawn here.
    """
    cells = []  # (label, one cell per row, bonus cells, total)
    for index, column in enumerate(columns):
        label, sheet = column[0], column[1]
        total = sheet_total(rules, sheet) if len(column) < 3 or column[2] is None else int(column[2])
        bonus_cells = []
        if rules.bonus_points:
            bonus = upper_bonus_earned(rules, sheet)
            bonus_cells += [f"{upper_subtotal(rules, sheet)}/{rules.bonus_threshold}", str(bonus) if bonus else ""]
        if rules.yahtzee_bonus:
            extra = total - sum(points for points in sheet if points is not None) - upper_bonus_earned(rules, sheet)
            bonus_cells.append(str(extra) if extra else "")
        cells.append((label, ["" if points is None else str(points) for points in sheet], bonus_cells, str(total)))
        if now is not None and now[0] == index:
            cells.append(("now", _now_cells(rules, sheet, now[1]), [""] * len(bonus_cells), ""))
    widths = [max(5, len(label)) for label, *_ in cells]
    bonus_labels = (["Upper subtotal", f"Bonus ({rules.bonus_points})"] if rules.bonus_points else []) + (
        [f"Yahtzee bonus ({rules.yahtzee_bonus})"] if rules.yahtzee_bonus else []
    )
    name_width = max([16, *(len(category.title) for category in rules.categories), *(len(label) for label in bonus_labels)])

    def line(start: str, row) -> str:
        return start + "".join(f"  {cell:>{width}}" for cell, width in zip(row, widths))

    lines = [line(f"{'#':>3}  {'row':<{name_width}}", [label for label, *_ in cells])]
    for c, category in enumerate(rules.categories):
        lines.append(line(f"{c + 1:>3}  {category.title:<{name_width}}", [column[c] for _, column, _, _ in cells]))
    for b, bonus_label in enumerate(bonus_labels):
        lines.append(line(f"     {bonus_label:<{name_width}}", [bonus[b] for _, _, bonus, _ in cells]))
    lines.append(line(f"     {'Total':<{name_width}}", [total for *_, total in cells]))
    return lines


def _now_cells(rules: RuleSet, sheet: Sequence[int | None], dice: Sequence[int]) -> list[str]:
    """What ``dice`` would score in each row the rules let them go in now; blank elsewhere."""
    now = rules.scores_now(list(dice), open_bits_of(sheet))
    return [str(now[c]) if c in now else "" for c in range(len(sheet))]


def open_bits_of(sheet: Sequence[int | None]) -> int:
    """The open-row bit set of a sheet (bit ``c`` set while row ``c`` holds None)."""
    return sum(1 << c for c, points in enumerate(sheet) if points is None)


def report_console():
    """A rich console for report tables: the terminal's width, or 160 columns in pipes and logs
    (rich's default of 80 would fold the tables' columns).
    """
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=160)
