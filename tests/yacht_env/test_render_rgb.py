"""``render_mode="rgb_array"``: frames of every env, the drawing itself, and videos."""

from __future__ import annotations

import importlib.util
import sys

import gymnasium as gym
import numpy as np
import pytest

from agents.registry import make_opponents
from yacht_env import YachtEnv
from yacht_env.actions import ActionLayout
from yacht_env.render_rgb import (
    BACKGROUND,
    DIE,
    FRAME_HEIGHT,
    FRAME_WIDTH,
    GRID,
    HELD,
    INK,
    LIGHT_TEXT,
    MUTED,
    NOW,
    PANEL,
    ZERO_NOW,
    Seat,
    held_dice,
    render_frame,
)
from yacht_env.rules import CATEGORIES, RULE_SETS, YACHT, RuleSet
from yacht_env.table.env import YachtTableEnv
from yacht_env.table.pettingzoo_env import YachtMultiplayerEnv
from yacht_env.vector_env import YachtVectorEnv

pytest.importorskip("PIL", reason="frames need Pillow: pip install 'yacht-rl[render]'")

SCORE = YACHT.dice.num_rerolls
SHAPE = (FRAME_HEIGHT, FRAME_WIDTH, 3)
DICE_BAND = slice(40, 150)  # rows of the frame that show the dice
SHEET_BAND = slice(160, FRAME_HEIGHT)


def is_frame(frame) -> bool:
    return isinstance(frame, np.ndarray) and frame.shape == SHAPE and frame.dtype == np.uint8


def held_pixels(frame) -> int:
    """Pixels in the dice band painted in the held-die colour."""
    return int(np.all(frame[DICE_BAND] == HELD, axis=-1).sum())


