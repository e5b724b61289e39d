"""Videos of policies (``agents.evaluate --video``): file names, and the games each video shows."""

import sys

import gymnasium as gym
import pytest

from agents.evaluation import video


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("greedy", "greedy"),
        ("ppo:models/ppo.safetensors", "ppo-ppo"),
        ("ppo:yacht", "ppo-yacht"),
        ("ppo_like", "ppo_like"),  # only the ppo: prefix names a file
        ("softmax:1.5", "softmax-1.5"),
        ("target:200", "target-200"),
        ("plan:/tmp/a b/run 1.safetensors", "plan-tmp-a-b-run-1.safetensors"),
    ],
)
def test_a_video_s_prefix_is_the_policy_name_made_file_name_safe(name, prefix):
    assert video.video_prefix(name) == prefix


class SeedsPlayed(gym.Wrapper):
    seeds: list = []
    ended: list = []  # whether each game played was played to its end

    def reset(self, *, seed=None, options=None):
        SeedsPlayed.seeds.append(seed)
        SeedsPlayed.ended.append(False)
        return super().reset(seed=seed, options=options)

    def step(self, action):
        observation, reward, terminated, truncated, info = super().step(action)
        SeedsPlayed.ended[-1] = bool(terminated)
        return observation, reward, terminated, truncated, info


def test_each_policy_once_plays_its_games_on_consecutive_seeds_one_video_each(tmp_path, monkeypatch):
    pytest.importorskip("moviepy")
    make = gym.make
    SeedsPlayed.seeds, SeedsPlayed.ended = [], []
    monkeypatch.setattr(video.gym, "make", lambda *args, **kwargs: SeedsPlayed(make(*args, **kwargs)))
    paths = video.record_games(["greedy", "random", "greedy"], tmp_path, games=2, seed=7)
    assert SeedsPlayed.seeds == [7, 8, 7, 8] and SeedsPlayed.ended == [True] * 4  # each game played to its end
    assert paths == [tmp_path / f"{name}-episode-{game}.mp4" for name in ("greedy", "random") for game in (0, 1)]
    assert all(path.stat().st_size > 0 for path in paths)


def test_three_games_by_default_recorded_without_a_progress_bar(tmp_path, capfd):
    pytest.importorskip("moviepy")
    paths = video.record_games(["greedy"], tmp_path / "videos")
    assert paths == [tmp_path / "videos" / f"greedy-episode-{game}.mp4" for game in range(3)]
    assert all(path.exists() for path in paths)
    captured = capfd.readouterr()
    assert "MoviePy" not in captured.out + captured.err and "%" not in captured.out + captured.err


def test_without_moviepy_the_refusal_names_the_extra_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "moviepy", None)  # as if it were not installed
    with pytest.raises(ValueError, match=r'^recording videos needs moviepy: pip install "yacht-rl\[video\]"$'):
        video.record_games(["greedy"], tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_by_default_the_games_are_dealt_from_seed_0(tmp_path):
    pytest.importorskip("moviepy")
    default, zero, one = (
        video.record_games(["greedy"], tmp_path / name, games=1, **seed)
        for name, seed in (("default", {}), ("zero", {"seed": 0}), ("one", {"seed": 1}))
    )
    assert default[0].read_bytes() == zero[0].read_bytes() != one[0].read_bytes()
