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
    from agents.policies.policy import Policy

    class RerollsDieZero(Policy):  # plays one action, gives no values or probabilities: judged by that action's choice
        def act_batch(self, observations, action_masks):
            return np.ones(len(action_masks), dtype=np.int64)

    # sorted 1 1 3 4 5: re-rolling die 0 (action 1) or die 1 (action 2) keeps 1 3 4 5 either way; re-rolling die 2
    # (action 4) or none (action 0, whose action number is below the policy's) is another choice
    where = positions([(1, 1, 3, 4, 5)] * 4, [2, 1, 4, 0])
    agree, log_p = likeness.agreement_and_likelihood(RerollsDieZero(), where, YACHT)
    assert agree.tolist() == [1.0, 1.0, 0.0, 0.0] and log_p is None  # it gives no probabilities


def action_keeping(hand: int, kept: tuple[int, ...]) -> int:
    """The highest re-roll action of ``hand`` that keeps the dice ``kept``: another action than the lowest where two
    make the same keep, as a person with other habits may press."""
    dice = YACHT.dice
    keep = dice.keep_index[tuple(sorted(kept))]
    return int(np.flatnonzero(dice.keep_after_reroll[hand] == keep)[-1])


def symmetric_people() -> likeness.Positions:
    """A person who always plays a best choice, breaking ties unlike ``optimal``: at every position, the image of
    ``optimal``'s choice at a mirror position of the same value. Only Yacht open, any two faces swapped (the value of
    a keep depends on how many dice show each face, not on which faces); Little and Big Straight open (and Yacht or
    not), the mirror f <-> 7 - f, which swaps the two straights."""
    optimal = solve(YACHT)
    straights = [YACHT.category_names.index(name) for name in ("little_straight", "big_straight")]
    yacht = 1 << YACHT.category_names.index("yacht")
    mirrors = [(yacht, dict(zip(range(1, 7), swapped))) for swapped in swaps()]
    mirror = {f: 7 - f for f in range(1, 7)}
    mirrors += [((1 << straights[0]) | (1 << straights[1]) | extra, mirror) for extra in (0, yacht)]
    decisions: set[tuple[int, int, int, int]] = set()
    for open_bits, faces in mirrors:
        for hand, dice in enumerate(YACHT.dice.hands):
            for rolls_left in range(3):
                action = int(optimal.best_actions_batch(np.array([hand]), rolls_left, open_bits)[0])
                image = YACHT.hand([faces[int(d)] for d in dice])
                if action >= 32:
                    row = action - 32
                    image_row = straights[1 - straights.index(row)] if row in straights and faces == mirror else row
                    decisions.add((image, rolls_left, open_bits, 32 + image_row))
                else:
                    kept = YACHT.dice.keeps[YACHT.dice.keep_after_reroll[hand, action]]
                    decisions.add((image, rolls_left, open_bits, action_keeping(image, tuple(faces[d] for d in kept))))
    hands, rolls_left, open_bits, actions = (np.array(column) for column in zip(*sorted(decisions)))
    q = optimal.q_values_batch(hands, rolls_left, open_bits)
    zeros = np.zeros(len(hands), dtype=np.int64)
    return likeness.Positions(q, hands, rolls_left, open_bits, zeros, zeros, actions, 1)


def swaps():
    """Every transposition of two faces, as the faces 1..6 become."""
    for a in range(1, 7):
        for b in range(a + 1, 7):
            faces = list(range(1, 7))
            faces[a - 1], faces[b - 1] = b, a
            yield faces


def test_a_person_who_always_plays_a_best_choice_matches_the_optimum_everywhere_and_fits_t_zero():
    """Choices equal by a symmetry of the game are tied however their sums round (2 2 or 5 5 toward a Yacht differ
    by 2e-16; scratching Little or Big Straight by 9e-16): ``optimal`` and ``softmax:0`` agree with every decision
    of a person who takes the mirror image of the optimum's choice, and the person's fitted temperature is 0."""
    from yacht_play.report import skill

    where = symmetric_people()
    assert len(where.actions) > 1000
    for name in ("optimal", "softmax:0"):
        agree, log_p = likeness.agreement_and_likelihood(make_policy(name), where, YACHT)
        assert agree.mean() == 1.0, name
    assert (log_p > math.log(0.1)).all()  # softmax:0 splits its probability among the best choices only
    x, chosen = skill.choice_gaps(where.q, where.hands, where.actions, YACHT)
    assert (chosen == 0).all()
    fit = skill.fit_temperature(x, chosen)
    assert fit.mean == 0.0 and fit.low == 0.0


