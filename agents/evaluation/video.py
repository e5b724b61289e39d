"""Videos of policies playing ``Yacht-v0``: gymnasium's ``RecordVideo`` on ``render_mode="rgb_array"``.

    python -m agents.evaluate --video videos/ --policy greedy --policy optimal --video-games 3

Needs the ``video`` extra (moviepy, which brings its own ffmpeg): ``pip install "yacht-rl[video]"``.
"""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym

from agents.registry import make_policy


def video_prefix(policy_name: str) -> str:
    """A file-name-safe prefix: ``ppo:models/ppo.safetensors`` -> ``ppo-ppo``, ``ppo:yacht`` -> ``ppo-yacht``."""
    if policy_name.startswith("ppo:"):
        policy_name = "ppo-" + Path(policy_name[len("ppo:") :]).stem
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", policy_name)


def record_games(policy_names: list[str], folder, games: int = 3, seed: int = 0, rules=None) -> list[Path]:
    """Record ``games`` games (seeds ``seed ..``) of each policy under ``rules`` (name or RuleSet) as MP4 files in ``folder``."""
    try:
        import moviepy  # noqa: F401
    except ImportError:
        raise ValueError('recording videos needs moviepy: pip install "yacht-rl[video]"') from None
    folder = Path(folder)
    written = []
    for name in dict.fromkeys(policy_names):
        policy = make_policy(name, rules=rules, seed=seed)
        env = gym.make("Yacht-v0", render_mode="rgb_array", observation_encoding=policy.encoding.name, rules=policy.rules)
        prefix = video_prefix(name)
        env = gym.wrappers.RecordVideo(
            env, str(folder), episode_trigger=lambda episode: True, name_prefix=prefix, disable_logger=True
        )
        for game in range(games):
            observation, info = env.reset(seed=seed + game)
            done = False
            while not done:
                action = policy.act(observation, info["action_mask"])
                observation, _, terminated, truncated, info = env.step(action)
                done = terminated or truncated
        env.close()
        written += [folder / f"{prefix}-episode-{episode}.mp4" for episode in range(games)]
    return written