def test_env_frames_follow_the_game():
    env = gym.make("Yacht-v0", render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"] and env.metadata["render_fps"] > 0
    env.reset(seed=3)
    first = env.render()
    assert is_frame(first) and first.std() > 10  # a picture, not a blank
    assert held_pixels(first) == 0  # nothing kept before the first re-roll

    env.step(0b00011)  # re-roll the two lowest dice, keep three
    rerolled = env.render()
    assert is_frame(rerolled) and not np.array_equal(rerolled, first)
    assert held_pixels(rerolled) > 0

    env.step(SCORE + CATEGORIES.index("choice"))
    scored = env.render()
    assert not np.array_equal(scored[SHEET_BAND], rerolled[SHEET_BAND])  # the written row and the total
    assert held_pixels(scored) == 0  # a new turn keeps nothing

    env.step(0)  # illegal: nothing changes, nor does the picture
    assert np.array_equal(env.render(), scored)


def test_a_frame_draws_exactly_its_position():
    sheet = [None, 4, None, 12, None, None, 23, None, 0, None, None, None]
    frame = render_frame(YACHT, [2, 4, 4, 4, 6], 1, sheet, 4)
    assert is_frame(frame)
    assert np.array_equal(frame, render_frame(YACHT, [2, 4, 4, 4, 6], 1, list(sheet), 4))  # pure
    for other in (
        render_frame(YACHT, [2, 4, 4, 5, 6], 1, sheet, 4),  # one die
        render_frame(YACHT, [2, 4, 4, 4, 6], 0, sheet, 4),  # rolls left
        render_frame(YACHT, [2, 4, 4, 4, 6], 1, sheet[:11] + [50], 4),  # a written row
    ):
        assert not np.array_equal(frame, other)
    one_held = render_frame(YACHT, [2, 4, 4, 4, 6], 1, sheet, 4, held=[True, False, False, False, False])
    two_held = render_frame(YACHT, [2, 4, 4, 4, 6], 1, sheet, 4, held=[True, False, False, False, True])
    assert 0 < held_pixels(one_held) < held_pixels(two_held)
    assert held_pixels(frame) == 0


def test_finished_games_and_table_scoreboards_are_drawn():
    full = [3, 6, 9, 12, 15, 18, 23, 0, 0, 15, 30, 50]
    over = render_frame(YACHT, None, 0, full, 12)
    assert is_frame(over)
    seats = [Seat("agent", 181, 0, winner=True), Seat("optimal", 170, 0)]
    with_table = render_frame(YACHT, None, 0, full, 12, seats=seats)
    assert is_frame(with_table) and not np.array_equal(over, with_table)
    other_totals = render_frame(YACHT, None, 0, full, 12, seats=[Seat("agent", 181, 0, winner=True), Seat("optimal", 171, 0)])
    assert not np.array_equal(with_table, other_totals)


def test_held_dice_are_found_by_face_after_sorting():
    # Re-rolling the 1 and the 5 of [1, 4, 4, 4, 5] keeps the three 4s, wherever they land.
    assert held_dice([1, 4, 4, 4, 5], 0b10001, [2, 4, 4, 4, 6]) == [False, True, True, True, False]
    assert held_dice([1, 4, 4, 4, 5], 0b10001, [4, 4, 4, 4, 5]) == [True, True, True, False, False]
    assert held_dice([2, 3, 3, 5, 6], 0b11111, [1, 2, 3, 4, 5]) == [False] * 5


def test_table_frames_show_every_players_total():
    env = YachtTableEnv(opponents=make_opponents(["greedy", "random"]), render_mode="rgb_array")
    _, info = env.reset(seed=2)
    frames = [env.render()]
    rng = np.random.default_rng(0)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        frames.append(env.render())
        done = terminated or truncated
    assert all(is_frame(frame) for frame in frames)
    assert len({frame.tobytes() for frame in frames}) == len(frames)  # every decision changes the picture
    assert "rgb_array" in gym.make("YachtTable-v0", render_mode="rgb_array").metadata["render_modes"]


def test_a_table_frame_draws_the_learner_s_own_sheet_and_seat_and_every_seat_s_total():
    env = YachtTableEnv(opponents=make_opponents(["greedy", "random"]), seat=1, render_mode="rgb_array")
    _, info = env.reset(seed=2)  # greedy, in the first seat, has played its first turn
    dice = YACHT.dice.hands[env.tables.hands[0, 1]]
    greedy = int(info["totals"][0])
    seats = [Seat("greedy", greedy, 11), Seat("agent", 0, 12, to_play=True), Seat("random", 0, 12)]
    expected = render_frame(YACHT, dice, 2, [None] * 12, 1, title="agent (seat 2 of 3)", seats=seats, total=0)
    np.testing.assert_array_equal(env.render(), expected)  # every row open: none drawn with points
    layout, sheet, rng, terminated = ActionLayout(YACHT), [None] * 12, np.random.default_rng(1), False
    while not terminated:  # random rows: some scored 0, some with points
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, points, terminated, _, info = env.step(action)
        if not layout.is_reroll(action):
            sheet[layout.category(action)] = int(points)
    totals = [int(total) for total in info["totals"]]
    assert 0 in sheet and sum(sheet) == totals[1]
    seats = [Seat(name, total, 0, winner=total == max(totals)) for name, total in zip(["greedy", "agent", "random"], totals)]
    expected = render_frame(YACHT, None, 0, sheet, info["turn"], title="agent (seat 2 of 3)", seats=seats, total=totals[1])
    np.testing.assert_array_equal(env.render(), expected)  # the game over: the winner marked


def test_every_env_plays_its_frames_at_one_rate():
    rates = {env.metadata["render_fps"] for env in (YachtEnv, YachtTableEnv, YachtVectorEnv, YachtMultiplayerEnv)}
    assert len(rates) == 1  # a video of any of them shows a decision for as long


def test_vector_frames_are_the_single_env_frames():
    venv = YachtVectorEnv(3, render_mode="rgb_array")
    singles = [YachtEnv(render_mode="rgb_array") for _ in range(3)]
    venv.reset(seed=7)
    for i, env in enumerate(singles):
        env.reset(seed=7 + i)
    rng = np.random.default_rng(1)
    for _ in range(60):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in venv.action_masks()])
        actions[0] = 0 if rng.random() < 0.2 else actions[0]  # now and then an illegal action
        venv.step(actions)
        for env, action in zip(singles, actions.tolist()):
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()  # the vector env restarts an ended game in the same step
        frames = venv.render()
        assert len(frames) == 3
        for frame, env in zip(frames, singles):
            # Below the header (the vector frame names its game) the pictures are the same.
            assert is_frame(frame) and np.array_equal(frame[40:], env.render()[40:])


