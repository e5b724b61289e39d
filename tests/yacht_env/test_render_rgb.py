"""``render_mode="rgb_array"``: frames of every env, the drawing itself, and videos."""

from __future__ import annotations

import importlib.util
import sys

import gymnasium as gym
import numpy as np
import pytest

from agents.registry import make_opponents
from yacht_env import YachtEnv
from yacht_env.render_rgb import FRAME_HEIGHT, FRAME_WIDTH, HELD, Seat, held_dice, render_frame
from yacht_env.rules import CATEGORIES, YACHT
from yacht_env.table.env import YachtTableEnv
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
