"""Picture of a Yacht position as an RGB frame: the dice as pips, rolls left and the score sheet.

The frames behind ``render_mode="rgb_array"`` (and so behind ``gymnasium.wrappers.RecordVideo``):
:func:`render_frame` takes what :func:`yacht_env.render.render_position` takes, plus the dice the
last re-roll kept and, at a table, every player's total, and returns an ``(FRAME_HEIGHT,
FRAME_WIDTH, 3)`` uint8 array. Drawing needs Pillow (``pip install "yacht-rl[render]"``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from yacht_env.render import open_bits_of, sheet_total, upper_subtotal
from yacht_env.rules import RuleSet

FRAME_WIDTH, FRAME_HEIGHT = 640, 480  # multiples of 16, as video encoders want

BACKGROUND = (22, 94, 62)  # card-table green
PANEL = (250, 247, 238)
INK = (32, 34, 38)
MUTED = (120, 124, 130)
GRID = (214, 208, 194)
DIE = (255, 255, 255)
HELD = (240, 176, 32)
NOW = (20, 120, 70)
ZERO_NOW = (176, 96, 86)
LIGHT_TEXT = (238, 244, 236)


@dataclass(frozen=True)
class Seat:
    """One player's line in a table frame's scoreboard."""

    name: str
    total: int
    open_rows: int
    to_play: bool = False
    winner: bool = False


def require_pillow():
    """Pillow's drawing modules, or a one-line ``ImportError`` naming the extra that installs them."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise ImportError(
            'render_mode="rgb_array" draws with Pillow, which is not installed: pip install "yacht-rl[render]"'
        ) from None
    return Image, ImageDraw, ImageFont


@functools.lru_cache(maxsize=None)
def font(size: int):
    """Pillow's built-in scalable font (no file or network needed)."""
    _, _, ImageFont = require_pillow()
    return ImageFont.load_default(size=size)


def held_dice(previous: Sequence[int], reroll_mask: int, dice: Sequence[int]) -> list[bool]:
    """Which of the (sorted) ``dice`` stayed on the table when ``reroll_mask`` re-rolled ``previous``.

    Bit ``i`` of the mask re-rolls die ``i`` of the sorted ``previous`` dice; after the roll the dice
    are sorted again, so the kept ones are found by face: each kept face marks one die showing it.
    """
    kept = [int(face) for i, face in enumerate(previous) if not reroll_mask >> i & 1]
    held = []
    for face in dice:
        if int(face) in kept:
            kept.remove(int(face))
            held.append(True)
        else:
            held.append(False)
    return held


PIP_SPOTS = {  # (column, row) in a 3x3 grid
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (2, 0), (0, 2), (2, 2)],
    5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
    6: [(0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)],
}


