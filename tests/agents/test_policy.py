"""The policy interface and the baselines (agents.policies.policy): one observation or a batch, flat or dict, legal
actions only, random's uniform choice and seeding, greedy's and optimal's choices worked out from the rules."""

from __future__ import annotations

import numpy as np
import pytest

from agents.policies.policy import (
    GreedyPolicy,
    OptimalPolicy,
    Policy,
    PolicyOutputError,
    RandomPolicy,
    describe_position,
)
from yacht_env.actions import ActionLayout
from yacht_env.encoding import make_encoding
from yacht_env.rules import YACHT, rule_set

LAYOUT = ActionLayout(YACHT)
NAMES = list(YACHT.category_names)


def position(dice, rolls_left, open_rows, encoding="flat", rules=YACHT, upper_total=0):
    """One observation of ``dice`` with ``rolls_left`` and the rows named open, and its mask."""
    hand = rules.dice.hand_index[tuple(sorted(dice))]
    open_bits = sum(1 << list(rules.category_names).index(name) for name in open_rows)
    observation = make_encoding(encoding, rules).encode(hand, rolls_left, open_bits, upper_total)
    return observation, ActionLayout(rules).legal_mask(rolls_left, open_bits).copy()


def test_random_plays_uniformly_over_the_legal_actions_and_its_seed_replays_it():
    observation, mask = position([1, 2, 3, 4, 6], 2, ["ones", "yacht", "choice"])
    observations = np.repeat(np.asarray(observation)[None], 30_000, axis=0)
    masks = np.repeat(mask[None], 30_000, axis=0)
    policy = RandomPolicy(seed=4)
    actions = policy.act_batch(observations, masks)
    legal = np.flatnonzero(mask)
    assert set(actions) == set(legal)  # 34 legal actions, every one drawn
    counts = np.bincount(actions, minlength=LAYOUT.num_actions)[legal]
    assert abs(counts / 30_000 - 1 / len(legal)).max() < 0.01
    policy.reset(4)
    assert (policy.act_batch(observations, masks) == actions).all()
    assert not (RandomPolicy(seed=5).act_batch(observations, masks) == actions).all()
    probabilities = policy.action_probabilities(observations[:2], masks[:2])
    assert (probabilities[:, legal] == 1 / len(legal)).all() and probabilities.sum() == 2.0
    assert (probabilities[:, mask == 0] == 0).all()


@pytest.mark.parametrize("encoding", ["flat", "dict"])
def test_act_takes_one_observation_flat_or_dict(encoding):
    observation, mask = position([5, 5, 5, 5, 5], 0, ["fives", "yacht"], encoding)
    assert OptimalPolicy(encoding=encoding).act(observation, mask) == LAYOUT.score_action(NAMES.index("yacht"))
    action = RandomPolicy(encoding=encoding, seed=0).act(observation, mask)
    assert type(action) is int and mask[action]


def test_greedy_scores_the_row_worth_most_now_the_lowest_of_equals():
    observation, mask = position([2, 2, 3, 3, 3], 0, ["twos", "threes", "full_house", "choice"])
    # twos 4, threes 9, full house and choice 13 each (Yacht's full house scores the dice): the first of the most
    points = {row: YACHT.score([2, 2, 3, 3, 3], row) for row in ("twos", "threes", "full_house", "choice")}
    best = max(points.values())
    first_best = min(NAMES.index(row) for row, value in points.items() if value == best)
    assert GreedyPolicy().act(observation, mask) == LAYOUT.score_action(first_best)


def test_optimal_keeps_a_four_of_a_kind_for_a_yacht_with_every_row_open():
    observation, mask = position([6, 6, 6, 6, 1], 2, NAMES)
    action = OptimalPolicy().act(observation, mask)
    assert LAYOUT.describe(action, dice=[1, 6, 6, 6, 6]) == "re-roll positions 1 (dice 1)"


