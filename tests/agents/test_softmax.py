"""The softmax over Q* (``softmax:T``): choices are distinct keeps and rows, seeded draws, the simulated people's rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.policies import softmax
from agents.registry import make_policy, make_table_policy, policy_names
from agents.solvers.optimal import solve
from yacht_env.actions import ActionLayout
from yacht_env.rules import rule_set

YACHT = rule_set("yacht")


def position(dice=(1, 1, 3, 4, 5), rolls_left=2, rules=YACHT):
    hand = rules.hand(dice)
    q = solve(rules).q_values_batch(np.array([hand]), rolls_left, (1 << rules.num_rows) - 1)
    return q, np.array([hand])


def test_two_rerolls_keeping_the_same_dice_are_one_choice():
    q, hands = position()
    lowest = softmax.choice_actions(YACHT)[hands[0]]
    # sorted dice 1 1 3 4 5: re-rolling die 0 (action 1) or die 1 (action 2) keeps 1 3 4 5 either way
    assert lowest[1] == lowest[2] == 1 and lowest[3] == 3 and lowest[4] == 4
    stands = softmax.choosable(q, hands, YACHT)[0]
    distinct_keeps = len({YACHT.dice.keep_after_reroll[hands[0], a] for a in range(1, 32)})
    assert stands.sum() == distinct_keeps + YACHT.num_rows and not stands[2] and not stands[0]


def test_probabilities_are_the_softmax_over_the_distinct_choices():
    q, hands = position()
    p = softmax.probabilities(q, hands, YACHT, 2.0)[0]
    stands = softmax.choosable(q, hands, YACHT)[0]
    weights = np.exp((q[0][stands] - q[0][stands].max()) / 2.0)
    assert p[stands] == pytest.approx(weights / weights.sum()) and p[~stands].sum() == 0
    # at temperature 0 the optimum, as optimal plays it (the lowest best action)
    assert softmax.probabilities(q, hands, YACHT, 0.0)[0].argmax() == int(np.argmax(q[0]))
    assert softmax.choose(q, hands, YACHT, 0.0, np.random.default_rng(0))[0] == int(np.argmax(q[0]))


def test_at_temperature_zero_the_best_choices_share_the_probability_and_the_lowest_is_played():
    """Only Yacht open, 2 2 5 5 6: keeping the 2s or the 5s is worth the same (any two faces are), though the sums
    round apart; the limit of the softmax as T falls to 0 gives each half, and the rule plays the lower action, as
    ``optimal`` does."""
    hand = YACHT.hand((2, 2, 5, 5, 6))
    q = solve(YACHT).q_values_batch(np.array([hand]), 2, 1 << YACHT.category_names.index("yacht"))
    keep_fives, keep_twos = 0b10011, 0b11100  # re-roll dice 0, 1, 4 or 2, 3, 4 of the sorted dice
    assert q[0, keep_fives] != q[0, keep_twos]
    p = softmax.probabilities(q, np.array([hand]), YACHT, 0.0)[0]
    assert p[keep_fives] == p[keep_twos] == 0.5 and p.sum() == 1.0
    for temperature in (1e-3, 1e-6):  # the limit it is: the same split just above 0
        p = softmax.probabilities(q, np.array([hand]), YACHT, temperature)[0]
        assert p[[keep_fives, keep_twos]] == pytest.approx([0.5, 0.5])
    assert softmax.choose(q, np.array([hand]), YACHT, 0.0, np.random.default_rng(0))[0] == keep_fives
    best = softmax.best_choices(q, np.array([hand]), YACHT)[0]
    assert np.flatnonzero(best).tolist() == [keep_fives, keep_twos]


def test_the_draws_follow_the_probabilities():
    q, hands = position()
    p = softmax.probabilities(q, hands, YACHT, 3.0)
    draws = softmax.sample(np.repeat(p, 20000, axis=0), np.random.default_rng(1))
    frequencies = np.bincount(draws, minlength=q.shape[1]) / len(draws)
    assert np.abs(frequencies - p[0]).max() < 0.015 and frequencies[~softmax.choosable(q, hands, YACHT)[0]].sum() == 0


def test_a_draw_is_in_proportion_to_the_weights_whatever_their_sum():
    draws = softmax.sample(np.tile([[1.0, 0.0, 3.0]], (20000, 1)), np.random.default_rng(2))
    frequencies = np.bincount(draws, minlength=3) / len(draws)
    assert frequencies[1] == 0 and abs(frequencies[0] - 0.25) < 0.015 and abs(frequencies[2] - 0.75) < 0.015


def test_the_policy_plays_the_rule_at_the_hands_it_is_shown():
    policy = softmax.SoftmaxPolicy(2.0, seed=7)
    hands = np.array([YACHT.hand((1, 1, 3, 4, 5)), YACHT.hand((2, 2, 2, 6, 6))] * 100)
    observations = policy.encoding.encode_batch(hands, np.array([2, 1] * 100), np.full(200, 4095))
    masks = ActionLayout(YACHT).legal_masks[1, 4095][None].repeat(200, axis=0)
    q = policy.q_values(observations, masks)
    expected = softmax.probabilities(q, hands, YACHT, 2.0)
    assert ((expected[:2] > 0).sum(axis=1) < YACHT.num_rows + 31).all()  # pairs: fewer choices than actions
    np.testing.assert_array_equal(policy.action_probabilities(observations, masks), expected)
    expected_actions = softmax.choose(q, hands, YACHT, 2.0, np.random.default_rng(7))
    np.testing.assert_array_equal(policy.act_batch(observations, masks), expected_actions)


def test_softmax_is_a_policy_everywhere_seeded_and_reproducible():
    assert "softmax:T" in policy_names()
    env_actions = []
    for seed in (5, 5, 6):
        policy = make_policy("softmax:4", seed=seed)
        hands = np.array([YACHT.hand((1, 1, 3, 4, 5))] * 50)
        observation = policy.encoding.encode_batch(hands, np.full(50, 2), np.full(50, 4095))
        masks = ActionLayout(YACHT).legal_masks[1, 4095][None].repeat(50, axis=0)
        env_actions.append(policy.act_batch(observation, masks).tolist())
    assert env_actions[0] == env_actions[1] != env_actions[2]
    assert len(set(env_actions[0])) > 3  # at 4 points it spreads over several choices
    assert make_table_policy("softmax:0", 2).name == "softmax:0"


def test_the_policy_plays_bonus_rules_on_the_sheet_state():
    rules = rule_set("yahtzee")
    policy = make_policy("softmax:0", rules=rules)
    optimal = make_policy("optimal", rules=rules)
    rng = np.random.default_rng(0)
    n = 64
    hands, rolls_left = rng.integers(0, rules.dice.num_hands, n), rng.integers(1, 3, n)
    obs = policy.encoding.encode_batch(hands, rolls_left, np.full(n, 8191), np.zeros(n, dtype=np.int64))  # a new sheet
    masks = ActionLayout(rules).legal_masks[1, 8191][None].repeat(n, axis=0)
    assert (policy.act_batch(obs, masks) == optimal.act_batch(obs, masks)).all()


@pytest.mark.parametrize("bad", ["softmax:", "softmax:-1", "softmax:nan", "softmax:inf", "softmax:x", "softmax:fit"])
def test_a_bad_temperature_is_one_clear_line(bad):
    with pytest.raises(ValueError) as error:
        make_policy(bad)
    assert "\n" not in str(error.value) and ("softmax" in str(error.value) or "unknown policy" in str(error.value))


def test_check_temperature():
    assert softmax.check_temperature(0) == 0.0 and softmax.check_temperature("2.5") == 2.5
    for bad in (-0.1, math.inf, math.nan, True, None):
        with pytest.raises(ValueError, match="temperature must be a number >= 0"):
            softmax.check_temperature(bad)
