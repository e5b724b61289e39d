"""``render_mode="rgb_array"``: a few positions drawn pixel for pixel as their reviewed reference frames.

The other frame tests hold what a frame shows (which dice, which rows, who is to play) wherever it is drawn;
these hold the drawing itself (every colour's shade, every line's place and weight, every text's size), so a
change to how a frame looks is made on purpose: redraw the references and look at them.

    python -m tests.yacht_env.test_render_reference_frames    # redraw tests/yacht_env/reference_frames/

Text is drawn by Pillow's built-in font through FreeType, whose rendering changes between versions, so the
references hold for the versions they were drawn with (``versions.json``, those of ``constraints.txt``) and
the test is skipped, saying so, under others.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from yacht_env.render_rgb import Seat, held_dice, render_frame
from yacht_env.rules import RULE_SETS, YACHT, RuleSet

PIL = pytest.importorskip("PIL", reason="frames need Pillow: pip install 'yacht-rl[render]'")
from PIL import Image, features  # noqa: E402

REFERENCES = Path(__file__).with_name("reference_frames")
YAHTZEE = RULE_SETS["yahtzee"]
EIGHT_FACED = RuleSet("eight_faced", categories=YACHT.categories[:8], num_dice=4, num_faces=8, rolls_per_turn=2)
SEVEN_DICE = RuleSet("seven_dice", categories=YACHT.categories, num_dice=7, num_faces=6, rolls_per_turn=3)


def positions() -> dict[str, np.ndarray]:
    """Each reference position, named, as drawn now."""
    yacht_sheet = [None, 4, None, 12, None, None, 23, None, 0, None, None, None]
    yahtzee_done = [3, 6, 9, 12, 15, 18, 22, 0, 25, 30, 0, 50, 21]
    yahtzee_open = [2, None, 9, None, None, 24, None, None, 25, None, None, 0, None]
    return {
        # mid-turn, one re-roll left, three dice kept by the last re-roll
        "yacht_mid_turn": render_frame(
            YACHT, [2, 4, 4, 4, 6], 1, yacht_sheet, 5, held=held_dice([1, 4, 4, 4, 5], 0b10001, [2, 4, 4, 4, 6])
        ),
        # a table of three under bonus rules: the upper note, the scoreboard, the player to play
        "yahtzee_table": render_frame(
            YAHTZEE,
            [3, 3, 5, 6, 6],
            2,
            yahtzee_open,
            6,
            title="agent (seat 1 of 3)",
            seats=[Seat("agent", 60, 8, to_play=True), Seat("optimal", 71, 7), Seat("win", 55, 7)],
        ),
        # the game over at a table of two: the final score, the winner
        "yahtzee_game_over": render_frame(
            YAHTZEE, None, 0, yahtzee_done, 13, seats=[Seat("agent", 246, 0, winner=True), Seat("optimal", 230, 0)]
        ),
        # dice of more than six faces show their number
        "eight_faced": render_frame(EIGHT_FACED, [1, 7, 8, 8], 1, [None, 2, None, None, None, 6, None, None], 2),
        # seven dice: narrower, and a row whose margin is an odd number of pixels
        "seven_dice": render_frame(SEVEN_DICE, [1, 2, 3, 3, 4, 5, 6], 0, [None] * 12, 1),
    }


def versions() -> dict[str, str]:
    return {"pillow": PIL.__version__, "freetype2": str(features.version("freetype2"))}


def write_references() -> None:
    """Draw every reference frame again (after a change to how frames look, on purpose)."""
    REFERENCES.mkdir(exist_ok=True)
    for name, frame in positions().items():
        Image.fromarray(frame).save(REFERENCES / f"{name}.png", optimize=True)
    (REFERENCES / "versions.json").write_text(json.dumps(versions(), indent=2) + "\n")


def test_each_position_is_drawn_as_its_reference_frame_pixel_for_pixel(tmp_path):
    drawn_with = json.loads((REFERENCES / "versions.json").read_text())
    if drawn_with != versions():
        pytest.skip(f"reference frames drawn with {drawn_with}; this is {versions()}: text renders otherwise")
    drawn = positions()
    assert sorted(drawn) == sorted(path.stem for path in REFERENCES.glob("*.png"))  # no reference left over
    for name, frame in drawn.items():
        reference = np.asarray(Image.open(REFERENCES / f"{name}.png").convert("RGB"))
        if not np.array_equal(frame, reference):
            Image.fromarray(frame).save(tmp_path / f"{name}.png")
            rows, columns = np.nonzero((frame != reference).any(axis=-1))
            pytest.fail(
                f"{name}: {len(rows)} pixels differ, rows {rows.min()}..{rows.max()}, columns "
                f"{columns.min()}..{columns.max()}; drawn now: {tmp_path / name}.png"
            )


if __name__ == "__main__":
    write_references()
    print(f"reference frames written to {REFERENCES}", file=sys.stderr)