def test_without_pillow_rgb_array_says_which_extra_to_install(monkeypatch):
    env = YachtEnv(render_mode="rgb_array")  # constructing needs no Pillow: make_vec_env asks for this mode
    env.reset(seed=0)
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"yacht-rl\[render\]"):
        env.render()


@pytest.mark.skipif(importlib.util.find_spec("moviepy") is None, reason="videos need moviepy: pip install 'yacht-rl[video]'")
def test_record_video_writes_a_playable_file(tmp_path):
    env = gym.wrappers.RecordVideo(
        gym.make("Yacht-v0", render_mode="rgb_array"), str(tmp_path), episode_trigger=lambda episode: True, name_prefix="yacht"
    )
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        done, steps = terminated or truncated, steps + 1
    env.close()
    video = tmp_path / "yacht-episode-0.mp4"
    assert video.exists() and video.stat().st_size > 10_000

    from moviepy import VideoFileClip

    with VideoFileClip(str(video)) as clip:
        assert list(clip.size) == [FRAME_WIDTH, FRAME_HEIGHT]
        # One frame at reset and one per step, at the env's render_fps.
        assert clip.duration == pytest.approx((steps + 1) / YachtEnv.metadata["render_fps"], abs=0.3)


@pytest.mark.skipif(importlib.util.find_spec("moviepy") is None, reason="videos need moviepy: pip install 'yacht-rl[video]'")
def test_evaluate_records_a_video_of_each_policy(tmp_path, capsys):
    from agents.evaluate import main

    main(["--video", str(tmp_path), "--policy", "greedy", "--policy", "random", "--video-games", "2", "--seed", "5"])
    written = sorted(path.name for path in tmp_path.glob("*.mp4"))
    assert written == ["greedy-episode-0.mp4", "greedy-episode-1.mp4", "random-episode-0.mp4", "random-episode-1.mp4"]
    names = ["greedy-episode-0.mp4", "greedy-episode-1.mp4", "random-episode-0.mp4", "random-episode-1.mp4"]
    assert capsys.readouterr().out.split() == [str(tmp_path / name) for name in names]
    with pytest.raises(SystemExit):
        main(["--video", str(tmp_path), "--video-games", "0"])
    assert "--video-games must be at least 1, got 0" in capsys.readouterr().err


# --- what a frame shows, read back from its pixels ---------------------------------------------------------------------

HEADER_BAND = slice(8, 36)
DIE_FACES = {  # the pips of each face on a 3 x 3 grid (column, row): the usual die
    1: {(1, 1)},
    2: {(0, 0), (2, 2)},
    3: {(0, 0), (1, 1), (2, 2)},
    4: {(0, 0), (2, 0), (0, 2), (2, 2)},
    5: {(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)},
    6: {(0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)},
}


def painted(frame, colour) -> np.ndarray:
    return np.all(frame == colour, axis=-1)


