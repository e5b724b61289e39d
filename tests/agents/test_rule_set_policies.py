"""The DP's policies play the envs of every rule set with bonuses to the solver's own figures."""

from __future__ import annotations

import numpy as np
import pytest

from agents.registry import make_policy
from agents.solvers import optimal
from yacht_env.rules import RULE_SETS, rule_set
from yacht_env.vector_env import YachtVectorEnv

SHEET_NAMES = [name for name, rules in RULE_SETS.items() if rules.has_bonus_or_joker]


@pytest.mark.parametrize("name", SHEET_NAMES)
def test_the_optimal_policy_plays_the_env_to_the_solvers_expected_score(name):
    """The DP's expected score is reached in the env: the two agree on every rule, bonuses included."""
    rules = rule_set(name)
    n = 3000
    venv = YachtVectorEnv(n, rules=rules, observation_encoding="features")
    policy = make_policy("optimal", rules=rules, encoding="features")
    obs, infos = venv.reset(seed=7)
    totals = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    while not done.all():
        obs, rewards, terminated, truncated, infos = venv.step(policy.act_batch(obs, infos["action_mask"]))
        totals += np.where(done, 0.0, rewards)
        done |= terminated | truncated
    expected = optimal.expected_score(rules)
    standard_error = totals.std(ddof=1) / np.sqrt(n)
    # 4 standard errors: a wrong rule (a missed bonus, a wrong joker) moves the mean by far more.
    assert abs(totals.mean() - expected) < 4 * standard_error, (totals.mean(), expected, standard_error)
