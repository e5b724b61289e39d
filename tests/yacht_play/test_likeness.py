"""Each policy's likeness to the people, on hand-made positions whose agreement and likelihood are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.policies import softmax
from agents.registry import make_policy
from agents.solvers.optimal import solve
from yacht_env.rules import rule_set
from yacht_play.report import likeness
from yacht_play.report.results import PolicyNotMeasured

YACHT = rule_set("yacht")
ALL_OPEN = (1 << YACHT.num_rows) - 1


def positions(dice_list, actions, rolls_left=2):
    hands = np.array([YACHT.hand(d) for d in dice_list])
    n = len(hands)
    q = solve(YACHT).q_values_batch(hands, rolls_left, ALL_OPEN)
    zeros = np.zeros(n, dtype=np.int64)
    return likeness.Positions(q, hands, np.full(n, rolls_left), np.full(n, ALL_OPEN), zeros, zeros, np.array(actions), 1)


def test_keeping_the_same_dice_by_another_action_agrees():
    from agents.policies.policy import OptimalPolicy

    class RerollsDieZero(OptimalPolicy):
        def act_batch(self, observations, action_masks):
            return np.ones(len(action_masks), dtype=np.int64)

    # sorted 1 1 3 4 5: re-rolling die 0 (action 1) or die 1 (action 2) keeps 1 3 4 5 either way
    where = positions([(1, 1, 3, 4, 5)] * 3, [2, 1, 4])
    agree, log_p = likeness.agreement_and_likelihood(RerollsDieZero(), where, YACHT)
    assert agree.tolist() == [1.0, 1.0, 0.0] and log_p is None  # it gives no probabilities


def test_random_and_softmax_likelihoods_are_their_choice_probabilities():
    dice = [(1, 1, 3, 4, 5), (2, 2, 2, 6, 6)]
    where = positions(dice, [1, 33])  # re-roll die 0 (one of two actions keeping 1 3 4 5), score twos
    _, log_p = likeness.agreement_and_likelihood(make_policy("random", seed=0), where, YACHT)
    assert log_p == pytest.approx([math.log(2 / 43), math.log(1 / 43)])  # 31 re-rolls and 12 rows are legal
    policy = make_policy("softmax:1.5")
    agree, log_p = likeness.agreement_and_likelihood(policy, where, YACHT)
    optimal, _ = likeness.agreement_and_likelihood(make_policy("optimal"), where, YACHT)
    assert agree.tolist() == optimal.tolist()  # its top-1 is its most probable choice: the optimum's
    p = softmax.probabilities(where.q, where.hands, YACHT, 1.5)
    assert log_p == pytest.approx(np.log([p[0, 1], p[1, 33]]))


def test_a_policy_that_cannot_play_alone_is_noted_not_measured():
    where = positions([(1, 2, 3, 4, 5)], [32])
    table = likeness.likeness_table([("win", "win"), ("x", "no-such-policy")], where, np.array(["b"]), {"b": 1}, YACHT, 1.0)
    assert "plays only at a table" in table[0].note and isinstance(table[0], PolicyNotMeasured)
    assert table[1].note and isinstance(table[1], PolicyNotMeasured)
    fit = likeness.likeness_table([(likeness.FIT, likeness.FIT)], where, np.array(["b"]), {"b": 1}, YACHT, None)
    assert "no person with a finite fitted temperature" in fit[0].note


def test_figures_overall_and_by_band():
    where = positions([(1, 1, 3, 4, 5)] * 12, [int(np.argmax(positions([(1, 1, 3, 4, 5)], [1]).q[0]))] * 6 + [1] * 6)
    bands = np.array(["a"] * 6 + ["b"] * 6)
    entry = likeness.likeness_of("optimal", make_policy("optimal"), where, bands, {"a": 1, "b": 1}, YACHT)
    assert entry.top1.mean == pytest.approx(0.5) and entry.decisions == 12
    assert [b.top1.mean for b in entry.by_band] == [1.0, 0.0]


def test_intervals_count_each_person_once():
    """Two people of 12 decisions each, one always playing the optimum's choice and one never: over decisions the
    mean looks well measured, over people it is a sample of two."""
    best = int(np.argmax(positions([(1, 1, 3, 4, 5)], [1]).q[0]))
    where = positions([(1, 1, 3, 4, 5)] * 24, [best] * 12 + [1] * 12)
    where.players = 2
    bands = np.array(["a"] * 24)
    pooled = likeness.likeness_of("optimal", make_policy("optimal"), where, bands, {"a": 2}, YACHT).top1
    where.people = np.array(["Ann"] * 12 + ["Bob"] * 12)
    clustered = likeness.likeness_of("optimal", make_policy("optimal"), where, bands, {"a": 2}, YACHT).top1
    assert pooled.mean == clustered.mean == pytest.approx(0.5)
    assert pooled.high - pooled.low < 0.5
    assert (clustered.low, clustered.high) == (0.0, 1.0)  # 0.5 +- 1.96 * 0.5, clipped


def test_the_interval_over_people_is_the_cluster_robust_one():
    agree = np.array([1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 1, 1], dtype=float)
    people = np.array(["a"] * 4 + ["b"] * 6 + ["c"] * 4)
    from yacht_play.report.estimates import estimate_over_people

    e = estimate_over_people(agree, people, "decisions")
    mean = agree.mean()
    sums = [np.sum(agree[people == p] - mean) for p in ("a", "b", "c")]
    half = 1.959963984540054 * math.sqrt(3 / 2 * sum(t * t for t in sums)) / len(agree)
    assert e.mean == pytest.approx(mean) and e.players == 3
    assert (e.low, e.high) == pytest.approx((mean - half, mean + half))
    one = estimate_over_people(agree, np.array(["a"] * 14), "decisions")
    assert one.low is None and "one person only" in one.note


def test_a_policy_s_top_choice_is_the_keep_it_gives_most_probability_over_every_action_that_makes_it():
    """Re-rolling die 0 or die 1 of 1 1 3 4 5 keeps 1 3 4 5 either way: 0.3 on each is a choice of 0.6, above the
    0.4 on scoring twos, so a person who keeps 1 3 4 5 by either action makes the policy's top choice."""
    from agents.policies.policy import OptimalPolicy

    class Spread(OptimalPolicy):
        def action_probabilities(self, observations, action_masks):
            p = np.zeros(action_masks.shape)
            p[:, [1, 2]], p[:, 33] = 0.3, 0.4
            return p

    where = positions([(1, 1, 3, 4, 5)] * 3, [2, 1, 33])
    agree, log_p = likeness.agreement_and_likelihood(Spread(), where, YACHT)
    assert agree.tolist() == [1.0, 1.0, 0.0]
    assert log_p == pytest.approx(np.log([0.6, 0.6, 0.4]))