def draw_die(draw, x: int, y: int, size: int, face: int, held: bool) -> None:
    """One die of ``size`` pixels at ``(x, y)``: its pips, and a mark under it when ``held``."""
    radius = size // 6
    if held:
        pad = 5
        draw.rounded_rectangle((x - pad, y - pad, x + size + pad, y + size + pad), radius + pad, fill=HELD)
    draw.rounded_rectangle((x, y, x + size, y + size), radius, fill=DIE, outline=INK, width=2)
    if face in PIP_SPOTS:
        pip = size // 10
        for column, row in PIP_SPOTS[face]:
            cx = x + size * (0.25 + 0.25 * column)
            cy = y + size * (0.25 + 0.25 * row)
            draw.ellipse((cx - pip, cy - pip, cx + pip, cy + pip), fill=INK)
    else:  # dice with more than six faces show the number
        draw.text((x + size / 2, y + size / 2), str(face), font=font(size // 2), fill=INK, anchor="mm")


def render_frame(
    rules: RuleSet,
    dice: Sequence[int] | None,
    rolls_left: int,
    sheet: Sequence[int | None],
    turn: int,
    held: Sequence[bool] | None = None,
    title: str = "",
    seats: Sequence[Seat] = (),
    total: int | None = None,
) -> np.ndarray:
    """The position as an ``(FRAME_HEIGHT, FRAME_WIDTH, 3)`` uint8 RGB frame.

    ``dice`` (sorted), ``rolls_left``, ``sheet`` (points per row, None while open) and ``turn``
    (1-based) are as for :func:`~yacht_env.render.render_position`; ``dice=None`` or a full sheet
    draws the finished game. ``held[i]`` marks die ``i`` as kept by the last re-roll (see
    :func:`held_dice`). ``seats`` adds a scoreboard with every player's total at a table.
    ``total``: the points so far, bonuses included (default :func:`~yacht_env.render.sheet_total`).
    """
    Image, ImageDraw, _ = require_pillow()
    image = Image.new("RGB", (FRAME_WIDTH, FRAME_HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    total = sheet_total(rules, sheet) if total is None else int(total)
    finished = dice is None or all(points is not None for points in sheet)
    scoreboard_height = 52 if seats else 0
    draw_header(draw, rules, title, turn, None if finished else rolls_left)
    if finished:
        draw.text(
            (FRAME_WIDTH / 2, (DICE_TOP + DICE_BOTTOM) / 2), f"Final score {total}", font=font(40), fill=LIGHT_TEXT, anchor="mm"
        )
        hand = None
    else:
        assert dice is not None  # not finished: there are dice on the table
        draw_dice(draw, dice, held)
        hand = rules.hand(list(dice))
    draw_sheet(draw, rules, sheet, hand, total, FRAME_HEIGHT - 12 - scoreboard_height)
    if seats:
        draw_scoreboard(draw, seats, FRAME_HEIGHT - scoreboard_height + 4)
    return np.asarray(image, dtype=np.uint8)


DICE_TOP, DICE_BOTTOM = 48, 148  # the band of the dice, below the header


def draw_header(draw, rules: RuleSet, title: str, turn: int, rolls_left: int | None) -> None:
    """The title and turn, and one light per re-roll, lit while it is still to use; ``rolls_left`` None: game over."""
    header = f"{title}  ·  " if title else ""
    if rolls_left is None:
        draw.text((20, 22), f"{header}Game over", font=font(22), fill=LIGHT_TEXT, anchor="lm")
        return
    draw.text((20, 22), f"{header}Turn {turn}/{rules.num_turns}", font=font(22), fill=LIGHT_TEXT, anchor="lm")
    rolls = rules.rolls_per_turn - 1
    right = FRAME_WIDTH - 20
    for r in range(rolls):
        cx = right - 9 - 26 * (rolls - 1 - r)
        lit = r < rolls_left
        draw.ellipse((cx - 9, 13, cx + 9, 31), fill=HELD if lit else BACKGROUND, outline=LIGHT_TEXT, width=2)
    label = f"re-rolls left {rolls_left}"
    draw.text((right - 26 * rolls - 6, 22), label, font=font(18), fill=LIGHT_TEXT, anchor="rm")


def draw_dice(draw, dice: Sequence[int], held: Sequence[bool] | None) -> None:
    """The dice in a centred row, those the last re-roll kept marked "held"."""
    count = len(dice)
    size = min(72, (FRAME_WIDTH - 40) // count - 22)
    gap = size // 3
    left = (FRAME_WIDTH - count * size - (count - 1) * gap) // 2
    for i, face in enumerate(dice):
        is_held = bool(held[i]) if held is not None and i < len(held) else False
        x = left + i * (size + gap)
        draw_die(draw, x, DICE_TOP + 6, size, int(face), is_held)
        if is_held:
            draw.text((x + size / 2, DICE_BOTTOM), "held", font=font(14), fill=HELD, anchor="ms")


def draw_sheet(draw, rules: RuleSet, sheet: Sequence[int | None], hand: int | None, total: int, bottom: int) -> None:
    """The score sheet down to ``bottom``: two columns of rows, then the open count, upper subtotal and total.

    Open rows show what ``hand`` (None when the game is over) would score there now.
    """
    now_scores = {} if hand is None else rules.scores_now(hand, open_bits_of(sheet))  # the rows these dice may go in now
    top = 160
    draw.rounded_rectangle((12, top, FRAME_WIDTH - 12, bottom), 10, fill=PANEL)
    per_column = -(-rules.num_rows // 2)
    row_height = min(34, (bottom - top - 50) // per_column)
    column_width = (FRAME_WIDTH - 24) // 2
    for c, category in enumerate(rules.categories):
        column, row = divmod(c, per_column)
        x = 12 + column * column_width
        y = top + 10 + row * row_height
        middle = y + row_height / 2
        if row:
            draw.line((x + 14, y, x + column_width - 14, y), fill=GRID, width=1)
        points = sheet[c]
        draw.text((x + 20, middle), category.title, font=font(18), fill=INK if points is None else MUTED, anchor="lm")
        if points is not None:
            draw.text((x + column_width - 24, middle), str(points), font=font(20), fill=INK, anchor="rm")
        elif c in now_scores:
            now = now_scores[c]
            text, colour = (f"+{now}", NOW) if now else ("0", ZERO_NOW)
            draw.text((x + column_width - 24, middle), text, font=font(18), fill=colour, anchor="rm")
    if rules.num_rows > 1:
        draw.line((12 + column_width, top + 10, 12 + column_width, top + 10 + per_column * row_height), fill=GRID, width=2)
    total_y = top + 10 + per_column * row_height + 6
    draw.line((26, total_y, FRAME_WIDTH - 26, total_y), fill=INK, width=2)
    open_rows = sum(points is None for points in sheet)
    note = f"{open_rows} open"
    if rules.bonus_points:
        note += f"  ·  upper {upper_subtotal(rules, sheet)}/{rules.bonus_threshold}"
    draw.text((32, (total_y + bottom) / 2), note, font=font(16), fill=MUTED, anchor="lm")
    draw.text((FRAME_WIDTH - 36, (total_y + bottom) / 2), f"Total  {total}", font=font(22), fill=INK, anchor="rm")


def draw_scoreboard(draw, seats: Sequence[Seat], y: int) -> None:
    """Every player's name and total in one line from ``y`` down: who is to play, or who won."""
    width = (FRAME_WIDTH - 40) // len(seats)
    for s, seat in enumerate(seats):
        x = 20 + s * width
        note = "  (to play)" if seat.to_play else ("  wins" if seat.winner else "")
        color = HELD if seat.to_play or seat.winner else LIGHT_TEXT
        draw.text((x, y + 10), f"{seat.name}{note}", font=font(16), fill=color, anchor="lm")
        draw.text((x, y + 30), f"{seat.total} pts, {seat.open_rows} open", font=font(15), fill=LIGHT_TEXT, anchor="lm")