def runs(flags) -> list[tuple[int, int]]:
    """``(first, last)`` of each run of True in a 1-d array."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], np.asarray(flags, dtype=np.int8), [0]))))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2])]


def blobs(mask) -> list[tuple[float, float, int, int]]:
    """``(row, column, height, width)`` of each 4-connected blob of a boolean image: its centre and its extent."""
    seen, centres = np.zeros_like(mask), []
    for start in zip(*np.nonzero(mask)):
        if seen[start]:
            continue
        stack, cells = [start], []
        seen[start] = True
        while stack:
            r, c = stack.pop()
            cells.append((r, c))
            for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if 0 <= nr < mask.shape[0] and 0 <= nc < mask.shape[1] and mask[nr, nc] and not seen[nr, nc]:
                    seen[nr, nc] = True
                    stack.append((nr, nc))
        spread = np.ptp(cells, axis=0) + 1
        centres.append((*np.mean(cells, axis=0), int(spread[0]), int(spread[1])))
    return centres


def dice_boxes(frame) -> list[tuple[int, int, int, int]]:
    """``(top, bottom, left, right)`` of each die: the white squares in the dice band."""
    white = painted(frame[DICE_BAND], DIE)
    boxes = []
    for left, right in runs(white.any(axis=0)):
        top, bottom = runs(white[:, left : right + 1].any(axis=1))[0]
        boxes.append((top + DICE_BAND.start, bottom + DICE_BAND.start, left, right))
    return boxes


@pytest.mark.parametrize("face", range(1, 7))
def test_each_die_shows_its_face_as_the_pips_of_a_die(face):
    frame = render_frame(YACHT, [face] * 5, 2, [None] * 12, 1)
    for top, bottom, left, right in dice_boxes(frame):
        size = right - left
        inside = frame[top + 4 : bottom - 3, left + 4 : right - 3]
        pips = blobs(painted(inside, INK))
        spots = {(round((c + 4) / size * 4 - 1), round((r + 4) / size * 4 - 1)) for r, c, _, _ in pips}
        assert spots == DIE_FACES[face]
        # every face of a die is symmetric through its centre: so are its pips, to the pixel
        centre = np.array([(bottom - top) / 2 - 4, (right - left) / 2 - 4])
        mirrored = sorted(tuple(np.round(2 * centre - (r, c), 1)) for r, c, _, _ in pips)
        assert np.allclose(mirrored, sorted(tuple(np.round((r, c), 1)) for r, c, _, _ in pips), atol=1.0)


def test_the_dice_stand_in_a_row_centred_on_the_frame_equal_and_evenly_spaced():
    frame = render_frame(YACHT, [1, 2, 3, 5, 6], 2, [None] * 12, 1)
    boxes = dice_boxes(frame)
    assert len(boxes) == 5
    widths = {right - left for _, _, left, right in boxes}
    heights = {bottom - top for top, bottom, _, _ in boxes}
    assert len(widths) == 1 and widths == heights  # squares of one size
    gaps = {b[2] - a[3] for a, b in zip(boxes, boxes[1:])}
    assert len(gaps) == 1 and 0 < gaps.pop() < widths.pop()
    assert abs(boxes[0][2] - (FRAME_WIDTH - 1 - boxes[-1][3])) <= 1  # as far from either side


def test_a_held_die_is_ringed_and_labelled_and_the_others_are_not():
    held = [False, True, False, False, True]
    frame = render_frame(YACHT, [2, 4, 4, 4, 6], 1, [None] * 12, 1, held=held)
    boxes = dice_boxes(frame)
    for (top, bottom, left, right), is_held in zip(boxes, held):
        ring = painted(frame[top - 6 : bottom + 7, left - 6 : right + 7], HELD)
        label = painted(frame[bottom + 1 : bottom + 20, left : right + 1], HELD)
        assert ring[:, :3].any() == ring[:, -3:].any() == is_held  # both sides of the die
        assert label.any() == is_held


def lights(frame) -> list:
    """The re-roll lights of the header, lit or not: its rings (the text's glyphs are smaller)."""
    return [blob for blob in blobs(painted(frame[HEADER_BAND], LIGHT_TEXT)) if min(blob[2:]) >= 17]


@pytest.mark.parametrize("rules, rolls_left", [(YACHT, 2), (YACHT, 1), (YACHT, 0)])
def test_one_light_a_re_roll_is_lit_while_it_is_still_to_use(rules, rolls_left):
    frame = render_frame(rules, [1, 2, 3, 4, 5], rolls_left, [None] * 12, 1)
    lit = sorted(c for _, c, _, _ in blobs(painted(frame[HEADER_BAND], HELD)))
    assert len(lit) == rolls_left
    every = render_frame(rules, [1, 2, 3, 4, 5], 2, [None] * 12, 1)
    all_lit = sorted(c for _, c, _, _ in blobs(painted(every[HEADER_BAND], HELD)))
    assert lit == all_lit[:rolls_left]  # the first ones, at the left
    assert len(lights(frame)) == rules.rolls_per_turn - 1


def test_a_game_of_four_rolls_a_turn_has_three_lights():
    rules = RuleSet("four_rolls", categories=YACHT.categories, rolls_per_turn=4)
    frame = render_frame(rules, [1, 2, 3, 4, 5], 1, [None] * 12, 1)
    assert len(lights(frame)) == 3 and len(blobs(painted(frame[HEADER_BAND], HELD))) == 1


def test_the_sheet_is_a_light_panel_on_the_green_table():
    frame = render_frame(YACHT, [1, 2, 3, 4, 5], 1, [None] * 12, 1)
    assert tuple(frame[4, 4]) == tuple(frame[-4, 4]) == tuple(frame[300, 4]) == BACKGROUND
    panel = frame[SHEET_BAND][10:-20, 20:-20]
    assert painted(panel, PANEL).mean() > 0.8


def sheet_rows(frame) -> list[tuple[int, int]]:
    """The ``(top, bottom)`` of each row of the sheet's left column: between its grid lines, a line's pitch apart, the
    last one above the line drawn under the rows."""
    column = frame[SHEET_BAND, 40:290]
    lines = [r for r in range(column.shape[0]) if painted(column[r], GRID).mean() > 0.9]
    under = next(r for r in range(column.shape[0]) if painted(column[r], INK).mean() > 0.9)
    pitch = lines[1] - lines[0]
    assert np.all(np.diff(lines) == pitch) and lines[-1] + pitch < under
    edges = [lines[0] - pitch, *lines, lines[-1] + pitch]
    return [(a + SHEET_BAND.start + 1, b + SHEET_BAND.start - 1) for a, b in zip(edges, edges[1:])]


def test_open_rows_show_what_the_dice_would_score_now_in_green_or_a_zero_in_red_and_written_rows_neither():
    # the left column: ones (open, scores 0), twos (written), threes, fours, fives (open, score), sixes (open, 0)
    sheet = [None, 4, None, None, None, None, None, None, None, None, None, None]
    frame = render_frame(YACHT, [3, 3, 4, 5, 5], 1, sheet, 2)
    rows = sheet_rows(frame)
    assert len(rows) == 6
    right = slice(200, 310)  # where a row's points are written
    colours = []
    for top, bottom in rows:
        cell = frame[top : bottom + 1, right]
        colours.append((painted(cell, NOW).any(), painted(cell, ZERO_NOW).any()))
    assert colours == [(False, True), (False, False), (True, False), (True, False), (True, False), (False, True)]


def test_each_rows_name_and_points_sit_in_the_middle_of_the_row():
    sheet = [None, 4, None, 12, None, None, 23, None, 0, None, None, None]
    frame = render_frame(YACHT, [3, 3, 4, 5, 5], 1, sheet, 2)
    for top, bottom in sheet_rows(frame):
        row = frame[top : bottom + 1, 20:310]
        inked = np.flatnonzero((np.abs(row.astype(int) - PANEL).sum(axis=-1) > 60).any(axis=1))  # text, not the panel
        assert abs((inked[0] + inked[-1]) / 2 - (bottom - top) / 2) <= 2


def test_the_scoreboard_marks_who_is_to_play_or_who_won():
    full = [3, 6, 9, 12, 15, 18, 23, 0, 0, 15, 30, 50]
    board = slice(FRAME_HEIGHT - 52, FRAME_HEIGHT)
    plain = render_frame(YACHT, None, 0, full, 12, seats=[Seat("a", 181, 0), Seat("b", 170, 0)])
    assert not painted(plain[board], HELD).any()
    for marked in (Seat("a", 181, 0, winner=True), Seat("a", 181, 0, to_play=True)):
        frame = render_frame(YACHT, None, 0, full, 12, seats=[marked, Seat("b", 170, 0)])
        marks = painted(frame[board], HELD)
        assert marks[:, : FRAME_WIDTH // 2].any() and not marks[:, FRAME_WIDTH // 2 :].any()  # the first seat's half


def test_a_finished_game_shows_its_final_score_where_the_dice_were():
    full = [3, 6, 9, 12, 15, 18, 23, 0, 0, 15, 30, 50]
    frame = render_frame(YACHT, None, 0, full, 12)
    words = np.flatnonzero(painted(frame[DICE_BAND], LIGHT_TEXT).any(axis=0))
    assert words.size and abs((words[0] + words[-1]) / 2 - FRAME_WIDTH / 2) <= 4  # centred in the band, to the glyphs
    assert not dice_boxes(frame)


@pytest.mark.parametrize("name", ["yacht", "yahtzee", "yatzy"])
@pytest.mark.parametrize("with_seats", [False, True])
def test_the_sheet_fits_its_panel_with_green_around_it_at_every_rule_set_and_with_a_scoreboard(name, with_seats):
    rules = RULE_SETS[name]
    seats = [Seat("a", 10, 3), Seat("b", 12, 3)] if with_seats else []
    frame = render_frame(rules, [1, 2, 3, 4, 5], 1, [None] * rules.num_rows, 1, seats=seats)
    panel = painted(frame, PANEL)
    rows, columns = np.flatnonzero(panel.any(axis=1)), np.flatnonzero(panel.any(axis=0))
    assert columns[0] > 4 and columns[-1] < FRAME_WIDTH - 5  # green on either side
    assert rows[-1] < FRAME_HEIGHT - (52 if with_seats else 5)  # and under it, or the scoreboard
    column = frame[:, 40:290]
    under = [r for r in range(rows[0], FRAME_HEIGHT) if painted(column[r], INK).mean() > 0.9]
    grid = [r for r in range(rows[0], FRAME_HEIGHT) if painted(column[r], GRID).mean() > 0.9]
    assert under and grid and grid[-1] < under[0] < rows[-1] - 20  # every row above the line, the total below it


def test_an_open_rows_name_is_in_ink_and_a_written_rows_is_muted():
    sheet = [None, 4, None, 12, None, None, 23, None, 0, None, None, None]
    frame = render_frame(YACHT, [3, 3, 4, 5, 5], 1, sheet, 2)
    for (top, bottom), points in zip(sheet_rows(frame), sheet):
        name = frame[top : bottom + 1, 20:160]
        assert painted(name, INK).any() == (points is None) and painted(name, MUTED).any() == (points is not None)


def test_a_die_of_more_than_six_faces_shows_its_number_in_its_middle():
    rules = RuleSet("eight_faced", categories=YACHT.categories[:8], num_dice=4, num_faces=8, rolls_per_turn=2)
    frame = render_frame(rules, [1, 7, 8, 8], 1, [None] * 8, 1)
    for (top, bottom, left, right), face in zip(dice_boxes(frame), [1, 7, 8, 8]):
        inked = painted(frame[top + 4 : bottom - 3, left + 4 : right - 3], INK)
        rows, columns = np.flatnonzero(inked.any(axis=1)), np.flatnonzero(inked.any(axis=0))
        middle = (bottom - top) / 2 - 4
        assert abs((rows[0] + rows[-1]) / 2 - middle) <= 3 and abs((columns[0] + columns[-1]) / 2 - middle) <= 3
        if face > 6:  # a number: one glyph wider than a pip, not pips at the corners
            assert len(blobs(inked)) <= 2 and columns[-1] - columns[0] > (right - left) // 5


def test_a_title_is_written_before_the_turn_and_none_leaves_the_header_as_it_was():
    plain = render_frame(YACHT, [1, 2, 3, 4, 5], 1, [None] * 12, 1)
    assert np.array_equal(render_frame(YACHT, [1, 2, 3, 4, 5], 1, [None] * 12, 1, title=""), plain)
    titled = render_frame(YACHT, [1, 2, 3, 4, 5], 1, [None] * 12, 1, title="game 7")
    text = lambda frame: np.flatnonzero(painted(frame[HEADER_BAND, : FRAME_WIDTH // 2], LIGHT_TEXT).any(axis=0))  # noqa: E731
    assert text(titled)[-1] > text(plain)[-1] + 40  # the turn moved right, after the title
    assert np.array_equal(titled[HEADER_BAND.stop :], plain[HEADER_BAND.stop :])


def test_the_sheets_two_columns_are_divided_by_a_line_and_the_total_is_written_under_the_rows():
    frame = render_frame(YACHT, [1, 2, 3, 4, 5], 1, [None] * 12, 1)
    rows = sheet_rows(frame)
    middle = frame[rows[0][0] : rows[-1][1], FRAME_WIDTH // 2 - 4 : FRAME_WIDTH // 2 + 4]
    assert painted(middle, GRID).all(axis=0).any()  # a vertical line between the columns, all the way down
    column = frame[:, 40:290]
    under = next(r for r in range(rows[-1][1], FRAME_HEIGHT) if painted(column[r], INK).mean() > 0.9)
    total = painted(frame[under + 3 : FRAME_HEIGHT - 14, FRAME_WIDTH // 2 : FRAME_WIDTH - 20], INK)
    assert total.any()  # "Total 0", between the line and the panel's bottom, at the right
