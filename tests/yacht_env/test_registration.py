"""What importing yacht_env gives: its names, and the Gymnasium ids of the family (each once, however often the
package is imported), each making the env of its rule set, singly and vectorized."""

from __future__ import annotations

import importlib
import warnings

import gymnasium as gym
import pytest
from gymnasium.envs.registration import registry

import yacht_env
from yacht_env.rules import rule_set


def test_the_package_names_what_its_docstring_shows():
    assert yacht_env.score([4, 4, 4, 4, 1], "four_of_a_kind") == 17
    shown = {"YachtEnv", "score", "RuleSet", "Category", "ActionLayout", "GameOverError", "IllegalActionError", "YACHT"}
    assert shown <= set(yacht_env.__all__)
    assert all(hasattr(yacht_env, name) for name in yacht_env.__all__)
    assert yacht_env.rules.rule_set("yacht") is yacht_env.YACHT  # the submodule, not a loop variable of that name


@pytest.mark.parametrize("env_id, rules", [("Yacht-v0", "yacht"), ("Yahtzee-v0", "yahtzee"), ("Yatzy-v0", "yatzy")])
def test_each_id_makes_the_env_of_its_rule_set_singly_and_vectorized(env_id, rules):
    spec = registry[env_id]
    assert spec.entry_point == "yacht_env.env:YachtEnv"
    assert spec.vector_entry_point == "yacht_env.vector_env:YachtVectorEnv"
    assert spec.kwargs == ({} if rules == "yacht" else {"rules": rules})
    env = gym.make(env_id)
    assert isinstance(env.unwrapped, yacht_env.YachtEnv) and env.unwrapped.rules == rule_set(rules)
    vector = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    assert type(vector).__name__ == "YachtVectorEnv" and vector.num_envs == 3 and vector.rules == rule_set(rules)
    vector.close()


def test_the_table_env_is_registered():
    spec = registry["YachtTable-v0"]
    assert spec.entry_point == "yacht_env.table.env:YachtTableEnv" and spec.kwargs == {}
    assert type(gym.make("YachtTable-v0").unwrapped).__name__ == "YachtTableEnv"


def test_importing_the_package_again_registers_nothing_twice():
    before = {env_id: registry[env_id] for env_id in ("Yacht-v0", "Yahtzee-v0", "Yatzy-v0", "YachtTable-v0")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium warns when an id is registered over
        importlib.reload(yacht_env)
    assert all(registry[env_id] is spec for env_id, spec in before.items())