def test_a_probability_tie_for_the_most_probable_choice_counts_one_over_its_size():
    """``random`` is uniform over the actions: after the last roll each of the 12 rows is one action of twelve, so it
    has no single most probable choice, and each person's row counts 1/12 rather than whichever row comes first.
    With two rolls left on sorted 1 1 3 4 5, the keeps holding one 1 are made by two actions each (re-roll either 1):
    those 8 keeps (one 1 and any of 3, 4, 5) tie, at 2/43."""
    rows = positions([(1, 2, 3, 4, 6)] * 12, list(range(32, 44)), rolls_left=0)
    agree, _ = likeness.agreement_and_likelihood(make_policy("random", seed=0), rows, YACHT)
    assert agree.tolist() == [1 / 12] * 12
    hand = YACHT.hand((1, 1, 3, 4, 5))
    keeps = [(1,), (1, 3), (1, 4), (1, 5), (1, 3, 4), (1, 3, 5), (1, 4, 5), (1, 3, 4, 5), (1, 1), (3, 4, 5)]
    rerolls = positions([(1, 1, 3, 4, 5)] * len(keeps) + [(1, 1, 3, 4, 5)], [action_keeping(hand, k) for k in keeps] + [32])
    agree, _ = likeness.agreement_and_likelihood(make_policy("random", seed=0), rerolls, YACHT)
    assert agree.tolist() == [1 / 8] * 8 + [0.0, 0.0, 0.0]


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

    class Spread:  # a policy of probabilities only (a Q-value policy's top choices are read from its Q-values)
        encoding = OptimalPolicy().encoding

        def action_probabilities(self, observations, action_masks):
            p = np.zeros(action_masks.shape)
            p[:, [1, 2]], p[:, 33] = 0.3, 0.4
            return p

    where = positions([(1, 1, 3, 4, 5)] * 3, [2, 1, 33])
    agree, log_p = likeness.agreement_and_likelihood(Spread(), where, YACHT)
    assert agree.tolist() == [1.0, 1.0, 0.0]
    assert log_p == pytest.approx(np.log([0.6, 0.6, 0.4]))


class Certain:
    """Probability 1 on scoring the first row (action 32), 0 on every other action: a policy of probabilities only."""

    def __init__(self):
        from agents.policies.policy import OptimalPolicy

        self.encoding = OptimalPolicy().encoding

    def action_probabilities(self, observations, action_masks):
        p = np.zeros(action_masks.shape)
        p[:, 32] = 1.0
        return p


def test_a_choice_of_probability_zero_counts_at_the_floor_and_the_likelihood_interval_ends_at_zero():
    """Ann takes the policy's certain choice five times (log 1 = 0), Bob five times a choice it never makes (log 0,
    counted as log FLOOR = L): a mean of L/2. Over decisions, five 0s and five Ls have a standard deviation of
    |L| sqrt(10) / 6, so the interval is L/2 +- Z95 |L| / 6; over the two people, the half-width is
    Z95 sqrt(2 * 2 (5 L/2)**2) / 10 = Z95 |L| / 2, whose upper end passes 0, where no log-likelihood can be."""
    z95, floor = 1.959963984540054, math.log(1e-9)
    where = positions([(1, 1, 3, 4, 5)] * 10, [32] * 5 + [33] * 5)
    where.players = 2
    _, log_p = likeness.agreement_and_likelihood(Certain(), where, YACHT)
    assert log_p == pytest.approx([0.0] * 5 + [floor] * 5)
    bands = np.array(["a"] * 10)
    pooled = likeness.likeness_of("certain", Certain(), where, bands, {"a": 2}, YACHT).log_likelihood
    assert (pooled.mean, pooled.low, pooled.high) == pytest.approx(
        (floor / 2, floor / 2 + z95 * floor / 6, floor / 2 - z95 * floor / 6)
    )
    where.people = np.array(["Ann"] * 5 + ["Bob"] * 5)
    entry = likeness.likeness_of("certain", Certain(), where, bands, {"a": 2}, YACHT)
    for clustered in (entry.log_likelihood, entry.by_band[0].log_likelihood):
        assert (clustered.mean, clustered.low, clustered.high) == pytest.approx((floor / 2, floor / 2 * (1 + z95), 0.0))


