"""The text of a position and of score sheets (yacht_env.render), read back cell by cell under its column labels."""

from __future__ import annotations

import pytest

from yacht_env.render import (
    open_bits_of,
    render_dice,
    render_position,
    render_sheet,
    report_console,
    sheet_total,
    upper_bonus_earned,
    upper_subtotal,
)
from yacht_env.rules import RULE_SETS, YACHT

YAHTZEE = RULE_SETS["yahtzee"]


def cells(lines: list[str]) -> dict[str, dict[str, str]]:
    """``{row name: {column label: cell}}`` of a rendered sheet: each cell is what stands between the end of the
    column before and the end of its own label, right-aligned under it."""
    header = lines[0]
    labels = header.split()[2:]  # after "#" and "row"
    ends, start = [], len(header.split("row")[0]) + 3
    for label in labels:
        start = header.index(label, start) + len(label)
        ends.append(start)
    table = {}
    for line in lines[1:]:
        name = line[5:].split("  ")[0].strip()  # after the row number, if any
        starts = [ends[0] - 5 - 2, *ends[:-1]]
        row = {}
        for label, begin, end in zip(labels, starts, ends):
            text = line[begin:end]
            assert line[end : end + 1] in ("", " "), (line, label)  # right-aligned: nothing runs past the label's end
            row[label] = text.strip()
        table[name] = row
    return table


def test_dice_are_shown_with_their_positions():
    assert render_dice([2, 2, 4, 4, 6]) == "1:[2] 2:[2] 3:[4] 4:[4] 5:[6]"


def test_a_position_in_play_shows_its_turn_dice_sheet_and_what_the_dice_would_score_now():
    sheet = [3, None, 9] + [None] * 9
    dice = [2, 2, 4, 4, 6]
    lines = render_position(YACHT, dice, 2, sheet, 3, title="ann").splitlines()
    assert lines[0] == "ann  Turn 3/12   rolls left 2   total 12"
    assert lines[1] == "Dice  1:[2] 2:[2] 3:[4] 4:[4] 5:[6]"
    table = cells(lines[2:])
    assert [line[:3] for line in lines[3:15]] == [f"{c:>3}" for c in range(1, 13)]  # each row numbered as s takes it
    assert [line[5:].split("  ")[0] for line in lines[3:15]] == [category.title for category in YACHT.categories]
    now = YACHT.scores_now(dice, open_bits_of(sheet))
    for c, category in enumerate(YACHT.categories):
        assert table[category.title] == {
            "score": "" if sheet[c] is None else str(sheet[c]),
            "now": str(now[c]) if c in now else "",
        }
    assert table["Total"] == {"score": "12", "now": ""}


def test_a_finished_sheet_or_one_without_dice_has_no_now_column():
    full = [1, 2, 3, 4, 5, 6, 20, 0, 25, 30, 0, 50]
    lines = render_position(YACHT, [1, 1, 1, 1, 1], 0, full, 13).splitlines()
    assert lines[0] == "Game over. Final score 146" and not any(line.startswith("Dice") for line in lines)
    assert lines[1].split()[-1] == "score"
    waiting = render_position(YACHT, None, 3, [None] * 12, 1, title="bob").splitlines()
    assert waiting[0] == "bob  Turn 1/12   rolls left 3   total 0" and waiting[1].split()[-1] == "score"


@pytest.mark.parametrize("subtotal, bonus", [(62, 0), (63, 35)])
def test_the_upper_bonus_comes_at_its_threshold_with_its_lines(subtotal, bonus):
    sheet = [3, 6, 9, 12, 15, subtotal - 45] + [None] * 7
    assert (upper_subtotal(YAHTZEE, sheet), upper_bonus_earned(YAHTZEE, sheet)) == (subtotal, bonus)
    assert sheet_total(YAHTZEE, sheet) == subtotal + bonus
    table = cells(render_sheet(YAHTZEE, [("ann", sheet), ("bob", [None] * 13)]))
    assert table["Upper subtotal"] == {"ann": f"{subtotal}/63", "bob": "0/63"}
    assert table["Bonus (35)"] == {"ann": str(bonus or ""), "bob": ""}
    assert table["Yahtzee bonus (100)"] == {"ann": "", "bob": ""}
    assert table["Total"] == {"ann": str(subtotal + bonus), "bob": "0"}


def test_an_extra_yahtzee_bonus_is_what_the_total_holds_beyond_the_rows_and_the_upper_bonus():
    sheet = [3, 6, 9, 12, 15, 18] + [None] * 5 + [50, None]
    table = cells(render_sheet(YAHTZEE, [("ann", sheet, 98 + 50 + 100)], now=(0, [5, 5, 5, 5, 5])))
    assert table["Yahtzee bonus (100)"]["ann"] == "100" and table["Total"]["ann"] == "248"
    assert table["Yahtzee"] == {"ann": "50", "now": ""}  # a filled row: nothing to score there now
    assert table["Chance"]["now"] == "25"


def test_rules_without_bonuses_have_no_bonus_lines():
    sheet = [5, 10, 15, 20, 25, 30] + [None] * 6
    assert upper_bonus_earned(YACHT, sheet) == 0 and sheet_total(YACHT, sheet) == 105
    assert [name for name in cells(render_sheet(YACHT, [("ann", sheet)]))][-1:] == ["Total"]
    assert "Bonus" not in "\n".join(render_sheet(YACHT, [("ann", sheet)]))


def test_a_sheet_s_open_rows_are_its_bit_set():
    assert open_bits_of([None, 3, None]) == 0b101 and open_bits_of([1, 2]) == 0 and open_bits_of([None] * 12) == 4095


def test_report_tables_take_160_columns_where_the_output_is_no_terminal():
    assert report_console().width == 160  # pytest captures the output: not a terminal


def test_the_now_column_follows_only_the_column_it_is_asked_after():
    lines = render_sheet(YACHT, [("ann", [None] * 12), ("bob", [None] * 12)], now=(0, [6, 6, 6, 6, 6]))
    assert lines[0].split()[2:] == ["ann", "now", "bob"]
    assert cells(lines)["Yacht"] == {"ann": "", "now": "50", "bob": ""}
