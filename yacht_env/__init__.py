"""Yacht for reinforcement learning: the rules as data and the ``Yacht-v0`` Gymnasium env.

>>> import gymnasium as gym, yacht_env
>>> env = gym.make("Yacht-v0")                                    # solitaire: YachtEnv
>>> env = gym.make("Yacht-v0", rules="yatzy")                     # any rule set of yacht_env.rules.RULE_SETS

``Yahtzee-v0`` and ``Yatzy-v0`` are ``Yacht-v0`` with ``rules="yahtzee"`` and ``rules="yatzy"``.
>>> yacht_env.score([4, 4, 4, 4, 1], "four_of_a_kind")
17

``YachtTable-v0`` (:class:`~yacht_env.table.env.YachtTableEnv`) seats the learner at a table
against policy objects; the PettingZoo env is :mod:`yacht_env.yacht_v0` (``yacht_v0.env()``).
This package imports nothing from ``agents`` or from human play.
"""

from gymnasium.envs.registration import register, registry

from yacht_env.actions import ActionLayout, IllegalActionError
from yacht_env.env import GameOverError, YachtEnv
from yacht_env.rules import CATEGORIES, YACHT, Category, RuleSet, score

__all__ = [
    "CATEGORIES",
    "YACHT",
    "ActionLayout",
    "Category",
    "GameOverError",
    "IllegalActionError",
    "RuleSet",
    "YachtEnv",
    "score",
]

if "Yacht-v0" not in registry:
    register(
        id="Yacht-v0",
        entry_point="yacht_env.env:YachtEnv",
        vector_entry_point="yacht_env.vector_env:YachtVectorEnv",
    )
# The Yacht family under its own names: the same env with another rule set (yacht_env.rules.RULE_SETS).
# (The loop's names must not be a submodule's: a name bound here replaces the attribute `yacht_env.rules`.)
for env_id, rule_set_name in (("Yahtzee-v0", "yahtzee"), ("Yatzy-v0", "yatzy")):
    if env_id not in registry:
        register(
            id=env_id,
            entry_point="yacht_env.env:YachtEnv",
            vector_entry_point="yacht_env.vector_env:YachtVectorEnv",
            kwargs={"rules": rule_set_name},
        )
if "YachtTable-v0" not in registry:
    register(id="YachtTable-v0", entry_point="yacht_env.table.env:YachtTableEnv")