def test_a_policy_that_plays_alone_is_built_and_one_that_reads_the_table_is_not():
    for name in ("random", "optimal", "softmax:2"):
        policy, note = likeness.build_policy(name, YACHT, None)
        assert policy is not None and note is None, (name, note)
    for name in ("win", "target:200"):  # win plays only at a table; target:T plays alone too, but reads its total
        policy, note = likeness.build_policy(name, YACHT, None)
        assert policy is None and "plays only at a table" in note, name


def registered(monkeypatch, name: str, build) -> None:
    """``name`` a policy of one's own for this test, as :func:`agents.registry.register` adds one."""
    from agents import registry

    monkeypatch.setitem(registry.POLICIES, name, registry.PolicySpec(name, "a test's own", build))


def test_a_policy_that_fails_to_build_is_noted_with_the_first_line_of_why(monkeypatch):
    def unreadable(name, rules, encoding, seed):
        raise OSError("cannot read the model\nthe traceback's second line")

    def silent(name, rules, encoding, seed):
        raise RuntimeError

    registered(monkeypatch, "unreadable", unreadable)
    registered(monkeypatch, "silent", silent)
    assert likeness.build_policy("unreadable", YACHT, None) == (None, "OSError: cannot read the model")
    policy, note = likeness.build_policy("silent", YACHT, None)
    assert policy is None and note.startswith("RuntimeError")


def test_a_policy_that_cannot_choose_is_noted_under_its_label_and_only_softmax_fit_names_a_temperature(monkeypatch):
    """A policy whose probabilities are NaN, or which raises where it must choose (the guard's fallback then plays
    for it), is noted rather than measured; the note names it by its label. Measured policies other than
    ``softmax:fit`` have no temperature, whatever their names."""
    from agents.policies.policy import OptimalPolicy, Policy

    class NanProbabilities(Policy):
        name = "nan-probabilities"

        def act_batch(self, observations, action_masks):
            return np.full(len(action_masks), 32, dtype=np.int64)

        def action_probabilities(self, observations, action_masks):
            return np.full(action_masks.shape, np.nan)

    class Raises(Policy):
        name = "raises"

        def act_batch(self, observations, action_masks):
            raise RuntimeError("lost its way")

    class Zigzag(OptimalPolicy):
        name = "zigzag"

    registered(monkeypatch, "nan-probabilities", lambda name, rules, encoding, seed: NanProbabilities(rules, encoding))
    registered(monkeypatch, "raises", lambda name, rules, encoding, seed: Raises(rules, encoding))
    registered(monkeypatch, "zigzag", lambda name, rules, encoding, seed: Zigzag(rules, encoding))
    where = positions([(1, 2, 3, 4, 5)], [0])
    where.actions[0] = int(np.argmax(where.q[0]))  # the person plays the optimum's choice
    names = [("Nan", "nan-probabilities"), ("Raiser", "raises"), ("Zig", "zigzag"), ("Best", "optimal")]
    names += [("Fit", likeness.FIT)]
    table = likeness.likeness_table(names, where, np.array(["b"]), {"b": 1}, YACHT, 1.5)
    nan, raiser = table[0], table[1]
    assert isinstance(nan, PolicyNotMeasured) and nan.note.startswith("policy Nan gives no probabilities at ")
    assert isinstance(raiser, PolicyNotMeasured) and raiser.note.startswith("policy Raiser could not choose at ")
    assert raiser.note.endswith(": lost its way")
    assert [(row.policy, row.temperature) for row in table[2:]] == [("Zig", None), ("Best", None), ("Fit", 1.5)]
    assert [row.top1.mean for row in table[2:]] == [1.0, 1.0, 1.0]  # each plays a best choice
