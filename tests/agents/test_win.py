"""The pieces of the ``win`` and ``target:T`` policies against values worked out by hand.

Final-score pmfs are the points-to-come pmfs moved up by the totals; the tie-break keeps the best
legal actions and lets the expected score choose among them; the checks on the arguments name the
allowed ranges. Positions use a reduced game (3 dice, 3 faces, 4 rows) whose DP is tiny.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agents.policies.table_reading import best_with_fallback
from agents.policies.win import TargetPolicy, parse_target
from agents.solvers.target import max_total
from agents.solvers.win_chances import kept_per_turn, shifted, win_probabilities
from tests.agents.small_games import MINI
from yacht_env.rules import YACHT

TOP = max_total(MINI)  # 3 + 6 + 9 + 10 = 28
YACHT_ROW = 3
FIRST_SCORE_ACTION = MINI.dice.num_rerolls  # actions 1 .. 7 reroll the dice whose bits are set (sorted hand)


# -- final-score pmfs -------------------------------------------------------------------------------


@st.composite
def pmfs_and_totals(draw):
    """Points-to-come rows of one width, each with a total that keeps it on the sheet."""
    width = draw(st.integers(1, 8))
    rows = draw(st.integers(1, 3))
    to_come = [draw(st.lists(st.floats(0.0, 1.0), min_size=width, max_size=width)) for _ in range(rows)]
    totals = [draw(st.integers(0, width - 1)) for _ in range(rows)]
    return to_come, totals


@given(case=pmfs_and_totals())
@example(case=([[0.0, 0.0, 1.0]], [0]))  # all the mass on the top score, nothing scored yet
@example(case=([[0.25, 0.0, 0.75], [0.5, 0.5, 0.0]], [0, 2]))
def test_final_score_pmf_is_the_points_to_come_moved_up_by_the_total(case):
    to_come, totals = case
    width = len(to_come[0])
    got = shifted(np.array([to_come]), np.array([totals]), width)
    assert got.shape == (1, len(to_come), width)
    for j, (pmf, t) in enumerate(zip(to_come, totals)):
        want = [pmf[z - t] if z >= t else 0.0 for z in range(width)]
        assert got[0, j].tolist() == want


# -- the tie-break ------------------------------------------------------------------------------------


def reference_choice(q, mask, fallback, tolerance):
    """The legal action of highest fallback (lowest index among equals) among those within ``tolerance`` of the best."""
    legal = [a for a in range(len(q)) if mask[a]]
    best = max(q[a] for a in legal)
    near = [a for a in legal if q[a] >= best - tolerance]
    return max(near, key=lambda a: (fallback[a], -a))


NUM_ACTIONS = 4
decisions = st.lists(
    st.tuples(
        st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0]), min_size=NUM_ACTIONS, max_size=NUM_ACTIONS),
        st.lists(st.integers(0, 1), min_size=NUM_ACTIONS, max_size=NUM_ACTIONS).filter(any),
        st.lists(st.integers(-3, 3), min_size=NUM_ACTIONS, max_size=NUM_ACTIONS),
    ),
    min_size=1,
    max_size=6,
)


@given(rows=decisions, tolerance=st.sampled_from([0.0, 1e-12, 0.25]))
@example(rows=[([1.0, 0.5, 0.0, 0.0], [0, 1, 1, 0], [0, 0, 0, 0])], tolerance=1e-12)  # the best q is illegal
@example(rows=[([0.5, -1.0, -0.5, 0.0], [0, 1, 1, 0], [0, 0, 0, 0])], tolerance=0.0)  # every legal q below 0
@example(rows=[([0.25, 0.75, 0.5, 0.0], [1, 1, 1, 1], [0, 0, 0, 0])], tolerance=0.0)  # no tolerance: the plain argmax
@example(rows=[([1.0, 0.75, 0.0, 0.0], [1, 1, 1, 1], [0, 1, 0, 0])], tolerance=0.25)  # exactly at the tolerance
@example(rows=[([0.0, 1.0, 1.0, 0.0], [1, 1, 1, 1], [3, -1, -2, 3])], tolerance=1e-12)  # tie-break values below 0
def test_best_with_fallback_keeps_the_best_legal_actions_and_lets_the_fallback_choose_among_them(rows, tolerance):
    q = np.array([row[0] for row in rows])
    masks = np.array([row[1] for row in rows], dtype=np.int8)
    fallback_values = np.array([row[2] for row in rows], dtype=np.float64)
    asked = []

    def fallback(tied):
        asked.extend(tied.tolist())
        return fallback_values[tied]

    actions = best_with_fallback(q, masks, fallback, tolerance)
    assert actions.dtype == np.int64
    assert actions.tolist() == [reference_choice(*row, tolerance) for row in rows]
    assert all(masks[i, a] for i, a in enumerate(actions))
    # the fallback is asked only about decisions with more than one action near the best
    near = [[m and v >= max(x for x, k in zip(qs, ms) if k) - tolerance for v, m in zip(qs, ms)] for qs, ms, _ in rows]
    assert asked == [i for i, flags in enumerate(near) if sum(flags) > 1]


def test_best_with_fallback_reads_a_boolean_mask():
    q = np.array([[0.9, 0.1, 0.5]])
    assert best_with_fallback(q, np.array([[False, True, True]]), lambda tied: np.zeros((len(tied), 3))).tolist() == [2]


# -- target:T ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [-1, TOP + 1, 10_000, True, 2.5, "5"])
def test_a_target_outside_the_reachable_scores_is_refused_naming_the_range(target):
    with pytest.raises(ValueError, match=rf"a target must be a whole score in 0\.\.{TOP}, got {target!r}"):
        TargetPolicy(target, MINI)


@pytest.mark.parametrize("target", [0, TOP, np.int64(TOP)])
def test_targets_at_both_ends_of_the_score_range_are_accepted(target):
    policy = TargetPolicy(target, MINI)
    assert policy.target == int(target) and type(policy.target) is int
    assert policy.name == f"target:{int(target)}"


@pytest.mark.parametrize("rules", [MINI, YACHT], ids=["mini", "yacht"])
def test_a_target_name_reads_any_whole_score_from_zero_to_the_top_one(rules):
    top = max_total(rules)
    assert parse_target("target:0", rules) == 0
    assert parse_target(f"target:{top}", rules) == top
    assert type(parse_target(f"target:{top}", rules)) is int
    with pytest.raises(ValueError, match=rf"policy 'target:{top + 1}': the target must be a whole score in 0\.\.{top},"):
        parse_target(f"target:{top + 1}", rules)


# -- end values kept per turn --------------------------------------------------------------------------


def test_end_values_are_kept_per_turn_up_to_the_limit_then_kept_afresh():
    """Each turn's row is computed once and reused while kept; a call that would keep more than ``limit`` turns
    empties the store first, so only that call's new turns are kept.
    """
    store: dict = {}
    asked: list = []

    def rows(*turns):
        """Each turn's row is its letter's code point, computed only for the turns not kept."""

        def compute(decisions):
            asked.append(decisions.tolist())
            return np.array([[float(ord(turns[i]))] for i in decisions])

        return kept_per_turn(store, list(turns), compute, (1,), limit=3).ravel().tolist()

    assert rows("a") == [97.0] and asked == [[0]]
    assert rows("b", "a") == [98.0, 97.0] and asked[-1] == [0]  # two turns kept: below the limit
    assert sorted(store) == ["a", "b"]
    assert rows("c") == [99.0] and sorted(store) == ["a", "b", "c"]  # exactly at the limit: still kept
    asked.clear()
    assert rows("a", "b", "c") == [97.0, 98.0, 99.0] and asked == []  # all kept: nothing computed
    assert rows("a", "d") == [97.0, 100.0] and asked == [[1]]  # a fourth turn: the store starts again
    assert sorted(store) == ["d"]


# -- win probabilities for people ----------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, 5, 6])
def test_win_probabilities_refuse_a_table_of_more_than_five_or_of_one(count):
    opponents = [(0, [])] * count
    with pytest.raises(ValueError, match=rf"a table has 1 to 4 opponents, got {count}$"):
        win_probabilities([1, 2, 3], 0, ["yacht"], 0, opponents, rules=MINI)


def test_a_full_table_of_finished_opponents_shares_a_tie_five_ways():
    """Four opponents finished on 0: scoring 0 ties all five (1/5 of the win), any points win outright."""
    opponents = [(0, [])] * 4
    q = win_probabilities([1, 2, 3], 0, ["yacht"], 0, opponents, rules=MINI)
    assert q[FIRST_SCORE_ACTION + YACHT_ROW] == pytest.approx(1 / 5, abs=1e-12)
    q = win_probabilities([3, 3, 3], 0, ["yacht"], 0, opponents, rules=MINI)
    assert q[FIRST_SCORE_ACTION + YACHT_ROW] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    ("total", "opponent_total"),
    [(-1, 0), (TOP + 1, 0), (0, -1), (0, TOP + 1), (True, 0), (0, 2.5)],
)
def test_win_probabilities_refuse_a_total_outside_the_score_range(total, opponent_total):
    bad = total if (total is True or not 0 <= total <= TOP) else opponent_total
    with pytest.raises(ValueError, match=rf"a total must be an integer in 0\.\.{TOP}, got {bad!r}"):
        win_probabilities([1, 2, 3], 0, ["yacht"], total, [(opponent_total, [])], rules=MINI)


def test_an_opponent_finished_on_the_top_score_can_only_be_tied():
    """18 points and the yacht row left against a finished 28: only a yacht (10) ties, worth half the win."""
    q = win_probabilities([3, 3, 3], 1, ["yacht"], 18, [(TOP, [])], rules=MINI)
    assert q[FIRST_SCORE_ACTION + YACHT_ROW] == pytest.approx(0.5, abs=1e-12)
    # rerolling k of the three 3s: all of them must come up 3 again (any triple will do when k = 3)
    for action in range(1, FIRST_SCORE_ACTION):
        k = action.bit_count()
        chance = 3 / 27 if k == 3 else (1 / 3) ** k
        assert q[action] == pytest.approx(chance / 2, abs=1e-12), action
    assert q[0] == -np.inf
    assert np.all(q[FIRST_SCORE_ACTION : FIRST_SCORE_ACTION + YACHT_ROW] == -np.inf)  # closed rows


@pytest.mark.parametrize(
    "total, open_rows, opponent_total, opponent_open, bad, named, most",
    [
        (19, ["ones", "twos", "choice", "yacht"], 0, [], 19, "ones, twos, choice, yacht", 0),  # nothing filled, 19 points
        (28, ["yacht"], 0, [], 28, "yacht", 18),  # ones, twos and choice hold 3 + 6 + 9 at most
        (0, ["yacht"], 11, ["choice", "yacht"], 11, "choice, yacht", 9),  # the opponent's ones and twos hold 9 at most
        (0, ["yacht"], 13, ["twos", "yacht"], 13, "twos, yacht", 12),  # ones and choice filled: 3 + 9 at most
    ],
)
def test_a_total_the_filled_rows_cannot_hold_is_refused_naming_the_open_rows_and_the_most_they_hold(
    total, open_rows, opponent_total, opponent_open, bad, named, most
):
    message = rf"a total of {bad} cannot be scored in the rows filled: with rows {named} open it is at most {most}$"
    with pytest.raises(ValueError, match=message):
        win_probabilities([1, 2, 3], 2, open_rows, total, [(opponent_total, opponent_open)], rules=MINI)


@given(
    open_bits=st.integers(1, 15),
    total=st.integers(0, TOP),
    other_open=st.integers(0, 15),
    other_total=st.integers(0, TOP),
)
@example(open_bits=15, total=TOP, other_open=0, other_total=0)  # every row open on the top score
@example(open_bits=15, total=19, other_open=15, other_total=TOP)
def test_turn_end_values_are_win_shares_for_any_totals(open_bits, total, other_open, other_total):
    """Ending the turn with ``p`` in row ``c`` is worth the chance-weighted win share of each final score, a final
    score above the top one winning outright: the arrays read nothing outside the scores they hold, whatever the totals.
    """
    from agents.solvers.win_chances import win_chances

    arrays = win_chances(MINI)
    curves = arrays.opponent_curves(np.array([[other_total]]), np.array([[other_open]]))
    values = arrays.end_values(np.array([open_bits]), np.array([total]), curves)
    share = lambda final: curves[0, final] if final <= TOP else 1.0  # noqa: E731
    to_come = arrays.distributions.to_come
    for row in range(MINI.num_rows):
        if not open_bits >> row & 1:
            continue
        child = open_bits & ~(1 << row)
        for points in np.unique(MINI.hand_scores[:, row]):
            want = sum(to_come[child, s] * share(total + points + s) for s in range(to_come.shape[1]))
            assert values[0, row, points] == pytest.approx(want, abs=1e-12), (row, points)


@given(open_bits=st.integers(1, 15), total=st.integers(0, TOP))
@example(open_bits=0b1000, total=0)  # only the last row open: the rows below it are filled
@example(open_bits=0b0101, total=TOP)
def test_turn_end_values_hold_nothing_for_filled_rows_or_scores_a_row_cannot_take(open_bits, total):
    from agents.solvers.win_chances import win_chances

    arrays = win_chances(MINI)
    curves = arrays.opponent_curves(np.array([[0]]), np.array([[15]]))
    values = arrays.end_values(np.array([open_bits]), np.array([total]), curves)
    assert values.shape == (1, MINI.num_rows, int(MINI.hand_scores.max()) + 1)
    for row in range(MINI.num_rows):
        can_take = set(np.unique(MINI.hand_scores[:, row]).tolist()) if open_bits >> row & 1 else set()
        for points in range(values.shape[2]):
            if points not in can_take:
                assert values[0, row, points] == 0.0, (row, points)


def test_the_win_policy_sits_at_a_table_of_two_unless_told():
    from agents.policies.win import WinPolicy

    assert WinPolicy(MINI).num_players == 2 and WinPolicy(MINI, num_players=np.int64(5)).num_players == 5


@pytest.mark.parametrize("num_players", [1, 6, True, 2.0, "2", None])
def test_the_win_policy_refuses_a_table_size_it_cannot_play_naming_it(num_players):
    from agents.policies.win import WinPolicy

    with pytest.raises(ValueError) as error:
        WinPolicy(MINI, num_players=num_players)
    assert str(error.value) == f"the win policy plays at tables of 2 to 5 players, got {num_players!r}"


@pytest.mark.parametrize("num_players", [3, 5])
def test_with_the_win_certain_at_any_table_it_plays_for_points_as_the_optimum_does(num_players):
    """Every opponent finished on 0 and the policy ahead on its last turn: every action wins, so the expected score
    decides, as it does for ``optimal``; the policy reads every opponent's total and open rows to know it."""
    from agents.policies.policy import OptimalPolicy
    from agents.policies.win import WinPolicy
    from yacht_env.actions import ActionLayout

    policy, optimal = WinPolicy(MINI, num_players=num_players), OptimalPolicy(MINI)
    layout = ActionLayout(MINI)
    rng = np.random.default_rng(num_players)
    for _ in range(10):
        open_bits = int(rng.integers(1, 16))
        hand, rolls_left = int(rng.integers(0, MINI.dice.num_hands)), int(rng.integers(0, 3))
        totals, table_open = [5] + [0] * (num_players - 1), [open_bits] + [0] * (num_players - 1)
        observation = policy.table_encoding.encode(hand, rolls_left, open_bits, totals, table_open)
        mask = layout.legal_mask(rolls_left, open_bits).copy()
        own = optimal.encoding.encode(hand, rolls_left, open_bits)
        assert policy.act(observation, mask) == optimal.act(own, mask)