def test_optimal_reads_the_upper_subtotal_under_bonus_rules():
    yahtzee = rule_set("yahtzee")
    # three threes, threes and chance open: with 54 in the upper rows the 9 points reach the bonus (35) in threes
    near, mask = position([3, 3, 3, 5, 6], 0, ["threes", "chance"], rules=yahtzee, upper_total=54)
    far, _ = position([3, 3, 3, 5, 6], 0, ["threes", "chance"], rules=yahtzee, upper_total=0)
    layout = ActionLayout(yahtzee)
    names = list(yahtzee.category_names)
    policy = OptimalPolicy(rules=yahtzee)
    assert policy.act(near, mask) == layout.score_action(names.index("threes"))
    q_near, q_far = (policy.q_values(np.asarray(x)[None], mask[None])[0] for x in (near, far))
    threes = layout.score_action(names.index("threes"))
    assert q_near[threes] - q_far[threes] == pytest.approx(35)  # the bonus, reached only from 54


def test_q_values_are_minus_infinity_where_the_mask_forbids_even_a_move_the_rules_allow():
    observation, mask = position([1, 2, 3, 4, 5], 1, ["ones", "choice"])
    q = OptimalPolicy().q_values(np.asarray(observation)[None], mask[None])[0]
    assert np.isneginf(q[mask == 0]).all() and np.isfinite(q[mask == 1]).all()
    only_ones = np.zeros_like(mask)
    only_ones[LAYOUT.score_action(0)] = 1  # a mask narrower than the rules: scoring ones only
    q = OptimalPolicy().q_values(np.asarray(observation)[None], only_ones[None])[0]
    assert np.isfinite(q).sum() == 1 and OptimalPolicy().act(observation, only_ones) == LAYOUT.score_action(0)


class FirstLegal(Policy):
    """A policy of the interface that keeps the shapes it is asked about."""

    name = "first-legal"

    def __init__(self, encoding):
        super().__init__(encoding=encoding)
        self.seen = []

    def act_batch(self, observations, action_masks):
        shapes = {k: np.shape(v) for k, v in observations.items()} if isinstance(observations, dict) else np.shape(observations)
        self.seen.append((shapes, np.shape(action_masks)))
        return np.argmax(np.asarray(action_masks) != 0, axis=1)


@pytest.mark.parametrize("encoding", ["flat", "dict"])
def test_act_hands_the_policy_a_batch_of_one(encoding):
    observation, mask = position([1, 1, 2, 3, 4], 2, ["ones", "yacht"], encoding)
    policy = FirstLegal(encoding)
    assert policy.act(observation, mask) == 1
    ((shapes, mask_shape),) = policy.seen
    assert mask_shape == (1, LAYOUT.num_actions)
    if encoding == "dict":
        assert shapes == {key: (1, *np.shape(value)) for key, value in observation.items()}
    else:
        assert shapes == (1, *np.shape(observation))


def test_a_position_reads_as_its_dice_rolls_left_and_open_rows():
    encoding = make_encoding("flat", YACHT)
    observation, _ = position([6, 1, 3, 3, 2], 1, ["twos", "choice"])
    assert describe_position(encoding, np.asarray(observation)[None], 0) == "dice 1 2 3 3 6, 1 rolls left, open rows twos, choice"
    observation, _ = position([6, 1, 3, 3, 2], 0, [])
    assert describe_position(encoding, np.asarray(observation)[None], 0).endswith("0 rolls left, open rows none")


def test_a_policy_output_error_is_a_value_error_that_keeps_its_row():
    error = PolicyOutputError("NaN at a position", row=3)
    assert isinstance(error, ValueError) and error.row == 3 and str(error) == "NaN at a position"
    assert PolicyOutputError("x").row is None


def test_a_policy_shows_its_name_and_takes_the_default_rules_and_encoding():
    assert repr(RandomPolicy()) == "<RandomPolicy 'random'>" and repr(GreedyPolicy()) == "<GreedyPolicy 'greedy'>"
    assert OptimalPolicy.name == "optimal" and Policy.name == "policy"
    policy = RandomPolicy()
    assert policy.rules == YACHT and policy.encoding.name == "flat"
    assert Policy.reset(policy, seed=3) is None  # the interface's reset: no randomness to re-seed
